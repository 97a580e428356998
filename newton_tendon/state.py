"""Time-varying simulation data: State (what the solver advances) and Control (what the user commands)."""

from __future__ import annotations

from enum import IntEnum

import warp as wp

from newton_tendon.kernels.cable import TendonHistory
from newton_tendon.kernels.transmission import vec6

from .layout import check_control, check_state, guard_array_assignment, layout_of


class StateFlags(IntEnum):
    """Which state arrays a ``solver.reset`` restores (newton's ``StateFlags``: same names and bits).

    Our solvers restore the body arrays named by the bits; particles and reduced joint coordinates
    have no State arrays here, so their bits select nothing."""

    NONE = 0
    JOINT_Q = 1 << 0
    JOINT_QD = 1 << 1
    BODY_Q = 1 << 2
    BODY_QD = 1 << 3
    PARTICLE_Q = 1 << 4
    PARTICLE_QD = 1 << 5
    BODY_F = 1 << 6
    PARTICLE_F = 1 << 7
    JOINT_F = 1 << 8
    BODY = BODY_Q | BODY_QD
    PARTICLE = PARTICLE_Q | PARTICLE_QD
    JOINT = JOINT_Q | JOINT_QD
    FORCE = BODY_F | PARTICLE_F | JOINT_F
    ALL = BODY | PARTICLE | JOINT | FORCE


class State:
    """Body poses, velocities and applied forces of every world at one instant.

    Solvers read one State and write another (``step(state_in, state_out, ...)``); swap the two
    between steps. Create with ``model.state()``.
    """

    def __init__(self, model):
        dev = model.device
        self._layout = layout_of(model)
        """The layout of the model this state was made for (``newton_tendon.layout``)."""
        self.body_q = wp.clone(model.body_q) if model.body_count else wp.zeros(0, dtype=wp.transform, device=dev)
        """Body frame poses (position [m], quaternion xyzw) in world, shape [body_count], wp.transform."""
        self.body_qd = wp.clone(model.body_qd) if model.body_count else wp.zeros(0, dtype=wp.spatial_vector, device=dev)
        """Body velocities (COM linear [m/s] then angular [rad/s], world), shape [body_count], wp.spatial_vector."""
        self.body_f = wp.zeros(model.body_count, dtype=wp.spatial_vector, device=dev)
        """External wrench (force [N] then torque about the COM [N m], world), shape [body_count],
        wp.spatial_vector. Cleared by ``clear_forces``; solvers only read it. A wrench with a NaN or inf
        component is ignored (counts as zero) for the step."""
        ns, ng, nt = model.tendon_segment_count, model.tendon_guide_count, model.tendon_count
        self.tendon_segment_rest_length = (
            wp.clone(model.tendon_segment_initial_rest_length) if ns else wp.zeros(0, dtype=float, device=dev)
        )
        """Material rest length of each free span [m] (tendon history), shape [tendon_segment_count], float32."""
        self.tendon_segment_rest_residual = wp.zeros(ns, dtype=float, device=dev)
        """Material of each span below the float32 resolution of its rest length [m]: the span holds
        ``rest_length + residual``. Material transfers are compensated through it, so cable moving
        every step over a frictionless guide is conserved over long runs; shape [tendon_segment_count]."""
        self.tendon_guide_active = (
            wp.clone(model.tendon_guide_initial_active) if ng else wp.zeros(0, dtype=wp.int32, device=dev)
        )
        """1 where a guide is part of the current route (dynamic rollers engage/release),
        shape [tendon_guide_count], int32."""
        self.tendon_segment_attachment_local_l = wp.zeros(ns, dtype=wp.vec3, device=dev)
        """Left material point of each span in its guide body's frame [m] (accepted at the last step start),
        shape [tendon_segment_count], wp.vec3."""
        self.tendon_segment_attachment_local_r = wp.zeros(ns, dtype=wp.vec3, device=dev)
        """Right material point of each span in its guide body's frame [m], shape [tendon_segment_count], wp.vec3."""
        self.tendon_guide_winch_paid = wp.zeros(ng, dtype=float, device=dev)
        """Cable paid out at each winch guide so far [m] (what the solver applied of
        ``Control.tendon_guide_winch_length``; 0 at other guides), shape [tendon_guide_count], float32."""
        self.tendon_seeded = wp.zeros(nt, dtype=wp.int32, device=dev)
        """1 once a tendon's history was initialized: ``Model.state()`` seeds it at the model's pose; a
        state built otherwise (all zero) is seeded from the model's baseline at its first step's pose,
        shape [tendon_count], int32."""
        nj, nc = model.joint_count, model.contact_capacity
        self.joint_multiplier = wp.zeros(nj, dtype=wp.spatial_vector, device=dev)
        """Augmented-Lagrangian multipliers of each joint's anchor [N] and orientation [N m] rows at the
        end of the last SolverVBD step (the joint's constraint force; XPBD leaves them zero), shape
        [joint_count], wp.spatial_vector."""
        self.joint_limit_multiplier = wp.zeros(model.joint_dof_count, dtype=wp.vec2, device=dev)
        """Lower and upper limit multipliers [N or N m] of each dof after the last SolverVBD step, shape
        [joint_dof_count], wp.vec2."""
        self.contact_multiplier = wp.zeros(nc, dtype=wp.vec4, device=dev)
        """Normal force (<= 0 pushes apart) then tangential friction force [N] of each contact slot
        after the last SolverVBD step, shape [contact_capacity], wp.vec4."""
        self.tendon_segment_multiplier = wp.zeros(ns, dtype=float, device=dev)
        """Augmented-Lagrangian multiplier [N] of each span's stretch row after the last SolverVBD
        step, shape [tendon_segment_count], float32."""
        nx = model.transmission_count
        self.transmission_activation = wp.zeros(nx, dtype=float, device=dev)
        """Filtered feedforward force a [N] of each transmission tendon (a new tendon starts at 0),
        shape [transmission_count], float32."""
        self.transmission_reference_length = (
            wp.clone(model.transmission_reference_length) if nx else wp.zeros(0, dtype=float, device=dev)
        )
        """Reference length [m] captured at creation (couplings measure from it), shape [transmission_count]."""
        self.transmission_row_impulse = wp.zeros(nx, dtype=vec6, device=dev)
        """Impulses [N s] of each transmission tendon's rows in the last step (passive, drive, lower
        limit or lock, upper limit, friction, armature); SolverVBD warm-starts from them, shape
        [transmission_count], vector(6)."""
        self.coupling_impulse = wp.zeros(model.coupling_count, dtype=float, device=dev)
        """Impulse [N s] of each coupling row in the last step (SolverVBD warm-starts from it),
        shape [coupling_count], float32."""
        self.transmission_term_coordinate = (
            wp.clone(model.transmission_term_initial_coordinate)
            if model.transmission_term_count
            else wp.zeros(0, dtype=float, device=dev)
        )
        """Continuous joint coordinate of each fixed-tendon term [rad or m] (revolute angles are not
        wrapped to +-pi: a fixed tendon's length stays continuous), shape [transmission_term_count]."""
        self.tendon_history = TendonHistory()
        """The tendon history arrays above bundled for kernels (shares their buffers; not copied by ``assign``)."""
        self.tendon_history.rest = self.tendon_segment_rest_length
        self.tendon_history.residual = self.tendon_segment_rest_residual
        self.tendon_history.active = self.tendon_guide_active
        self.tendon_history.ml = self.tendon_segment_attachment_local_l
        self.tendon_history.mr = self.tendon_segment_attachment_local_r
        self.tendon_history.seeded = self.tendon_seeded
        self.tendon_history.winch = self.tendon_guide_winch_paid

    @property
    def tendon_segment_attachment_l_local(self) -> wp.array:
        """newton's name of :attr:`tendon_segment_attachment_local_l` (the same array)."""
        return self.tendon_segment_attachment_local_l

    @property
    def tendon_segment_attachment_r_local(self) -> wp.array:
        """newton's name of :attr:`tendon_segment_attachment_local_r` (the same array)."""
        return self.tendon_segment_attachment_local_r

    def __setattr__(self, name, value):
        guard_array_assignment(self, name, value)
        object.__setattr__(self, name, value)

    def clear_forces(self):
        """Zero the external forces ``body_f`` (graph-capturable)."""
        self.body_f.zero_()

    def assign(self, other: State):
        """Copy every array of ``other`` into this state in place (buffer addresses are kept).
        ``other`` must be a State of a model of this state's layout."""
        check_state("State.assign", "other", other, self)
        for name, arr in vars(self).items():
            if isinstance(arr, wp.array):
                src = getattr(other, name)
                if src.shape != arr.shape or src.dtype != arr.dtype:
                    raise ValueError(f"State.assign: array '{name}' has shape {src.shape}, expected {arr.shape}")
                wp.copy(arr, src)


class Control:
    """User commands for one step: joint drive targets and generalized joint forces."""

    def __init__(self, model):
        dev = model.device
        self._layout = layout_of(model)
        """The layout of the model this control was made for (``newton_tendon.layout``)."""
        n = model.joint_dof_count
        self.joint_target_pos = wp.clone(model.joint_target_pos) if n else wp.zeros(0, dtype=float, device=dev)
        """Drive position target per dof [m or rad], shape [joint_dof_count], float32."""
        self.joint_target_vel = wp.clone(model.joint_target_vel) if n else wp.zeros(0, dtype=float, device=dev)
        """Drive velocity target per dof [m/s or rad/s], shape [joint_dof_count], float32."""
        # newton's joint_target_q is laid out per coordinate; ours per dof: the two agree unless the model
        # has ball or free joints (4 and 7 coordinates for 3 and 6 dofs).
        self._layout_counts = (model.joint_coord_count, model.joint_dof_count)
        self.joint_f = wp.zeros(n, dtype=float, device=dev)
        """Generalized force per dof [N or N m] (revolute and prismatic joints; NaN or inf counts as 0 for the
        step), shape [joint_dof_count], float32."""
        self.tendon_guide_winch_length = wp.zeros(model.tendon_guide_count, dtype=float, device=dev)
        """Cable paid out at each winch guide [m], relative to the initial state (positive lengthens the
        span next to the winch, negative reels in), read at the start of every step; ignored at guides
        without ``TendonGuideFlags.WINCH`` and at force winches; the span cannot be reeled in below 1e-6 m
        (what was applied is ``State.tendon_guide_winch_paid``), shape [tendon_guide_count], float32."""
        self.tendon_guide_winch_force = wp.zeros(model.tendon_guide_count, dtype=float, device=dev)
        """Reel-in force [N] of each force winch (``TendonGuideFlags.WINCH_FORCE``): the winch pays out
        or reels in cable, within the step's iterations, so that the cable's tension at the drum is
        this force (0 or negative: the cable runs free; not finite: the winch holds for the step). Read
        every step; ignored at other guides; shape [tendon_guide_count], float32."""
        nx = model.transmission_count

        def clone(arr, dtype):
            return wp.clone(arr) if nx else wp.zeros(0, dtype=dtype, device=dev)

        self.transmission_drive_force = clone(model.transmission_drive_force, float)
        """Feedforward force command u [N] per transmission tendon (positive lengthens: a tension command
        of 5 N is -5), shape [transmission_count], float32."""
        self.transmission_target_length = clone(model.transmission_target_length, float)
        """Servo target length [m], shape [transmission_count], float32."""
        self.transmission_target_velocity = clone(model.transmission_target_velocity, float)
        """Servo target velocity [m/s], shape [transmission_count], float32."""
        self.transmission_position_gain = clone(model.transmission_position_gain, float)
        """Servo position gain kp [N/m], shape [transmission_count], float32."""
        self.transmission_velocity_gain = clone(model.transmission_velocity_gain, float)
        """Servo velocity gain kv [N s/m], shape [transmission_count], float32."""
        self.transmission_enabled = clone(model.transmission_enabled, wp.int32)
        """1 where a transmission tendon acts (disabled: no force from the next step), shape
        [transmission_count], int32."""
        self.coupling_enabled = (
            wp.clone(model.coupling_enabled) if model.coupling_count else wp.zeros(0, dtype=wp.int32, device=dev)
        )
        """1 where a coupling acts, shape [coupling_count], int32."""

    @property
    def joint_target_q(self) -> wp.array:
        """newton's name for the drive position targets: ``joint_target_pos`` itself (the same array, so
        writing one writes the other), shape [joint_coord_count], float32. newton lays it out per
        coordinate (index by ``model.joint_q_start``), which is our per-dof layout when the model has no
        ball or free joints; with them the layouts differ and this raises AttributeError (use
        ``joint_target_pos`` indexed by ``model.joint_qd_start``)."""
        coords, dofs = self._layout_counts
        if coords != dofs:
            raise AttributeError(
                f"Control.joint_target_q: newton's per-coordinate targets ({coords} coordinates) do not match "
                f"this model's per-dof joint_target_pos ({dofs} dofs: it has ball or free joints); write "
                "joint_target_pos at model.joint_qd_start instead"
            )
        return self.joint_target_pos

    @joint_target_q.setter
    def joint_target_q(self, value: wp.array):
        self.joint_target_q  # noqa: B018  (the same layout check as reading)
        self.joint_target_pos = value

    @property
    def joint_target_qd(self) -> wp.array:
        """newton's name for the drive velocity targets: ``joint_target_vel`` itself (same array; per dof
        in both), shape [joint_dof_count], float32."""
        return self.joint_target_vel

    @joint_target_qd.setter
    def joint_target_qd(self, value: wp.array):
        self.joint_target_vel = value

    def __setattr__(self, name, value):
        guard_array_assignment(self, name, value)
        object.__setattr__(self, name, value)

    def assign(self, other: Control):
        """Copy every array of ``other`` into this control in place. ``other`` must be a Control of a
        model of this control's layout."""
        check_control("Control.assign", "other", other, self)
        for name, arr in vars(self).items():
            if isinstance(arr, wp.array):
                wp.copy(arr, getattr(other, name))
