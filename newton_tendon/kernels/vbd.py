"""Vertex block descent for rigid bodies: per-body 6x6 Newton steps on an augmented-Lagrangian energy.

Each step minimizes, over the end-of-step poses x of all bodies, the incremental potential

    E(x) = sum_b (1/2h^2) |x_b - y_b|^2_M  +  sum_rows E_row(x)

with y the inertial prediction (``rigid.integrate_bodies``) and ``|.|_M`` the mass/inertia norm of
a pose difference (COM translation [m], rotation vector [rad]). Bodies are visited one colour at a
time; a body minimizes E over its own six coordinates with the others held fixed, by one Newton
step ``H d = f`` on the 6x6 block (``f = -dE/dx_b``, ``H`` a positive-definite approximation of
``d2E/dx_b^2``). Bodies of one colour share no row, so a colour updates in parallel (Chen et al.,
"Vertex Block Descent", SIGGRAPH 2024).

Hard rows (joint anchors and axes, limits, contacts with Coulomb friction) use the augmented
Lagrangian of Giles et al., "Augmented Vertex Block Descent" (SIGGRAPH 2025): a row with error C
adds ``E = (1/2) k |C|^2 + lambda . C``, i.e. the force ``F = k C + lambda`` acts along ``dC/dx``;
after every iteration the multiplier takes that force (``lambda <- k C + lambda``, clamped for
unilateral rows) and the penalty grows with the remaining error. Penalties are stored relative to
the row's inertial scale, ``k = rho m_eff / h^2`` (``m_eff`` the summed mass, or mean principal
inertia for angular rows, of the moving bodies of the row), so the same ``rho`` works for any mass
and step. Multipliers and ``rho`` restart every step (zero and ``rho_min``); the multipliers are
reported in the State (``joint_multiplier``, ``contact_multiplier``, ...). Warm-starting them from
the previous step made chains with hinge limits diverge: an impact's multiplier is far larger than
the next step needs and, with a small penalty, unwinds too slowly once the row separates.

Soft rows (drives, tendon spans) are plain elastic energies with their Hessian (Gauss-Newton).

Units: f [N, N m], H [N/m, N, N m/rad], lambda [N] (linear rows) or [N m] (angular rows).

The rows and kernels live by kind, and this module re-exports their names (the import path of the
solver's kernels and structs):

* ``vbd_block``: the 6x6 system of one body, its solve and pose update, the penalty schedule;
* ``joints.vbd_rows``, ``vbd_contact_rows``, ``vbd_span_rows``, ``vbd_transmission_rows``: the rows of
  joints, contact slots, routed-cable spans, transmission tendons and couplings, with the dual
  steps of the augmented-Lagrangian ones;
* ``vbd_sweep``: the body sweep over one colour, in three variants (Warp modules ``VBD_KERNELS``,
  ``TRANSMISSION_MODULE`` and ``TENDON_MODULE``).

Keep this file free of Warp functions, structs and kernels: the modules above register their kernels into the
Warp module of this file's name by ``module=``, and a construct defined here would register into it
under this file's loader, which makes Warp clear the kernels already there (checked with Warp 1.19).
"""

from newton_tendon.kernels.joints.vbd_rows import (
    LIMIT_NEAR,
    JointDuals,
    JointFrame,
    add_joint,
    coordinate_jacobian,
    dof_coordinate,
    joint_angular_error,
    joint_frame,
    joint_linear_error,
    update_joint_duals,
)
from newton_tendon.kernels.vbd_block import (
    VBD_KERNELS,
    PenaltyParams,
    add_angle_row,
    add_point_row,
    add_twist_row,
    move_body,
    moving_mass,
    solve_block,
)
from newton_tendon.kernels.vbd_contact_rows import (
    ContactDuals,
    ContactFrame,
    add_contact,
    contact_forces,
    contact_frame,
    contact_lambda_t,
    contact_push,
    mark_crossed_contacts,
    update_contact_duals,
)
from newton_tendon.kernels.vbd_span_rows import (
    add_tendon_slot,
)
from newton_tendon.kernels.vbd_sweep import (
    TENDON_MODULE,
    assemble_tree_bodies,
    assemble_tree_bodies_transmissions,
    assemble_tree_bodies_transmissions_universal,
    assemble_tree_bodies_universal,
    paired_slot,
    restore_idle_trees,
    slot_run_end,
    solve_body_colour,
    solve_body_colour_tendons,
    solve_body_colour_transmissions,
    solve_body_colour_transmissions_universal,
    solve_body_colour_universal,
)
from newton_tendon.kernels.vbd_transmission_rows import (
    TRANSMISSION_MODULE,
    VBDTransmissions,
    add_transmission,
    coupling_rate,
    coupling_row,
    row_law,
    row_stiffness,
    transmission_owner,
    transmission_rows,
    update_coupling_duals,
    update_transmission_duals,
)

__all__ = [
    "LIMIT_NEAR",
    "TENDON_MODULE",
    "TRANSMISSION_MODULE",
    "VBD_KERNELS",
    "ContactDuals",
    "ContactFrame",
    "JointDuals",
    "JointFrame",
    "PenaltyParams",
    "VBDTransmissions",
    "add_angle_row",
    "assemble_tree_bodies",
    "assemble_tree_bodies_transmissions",
    "assemble_tree_bodies_transmissions_universal",
    "assemble_tree_bodies_universal",
    "add_contact",
    "add_joint",
    "add_point_row",
    "add_tendon_slot",
    "add_transmission",
    "add_twist_row",
    "contact_forces",
    "contact_frame",
    "contact_lambda_t",
    "contact_push",
    "mark_crossed_contacts",
    "restore_idle_trees",
    "coordinate_jacobian",
    "dof_coordinate",
    "coupling_rate",
    "coupling_row",
    "joint_angular_error",
    "joint_frame",
    "joint_linear_error",
    "move_body",
    "moving_mass",
    "paired_slot",
    "row_law",
    "row_stiffness",
    "slot_run_end",
    "solve_block",
    "solve_body_colour",
    "solve_body_colour_tendons",
    "solve_body_colour_transmissions",
    "solve_body_colour_transmissions_universal",
    "solve_body_colour_universal",
    "transmission_owner",
    "transmission_rows",
    "update_contact_duals",
    "update_coupling_duals",
    "update_joint_duals",
    "update_transmission_duals",
]
