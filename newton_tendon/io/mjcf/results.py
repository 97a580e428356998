"""What ``add_mjcf`` returns: the name tables of what it added and each actuator's control mapping."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class MjcfActuator:
    """How one MJCF actuator's control value drives the imported model.

    ``control`` names the ``Control`` array (``transmission_drive_force``,
    ``transmission_target_length``, ``transmission_target_velocity``, ``joint_target_pos``,
    ``joint_target_vel`` or ``joint_f``); write ``scale * ctrl + offset`` into entry ``index`` of it.
    ``ctrlrange`` is the MJCF control range (None: unlimited); it is not enforced by the solvers,
    clamp ``ctrl`` before writing it (for tendon motors it is folded into the drive bounds).
    """

    name: str
    kind: str
    """MJCF element: "motor", "position", "velocity" or "general"."""
    target: str
    """"tendon" or "joint"."""
    index: int
    """Transmission tendon index (target "tendon") or joint dof index (target "joint")."""
    control: str
    scale: float
    offset: float = 0.0
    ctrlrange: tuple[float, float] | None = None


@dataclass
class MjcfImport:
    """What ``add_mjcf`` added, by MJCF name (indices into the caller's builder).

    Unnamed elements are listed under their builder label.
    """

    bodies: dict[str, int] = field(default_factory=dict)
    joints: dict[str, int] = field(default_factory=dict)
    """Joint name -> joint index. Several MJCF joints of one body share one D6 joint."""
    joint_coords: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Hinge or slide joint name -> (index into ``joint_q``, index into ``joint_qd`` and the per-dof
    ``Control`` arrays): where MuJoCo's qpos and qvel of that joint live here (a D6 joint's axis for
    the later MJCF joints of a body)."""
    shapes: dict[str, int] = field(default_factory=dict)
    sites: dict[str, tuple[int, tuple]] = field(default_factory=dict)
    """Site name -> (body index or -1, pose in that body's frame (px, py, pz, qx, qy, qz, qw) [m])."""
    tendons: dict[str, int] = field(default_factory=dict)
    """Tendon name -> transmission tendon index (the file's ``<tendon>`` elements)."""
    joint_tendons: dict[str, int] = field(default_factory=dict)
    """``"<joint>/transmission"`` -> transmission tendon index of the one-joint fixed tendon (length =
    the joint's coordinate) that carries a joint's ``frictionloss`` or its actuator when that
    actuator has a force range or an activation filter."""
    couplings: dict[str, int] = field(default_factory=dict)
    actuators: dict[str, MjcfActuator] = field(default_factory=dict)
    timestep: float | None = None
    """``<option timestep>`` [s] if authored (a step parameter: pass it to ``solver.step``)."""
    gravity: tuple | None = None
    """``<option gravity>`` [m/s^2] if authored (applied to the builder)."""
    unsupported: dict[str, list[str]] = field(default_factory=dict)
    """Feature -> the elements that use it, for what the import left out or approximated (one
    ``MjcfImportWarning`` each; ``importer.UNSUPPORTED`` says why); empty with ``strict=True``."""
