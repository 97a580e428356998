"""The finalized, device-resident description of a scene: topology and parameters as flat arrays."""

from __future__ import annotations

import dataclasses
import enum

import numpy as np
import warp as wp

from newton_tendon.kernels.joints import JointModel
from newton_tendon.kernels.rigid import BodyModel
from newton_tendon.kernels.routing import TendonModel

from .axis import Axis
from .state import Control, State
from .tendon import AttributeAssignment, AttributeFrequency


class ModelFlags(enum.IntFlag):
    """What changed in a model, passed to ``solver.notify_model_changed``."""

    BODY_PROPERTIES = 1 << 0
    """Body mass, inertia or centre of mass was edited in place."""
    JOINT_PROPERTIES = 1 << 1
    """Joint limits, drive gains or armature were edited in place."""
    SHAPE_PROPERTIES = 1 << 2
    """Shape friction or restitution was edited in place."""
    TENDON_PROPERTIES = 1 << 3
    """Tendon segment compliance, damping, rest length or guide friction was edited in place."""
    TRANSMISSION_PROPERTIES = 1 << 4
    """Transmission tendon or coupling parameters (``transmission_*``, ``coupling_*``) were edited in place."""
    ALL = BODY_PROPERTIES | JOINT_PROPERTIES | SHAPE_PROPERTIES | TENDON_PROPERTIES | TRANSMISSION_PROPERTIES
    """Everything above."""


class Model:
    """Scene topology and parameters as flat Warp arrays over all worlds.

    Built by :meth:`ModelBuilder.finalize`; do not construct it directly. Entity arrays are flat over
    every world; ``*_world`` gives each entity's world (``-1`` for shared static things such as the
    ground). Arrays may be edited in place between steps (then call
    ``solver.notify_model_changed``); replacing an array invalidates captured graphs.
    """

    def __init__(self, device):
        self.device = wp.get_device(device)
        """Warp device holding every array."""
        self.requires_grad = False
        """What ``finalize(requires_grad=)`` was given. The arrays carry no gradients and the solvers,
        which are not differentiable, raise NotImplementedError when built on a model with it set."""
        self.world_count = 0
        """Number of worlds, at least 1."""
        self._implicit_world = False
        """True when the builder made no world: its entities, shared in newton (world -1), form world 0
        here, so a reset mask's global entry selects them too (``solvers.base``)."""
        self.up_axis = Axis.Z
        """The up axis, an :class:`~newton_tendon.Axis` (an int: 0 = X, 1 = Y, 2 = Z)."""
        self.gravity = None
        """Gravity acceleration per world [m/s^2], shape [world_count], wp.vec3. Editable in place."""

        self.body_count = 0
        """Number of bodies in all worlds."""
        self.body_q = None
        """Initial body frame poses in world (position [m], quaternion xyzw), shape [body_count], wp.transform."""
        self.body_qd = None
        """Initial body velocities (COM linear [m/s], angular [rad/s], world), shape [body_count], wp.spatial_vector."""
        self.body_com = None
        """Centre of mass in the body frame [m], shape [body_count], wp.vec3."""
        self.body_mass = None
        """Body mass [kg] (0 = immovable), shape [body_count], float32."""
        self.body_inv_mass = None
        """Inverse body mass [1/kg] (0 for static and kinematic bodies), shape [body_count], float32."""
        self.body_inertia = None
        """Inertia about the COM in body axes [kg m^2], shape [body_count], wp.mat33."""
        self.body_inv_inertia = None
        """Inverse of ``body_inertia`` [1/(kg m^2)] (0 where singular or immovable), shape [body_count], wp.mat33."""
        self.body_flags = None
        """Body flags (bit 0: kinematic), shape [body_count], int32."""
        self.body_world = None
        """World index of each body, shape [body_count], int32."""
        self.body_label = []
        """Body labels, a Python list of str of length body_count."""
        self.body_color = None
        """Graph colour of each body for VBD (bodies sharing a constraint differ), shape [body_count], int32."""
        self.body_color_count = 0
        """Number of distinct body colours."""
        self.body_slot_start = None
        """CSR offsets into ``body_slot`` per body, shape [body_count + 1], int32."""
        self.body_slot = None
        """Constraint slots touching each body, in a fixed order (deterministic gather), shape [total], int32."""

        self.shape_count = 0
        """Number of shapes."""
        self.shape_type = None
        """Shape type (see ``newton_tendon.kernels.types.SHAPE_*``), shape [shape_count], int32."""
        self.shape_body = None
        """Body each shape is attached to (-1 = world), shape [shape_count], int32."""
        self.shape_transform = None
        """Shape frame relative to its body frame (world frame when body is -1), shape [shape_count], wp.transform."""
        self.shape_scale = None
        """Shape dimensions [m]: sphere (r,0,0); box half extents; capsule/cylinder (r, half height, 0) along local Z;
        plane (half width, half length, 0), 0 = infinite; shape [shape_count], wp.vec3."""
        self.shape_mu = None
        """Coulomb friction coefficient [-], shape [shape_count], float32. A pair uses the mean of its two shapes."""
        self.shape_restitution = None
        """Coefficient of restitution [-], shape [shape_count], float32. A pair uses the mean of its two shapes."""
        self.shape_collision_group = None
        """Collision group, newton's rule: 0 collides with nothing, a positive group with itself and every
        negative group, a negative group with every group but itself; shape [shape_count], int32."""
        self.shape_margin = None
        """Outward offset of each shape's contact surface [m] (a pair rests margin_a + margin_b apart),
        shape [shape_count], float32."""
        self.shape_gap = None
        """Contact detection distance of each shape [m]: a pair's slots are candidates below
        max(rigid_contact_margin, gap_a + gap_b) between the offset surfaces; shape [shape_count], float32."""
        self.shape_world = None
        """World index of each shape (-1 = shared static), shape [shape_count], int32."""
        self.shape_label = []
        """Shape labels, a Python list of str."""
        self.shape_mesh = []
        """Triangle mesh of each mesh shape (``(vertices [V, 3] float32 m, faces [F, 3] int32)`` in the
        shape frame), None for the other shapes; a Python list (host side, for drawing and export)."""
        self.shape_mesh_range = None
        """(first vertex, vertex count) in ``mesh_points`` of each colliding mesh shape, (0, 0) for the
        others; shape [shape_count], wp.vec2i."""
        self.mesh_points = None
        """The vertices of every colliding mesh shape (each mesh once, however many worlds share it),
        shape frame [m]; wp.vec3 (at least one entry)."""

        self.rigid_contact_margin = 0.01
        """Default distance [m] below which shape pairs produce contact candidates."""
        self.shape_contact_pair_count = 0
        """Number of shape pairs that may touch."""
        self.shape_contact_pairs = None
        """Shape pairs (a, b) with type(a) <= type(b), shape [shape_contact_pair_count], wp.vec2i."""
        self.shape_contact_pair_mu = None
        """Each pair's own friction coefficient [-], -1 where it uses the mean of its shapes' ``mu``
        (only explicit pairs, ``add_shape_contact_pair``, have their own); shape
        [shape_contact_pair_count], float32."""
        self.contact_capacity = 0
        """Number of contact slots (fixed; each pair owns a contiguous range)."""
        self.contact_pair = None
        """Pair index of each contact slot, shape [contact_capacity], int32."""
        self.contact_sub = None
        """Index of each contact slot within its pair, shape [contact_capacity], int32."""

        self.joint_count = 0
        """Number of joints."""
        self.joint_type = None
        """Joint type (see ``newton_tendon.kernels.types.JOINT_*``), shape [joint_count], int32."""
        self.joint_parent = None
        """Parent body (-1 = world), shape [joint_count], int32."""
        self.joint_child = None
        """Child body, shape [joint_count], int32."""
        self.joint_X_p = None
        """Joint frame in the parent body frame, shape [joint_count], wp.transform."""
        self.joint_X_c = None
        """Joint frame in the child body frame, shape [joint_count], wp.transform."""
        self.joint_enabled = None
        """1 if the joint is enforced, shape [joint_count], int32."""
        self.joint_world = None
        """World index of each joint, shape [joint_count], int32."""
        self.joint_label = []
        """Joint labels, a Python list of str."""
        self.joint_dof_dim = None
        """(linear, angular) free axes of each joint, as newton's, shape [joint_count], wp.vec2i. A joint's
        dofs run linear axes first, then angular ones."""
        self.joint_coord_count = 0
        """Total number of joint coordinates."""
        self.joint_dof_count = 0
        """Total number of joint degrees of freedom."""
        self.joint_q_start = None
        """First coordinate of each joint, shape [joint_count + 1], int32."""
        self.joint_qd_start = None
        """First degree of freedom of each joint, shape [joint_count + 1], int32."""
        self.joint_axis = None
        """Axis of each degree of freedom in the joint frame (unit), shape [joint_dof_count], wp.vec3."""
        self.joint_limit_lower = None
        """Lower limit per dof [m or rad] (-inf = none), shape [joint_dof_count], float32."""
        self.joint_limit_upper = None
        """Upper limit per dof [m or rad] (+inf = none), shape [joint_dof_count], float32."""
        self.joint_target_ke = None
        """Drive position gain per dof [N/m or N m/rad], shape [joint_dof_count], float32."""
        self.joint_target_kd = None
        """Drive velocity gain per dof [N s/m or N m s/rad], shape [joint_dof_count], float32."""
        self.joint_armature = None
        """Armature per dof [kg m^2 on an angle, kg on a length]: the coordinate's own inertia, in
        joint space as MuJoCo has it, shape [joint_dof_count], float32."""
        self.joint_row_armature = None
        """The part of ``joint_armature`` the solvers' coordinate rows carry: all of it but a world
        hinge's, which finalize adds to the child's inertia about the axis (exact there: the joint's
        rate is the child's absolute rate), shape [joint_dof_count], float32."""
        self.joint_target_pos = None
        """Default drive position targets [m or rad], copied into ``Control``, shape [joint_dof_count], float32."""
        self.joint_target_vel = None
        """Default drive velocity targets [m/s or rad/s], copied into ``Control``, shape [joint_dof_count], float32."""
        self.joint_limit_ke = None
        """newton's soft-limit stiffness per dof, stored (our limits are hard rows), shape [joint_dof_count], float32."""
        self.joint_limit_kd = None
        """newton's soft-limit damping per dof, stored (our limits are hard rows), shape [joint_dof_count], float32."""
        self.joint_effort_limit = None
        """Effort limit per dof [N or N m], stored (our drives are not clamped, as newton's XPBD and VBD),
        shape [joint_dof_count], float32."""
        self.joint_velocity_limit = None
        """Velocity limit per dof [m/s or rad/s], stored (not applied, as newton's XPBD and VBD),
        shape [joint_dof_count], float32."""
        self.joint_target_mode = None
        """Drive mode per dof (:class:`~newton_tendon.JointTargetMode`), shape [joint_dof_count], int32."""
        self.joint_q = None
        """Initial joint coordinates [m, rad, quaternion xyzw] (newton's; ``eval_joint_coordinates`` of the
        initial body poses, so ``eval_fk(model, model.joint_q, model.joint_qd, state)`` leaves the bodies
        where the builder put them), shape [joint_coord_count], float32. Not read by the solvers."""
        self.joint_qd = None
        """Initial joint velocities [m/s, rad/s] (from the initial body velocities, as ``joint_q``),
        shape [joint_dof_count], float32."""
        self.joint_articulation = None
        """Articulation of each joint (-1 = none; ``eval_fk`` places only articulated joints' children),
        shape [joint_count], int32."""
        self.articulation_start = None
        """First joint of each articulation, shape [articulation_count + 1], int32."""
        self.articulation_count = 0
        """Number of articulations."""
        # Each articulation's joints (its range of articulation_start) with every joint after the joint
        # that places its parent body: the order eval_fk walks them in, int32 [articulation_start[-1]].
        self._fk_joint_order = None

        self.tendon_count = 0
        """Number of routed tendons."""
        self.tendon_guide_count = 0
        """Number of tendon guides over all tendons."""
        self.tendon_segment_count = 0
        """Number of tendon segments (free spans); each tendon has one fewer than its guides."""
        self.tendon_start = None
        """First guide of each tendon, with a final sentinel, shape [tendon_count + 1], int32. Tendon t's
        segments start at ``tendon_start[t] - t``; segment k of a tendon is the incoming span of its guide k+1."""
        self.tendon_world = None
        """World index of each tendon, shape [tendon_count], int32."""
        self.tendon_label = []
        """Tendon labels, a Python list of str."""
        self.tendon_guide_body = None
        """Body of each guide (-1 = world), shape [tendon_guide_count], int32."""
        self.tendon_guide_type = None
        """Guide type (``TendonGuideType``: ROLLER 0, ANCHOR 1, PINHOLE 2), shape [tendon_guide_count], int32."""
        self.tendon_guide_flags = None
        """Guide flags (``TendonGuideFlags``, bit 0 DYNAMIC), shape [tendon_guide_count], int32."""
        self.tendon_guide_offset = None
        """Guide point or roller centre in the body frame [m], shape [tendon_guide_count], wp.vec3."""
        self.tendon_guide_axis = None
        """Roller axis in the body frame (unit), shape [tendon_guide_count], wp.vec3."""
        self.tendon_guide_radius = None
        """Roller radius [m] (0 for point guides), shape [tendon_guide_count], float32."""
        self.tendon_guide_orientation = None
        """Roller winding side (+1 counter-clockwise about the axis, -1 clockwise), shape [tendon_guide_count],
        int32."""
        self.tendon_guide_mu = None
        """Capstan friction coefficient [-], shape [tendon_guide_count], float32. Editable in place."""
        self.tendon_segment_compliance = None
        """Span compliance [m/N] (0 = inextensible), shape [tendon_segment_count], float32. Editable in place."""
        self.tendon_segment_damping = None
        """Span damping [N s/m], shape [tendon_segment_count], float32. Editable in place."""
        self.tendon_segment_rest_length = None
        """Authored span rest length [m] (negative = measured at the initial pose), shape [tendon_segment_count],
        float32. Editing it and notifying the solver changes the reset baseline."""
        self.tendon_segment_initial_rest_length = None
        """Resolved initial rest length per span [m] (the reset baseline; 0 for a span bypassed at the start),
        shape [tendon_segment_count], float32."""
        self.tendon_guide_initial_active = None
        """1 where a guide is part of the route at the initial pose (dynamic rollers may start bypassed),
        shape [tendon_guide_count], int32."""
        # Transmission tendons (spatial and fixed) and couplings; see ModelBuilder.add_spatial_tendon.
        self.transmission_count = 0
        """Number of transmission tendons (spatial and fixed)."""
        self.transmission_type = None
        """0 spatial, 1 fixed, shape [transmission_count], int32."""
        self.transmission_world = None
        """World of each transmission tendon, shape [transmission_count], int32."""
        self.transmission_label = []
        """Transmission tendon labels, a Python list of str."""
        self.transmission_path = None
        """Flattened spatial paths (``newton_tendon.kernels.spatial.SpatialPathModel``; fixed tendons own no elements)."""
        self.transmission_element_count = 0
        """Number of spatial path elements over all tendons."""
        self.transmission_term_start = None
        """First joint term of each fixed tendon, shape [transmission_count + 1], int32 (spatial: none)."""
        self.transmission_term_count = 0
        """Number of fixed-tendon joint terms over all tendons."""
        self.transmission_term_joint = None
        """Joint of each term (revolute or prismatic), shape [transmission_term_count], int32."""
        self.transmission_term_dof = None
        """Dof of each term: its joint's first dof, plus the axis of a D6 joint's term
        (``add_fixed_tendon(axes=)``), shape [transmission_term_count], int32."""
        self.transmission_term_angular = None
        """What each term's coordinate is: 0 a length (prismatic, a D6 linear axis), 1 a twist angle (a
        revolute joint, a D6 joint's single angular axis), 2 + i the i-th angle of a universal joint (a
        D6 with two angular axes), shape [transmission_term_count], int32."""
        self.transmission_term_coefficient = None
        """Coefficient c_i of each term [m/rad or m/m], shape [transmission_term_count], float32."""
        self.transmission_term_initial_coordinate = None
        """Joint coordinate of each fixed-tendon term at the initial pose [rad or m], shape
        [transmission_term_count], float32 (copied into the State)."""
        self.transmission_slot_count = 0
        """Constraint slots of transmission tendons (one per path element, two per joint term)."""
        self.transmission_reference_length = None
        """Length at the initial pose [m] (couplings measure from it), shape [transmission_count], float32."""
        self.transmission_stiffness = None
        """Spring stiffness [N/m], shape [transmission_count], float32. Editable in place (all
        ``transmission_*`` parameter arrays below are; then notify ``TRANSMISSION_PROPERTIES``)."""
        self.transmission_damping = None
        """Damping [N s/m], shape [transmission_count], float32."""
        self.transmission_spring_lower = None
        """Lower end of the spring's rest interval [m], shape [transmission_count], float32."""
        self.transmission_spring_upper = None
        """Upper end of the spring's rest interval [m], shape [transmission_count], float32."""
        self.transmission_activation_time = None
        """First-order activation time of the feedforward force [s] (0: none), shape [transmission_count]."""
        self.transmission_actuation_lower = None
        """Lower bound of the combined actuator force [N] (-inf: none), shape [transmission_count], float32."""
        self.transmission_actuation_upper = None
        """Upper bound of the combined actuator force [N] (+inf: none), shape [transmission_count], float32."""
        self.transmission_lower_limit = None
        """Lower length bound [m] (-inf: none; equal bounds lock), shape [transmission_count], float32."""
        self.transmission_upper_limit = None
        """Upper length bound [m] (+inf: none), shape [transmission_count], float32."""
        self.transmission_limit_margin = None
        """Margin moving both bounds inward [m], shape [transmission_count], float32."""
        self.transmission_position_correction = None
        """Position correction beta of limits [-] (default 0.2), shape [transmission_count], float32."""
        self.transmission_limit_compliance = None
        """Limit compliance [m/N], shape [transmission_count], float32."""
        self.transmission_friction_loss = None
        """Dry friction threshold [N], shape [transmission_count], float32."""
        self.transmission_friction_compliance = None
        """Dry friction regularization [m/N], shape [transmission_count], float32."""
        self.transmission_armature = None
        """Armature [kg] (inertia along the length), shape [transmission_count], float32."""
        self.transmission_width = None
        """Drawing radius [m], shape [transmission_count], float32."""
        self.transmission_drive_force = None
        """Default feedforward command u [N] (copied into Control), shape [transmission_count], float32."""
        self.transmission_target_length = None
        """Default servo target length [m] (copied into Control), shape [transmission_count], float32."""
        self.transmission_target_velocity = None
        """Default servo target velocity [m/s] (copied into Control), shape [transmission_count], float32."""
        self.transmission_position_gain = None
        """Default servo position gain [N/m] (copied into Control), shape [transmission_count], float32."""
        self.transmission_velocity_gain = None
        """Default servo velocity gain [N s/m] (copied into Control), shape [transmission_count], float32."""
        self.transmission_enabled = None
        """Default enable flags (copied into Control), shape [transmission_count], int32."""
        self.coupling_count = 0
        """Number of tendon couplings."""
        self.coupling_label = []
        """Coupling labels, a Python list of str."""
        self.coupling_first = None
        """First tendon of each coupling, shape [coupling_count], int32."""
        self.coupling_second = None
        """Second tendon (-1: none), shape [coupling_count], int32."""
        self.coupling_coefficients = None
        """Polynomial coefficients c0..c4, shape [coupling_count], vector(5, float32)."""
        self.coupling_compliance = None
        """Coupling compliance [m/N], shape [coupling_count], float32."""
        self.coupling_position_correction = None
        """Coupling position correction beta [-], shape [coupling_count], float32."""
        self.coupling_enabled = None
        """Default enable flags (copied into Control), shape [coupling_count], int32."""
        self.coupling_world = None
        """World of each coupling, shape [coupling_count], int32."""
        self.coupling_slot_start = None
        """First constraint slot of each coupling (after the tendons' slots), shape [coupling_count + 1], int32."""
        self.coupling_slot_count = 0
        """Constraint slots of couplings (copies of both tendons' slots)."""
        self.transmission_slot_tendon = None
        """Tendon owning each transmission slot, shape [transmission_slot_count], int32."""
        self.coupling_slot_coupling = None
        """Coupling owning each coupling slot, shape [coupling_slot_count], int32."""
        self.coupling_slot_source = None
        """Transmission slot each coupling slot copies, shape [coupling_slot_count], int32."""
        self.transmission_coupling_start = None
        """First entry of each tendon's couplings in ``transmission_coupling``, shape [transmission_count + 1]."""
        self.transmission_coupling = None
        """Couplings of each tendon (CSR, by ``transmission_coupling_start``), shape [sum of entries], int32."""
        self.custom_attributes = {}
        """Declared custom attributes: name -> Warp array with one value per entity of its frequency."""
        self.custom_attribute_frequency = {}
        """Declared custom attributes: name -> ``AttributeFrequency``."""
        self.custom_attribute_assignment = {}
        """Declared custom attributes: name -> ``AttributeAssignment`` (which object holds the array)."""
        self.custom_attribute_references = {}
        """Declared custom attributes: name -> the domain their int values index ("body", ...), or None."""

    AttributeFrequency = AttributeFrequency
    """newton's name for :class:`~newton_tendon.AttributeFrequency` (``Model.AttributeFrequency``)."""
    AttributeAssignment = AttributeAssignment
    """newton's name for :class:`~newton_tendon.AttributeAssignment` (``Model.AttributeAssignment``)."""

    def state(self) -> State:
        """A new State holding copies of the initial body poses and velocities (and of each STATE
        custom attribute's initial values)."""
        s = State(self)
        if self.tendon_count:
            # The tendon history starts seeded at the model's pose (material points at its tangent
            # points, as newton's states do), so a pose written into the state before the first step
            # is motion from the model's pose: a roller turned by hand rolls cable, a moved body
            # stretches its spans. (A state seeded lazily at its first step's pose took that pose as
            # the start and rolled nothing.)
            from newton_tendon.kernels.cable import reset_tendons  # noqa: PLC0415

            wp.launch(
                reset_tendons,
                dim=self.tendon_count,
                inputs=[
                    wp.ones(max(self.world_count, 1) + 1, dtype=wp.int32, device=self.device),
                    tendon_model_struct(self),
                    self.tendon_segment_initial_rest_length,
                    self.tendon_guide_initial_active,
                    self.body_q,
                ],
                outputs=[s.tendon_history],
                device=self.device,
            )
        self._attach_custom_attributes(s, AttributeAssignment.STATE, "Model.state")
        return s

    def control(self) -> Control:
        """A new Control holding the default drive targets and zero joint forces (and each CONTROL
        custom attribute's default values)."""
        c = Control(self)
        self._attach_custom_attributes(c, AttributeAssignment.CONTROL, "Model.control")
        return c

    def _attach_custom_attributes(self, target, assignment: AttributeAssignment, owner: str) -> None:
        """Put the custom attributes of ``assignment`` on ``target`` (the model itself, or a new State
        or Control, which get their own copies): ``target.<name>``, or ``target.<namespace>.<name>``.

        The arrays live in ``vars(target)`` under their key (``"ns:name"`` for a namespaced one), so
        ``State.assign``/``Control.assign``, which copy every array in ``vars``, copy them too."""
        for key, arr in self.custom_attributes.items():
            if self.custom_attribute_assignment.get(key, AttributeAssignment.MODEL) != assignment:
                continue
            ns, _, name = key.rpartition(":")
            what = type(target).__name__
            if ns:
                space = vars(target).get(ns)
                if space is None:
                    if hasattr(target, ns):
                        raise ValueError(f"{owner}: custom attribute namespace '{ns}' would hide {what}.{ns}")
                    space = AttributeNamespace(target, ns)
                    object.__setattr__(target, ns, space)
                elif not isinstance(space, AttributeNamespace):
                    raise ValueError(f"{owner}: custom attribute namespace '{ns}' would hide {what}.{ns}")
            elif hasattr(target, name):
                raise ValueError(
                    f"{owner}: custom attribute '{name}' would hide {what}.{name}; rename it or give it a namespace"
                )
            vars(target)[key] = arr if target is self else wp.clone(arr)

    def get_attribute_frequency(self, name: str) -> AttributeFrequency:
        """The domain an array has one row per (newton's query): a custom attribute's frequency, or
        the frequency of a built-in ``body_*``, ``shape_*``, ``joint_*`` or ``tendon_*`` array (the CSR
        ``tendon_start`` counts as TENDON, as in newton). Raises KeyError for other names."""
        if name in self.custom_attribute_frequency:
            return self.custom_attribute_frequency[name]
        arr = getattr(self, name, None)
        if isinstance(arr, wp.array):
            for prefix, freq in _BUILTIN_FREQUENCY_PREFIXES:
                # Per-dof joint arrays and other same-prefix arrays of another length are not per entity.
                if name.startswith(prefix) and arr.shape[0] - self._attribute_frequency_count(freq) in (0, 1):
                    return freq
        raise KeyError(f"Model.get_attribute_frequency: the frequency of '{name}' is not known")

    def _attribute_frequency_count(self, frequency: AttributeFrequency) -> int:
        """Rows of a frequency (newton's helper): ``body_count``, ``tendon_guide_count``, ..."""
        return int(getattr(self, f"{AttributeFrequency(frequency).domain}_count"))

    def _attribute_spec(self, name: str) -> AttributeSpec | None:
        """Frequency, assignment and referenced domain of an array (newton's helper), or None."""
        try:
            freq = self.get_attribute_frequency(name)
        except KeyError:
            return None
        ref = self.custom_attribute_references.get(name, _BUILTIN_REFERENCES.get(name))
        return AttributeSpec(
            frequency=freq,
            assignment=self.custom_attribute_assignment.get(name, AttributeAssignment.MODEL),
            references=None if ref is None else AttributeFrequency[ref.upper()],
        )

    @property
    def body_color_groups(self) -> list[wp.array]:
        """Bodies of each VBD colour (newton's name): one int32 array of body indices per colour, in
        colour order, built from ``body_color``. Assigning a list of index arrays (or sequences) sets
        ``body_color`` to match (bodies in no group get -1); SolverVBD reads it at construction."""
        colours = self.body_color.numpy() if self.body_color is not None else np.zeros(0, dtype=np.int32)
        return [
            wp.array(np.nonzero(colours == c)[0].astype(np.int32), dtype=wp.int32, device=self.device)
            for c in range(int(colours.max()) + 1 if colours.size else 0)
        ]

    @body_color_groups.setter
    def body_color_groups(self, groups) -> None:
        owner = "Model.body_color_groups"
        if isinstance(groups, (str, bytes)) or not hasattr(groups, "__iter__"):
            raise TypeError(f"{owner}: expected a list of body index arrays, got {type(groups).__name__}")
        colours = np.full(self.body_count, -1, dtype=np.int32)
        count = 0
        for c, group in enumerate(groups):
            members = group.numpy() if isinstance(group, wp.array) else np.asarray(group)
            if members.size and not np.issubdtype(members.dtype, np.integer):
                raise TypeError(f"{owner}: group {c} must hold int body indices, got {members.dtype}")
            members = members.reshape(-1).astype(np.int64)
            bad = members[(members < 0) | (members >= self.body_count)]
            if bad.size:
                raise ValueError(f"{owner}: group {c} has body index {int(bad[0])}, expected 0..{self.body_count - 1}")
            twice = members[colours[members] >= 0]
            if twice.size or np.unique(members).size != members.size:
                b = int(twice[0]) if twice.size else int(members[np.argmax(np.bincount(members))])
                raise ValueError(f"{owner}: body {b} is in more than one group; each body has one colour")
            colours[members] = c
            count = c + 1
        self.body_color = wp.array(colours, dtype=wp.int32, device=self.device)
        self.body_color_count = count

    def world_mask(self, worlds) -> wp.array:
        """An int32 mask array [world_count] for ``solver.reset``: 1 for each selected world.

        ``worlds``: world indices (ints in ``0 .. world_count - 1``; entities in no world are reset
        with any selection, so there is no index for them: -1, newton's global world, is refused
        rather than read as the last world), or a boolean mask with one entry per world.

        Raises:
            TypeError: ``worlds`` is not a sequence of ints or bools (a float, a string).
            ValueError: an index out of range, or a boolean mask of another length.
        """
        owner = "Model.world_mask"
        n = max(self.world_count, 1)
        if isinstance(worlds, (str, bytes)) or not hasattr(worlds, "__iter__"):
            raise TypeError(f"{owner}: worlds must be a sequence of world indices or a bool mask, got {worlds!r}")
        try:
            values = worlds.numpy() if isinstance(worlds, wp.array) else np.asarray(list(worlds))
        except ValueError:
            raise ValueError(f"{owner}: worlds must be a flat sequence of world indices, got {worlds!r}") from None
        if values.ndim != 1:
            raise ValueError(f"{owner}: worlds must be one-dimensional, got shape {values.shape}")
        m = np.zeros(n, dtype=np.int32)
        if values.dtype == np.bool_:
            if values.size != n:
                raise ValueError(f"{owner}: a bool mask needs one entry per world ({n}), got {values.size}")
            m[values] = 1
        elif values.size:
            if not np.issubdtype(values.dtype, np.integer):
                raise TypeError(f"{owner}: world indices must be ints, got {values.dtype} ({values.tolist()[:4]})")
            bad = values[(values < 0) | (values >= n)]
            if bad.size:
                raise ValueError(
                    f"{owner}: world index {int(bad[0])} is out of range 0..{n - 1} (entities in no world "
                    "are reset with any selection; there is no index for them)"
                )
            m[values] = 1
        return wp.array(m, dtype=wp.int32, device=self.device)


class AttributeNamespace:
    """``owner.<namespace>``: the custom attributes declared with that namespace, as attributes.

    The arrays live in ``vars(owner)`` under ``"<namespace>:<name>"``; this object reads and
    replaces them there, so the owner's ``assign`` and this view always agree."""

    def __init__(self, owner, namespace: str):
        object.__setattr__(self, "_owner", owner)
        object.__setattr__(self, "_namespace", namespace)

    def __getattr__(self, name: str):
        try:
            return vars(self._owner)[f"{self._namespace}:{name}"]
        except KeyError:
            raise AttributeError(f"custom attribute namespace '{self._namespace}' has no attribute '{name}'") from None

    def __setattr__(self, name: str, value) -> None:
        key = f"{self._namespace}:{name}"
        if key not in vars(self._owner):
            raise AttributeError(f"custom attribute namespace '{self._namespace}' has no attribute '{name}'")
        vars(self._owner)[key] = value

    def __dir__(self):
        prefix = f"{self._namespace}:"
        return [k[len(prefix) :] for k in vars(self._owner) if k.startswith(prefix)]


@dataclasses.dataclass(frozen=True)
class AttributeSpec:
    """What ``Model._attribute_spec`` reports about an array (newton's ``Model.AttributeSpec`` fields)."""

    frequency: AttributeFrequency
    assignment: AttributeAssignment = AttributeAssignment.MODEL
    references: AttributeFrequency | None = None


_BUILTIN_FREQUENCY_PREFIXES = (
    ("tendon_guide_", AttributeFrequency.TENDON_GUIDE),
    ("tendon_segment_", AttributeFrequency.TENDON_SEGMENT),
    ("tendon_", AttributeFrequency.TENDON),
    ("body_", AttributeFrequency.BODY),
    ("shape_", AttributeFrequency.SHAPE),
    ("joint_", AttributeFrequency.JOINT),
)
"""Built-in array name prefixes and their frequency, most specific first."""

_BUILTIN_REFERENCES = {
    "tendon_start": "tendon_guide",
    "tendon_guide_body": "body",
    "shape_body": "body",
    "joint_parent": "body",
    "joint_child": "body",
}
"""Built-in int arrays whose values index another domain."""


def body_model_struct(m: Model) -> BodyModel:
    """The per-body constants of ``m`` bundled as the struct kernels take (arrays shared, not copied)."""
    s = BodyModel()
    s.com = m.body_com
    s.inv_mass = m.body_inv_mass
    s.inertia = m.body_inertia
    s.inv_inertia = m.body_inv_inertia
    s.flags = m.body_flags
    s.world = m.body_world
    s.slot_start = m.body_slot_start
    s.slot = m.body_slot
    return s


def joint_model_struct(m: Model) -> JointModel:
    """The per-joint constants of ``m`` bundled as the struct kernels take (arrays shared, not copied)."""
    s = JointModel()
    s.type = m.joint_type
    s.parent = m.joint_parent
    s.child = m.joint_child
    s.X_p = m.joint_X_p
    s.X_c = m.joint_X_c
    s.q_start = m.joint_q_start
    s.qd_start = m.joint_qd_start
    s.dof_dim = m.joint_dof_dim
    s.axis = m.joint_axis
    s.limit_lower = m.joint_limit_lower
    s.limit_upper = m.joint_limit_upper
    s.target_ke = m.joint_target_ke
    s.target_kd = m.joint_target_kd
    s.armature = m.joint_row_armature
    s.enabled = m.joint_enabled
    return s


def tendon_model_struct(m: Model) -> TendonModel:
    """The routed-tendon constants of ``m`` bundled as the struct kernels take (arrays shared, not copied)."""
    s = TendonModel()
    s.start = m.tendon_start
    s.world = m.tendon_world
    s.guide_body = m.tendon_guide_body
    s.guide_type = m.tendon_guide_type
    s.guide_flags = m.tendon_guide_flags
    s.guide_offset = m.tendon_guide_offset
    s.guide_axis = m.tendon_guide_axis
    s.guide_radius = m.tendon_guide_radius
    s.guide_orientation = m.tendon_guide_orientation
    s.guide_mu = m.tendon_guide_mu
    s.seg_compliance = m.tendon_segment_compliance
    s.seg_damping = m.tendon_segment_damping
    s.compliance_floor = 0.0
    return s
