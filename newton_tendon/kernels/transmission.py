"""Transmission tendons: one scalar length coordinate per tendon and the force elements acting on it.

An index of the concern's modules, whose names it re-exports (the import path of the kernels, structs
and functions the host and the VBD sweep use):

* ``transmission_data``: the structs (model, scratch, parameters, control, step work, report), the
  slot layout of the Jacobian and the constants the others share;
* ``transmission_geometry``: length, slot Jacobians, rate and effective inverse mass W at a pose;
* ``transmission_rows``: the force elements (spring and damping, drive and activation, limits, dry
  friction, armature) as rows of the shared impulse solver: set-up at the step start, SolverXPBD's
  projected update, the report and the reset;
* ``transmission_couplings``: polynomial couplings between two tendons;
* ``transmission_splitting``: SolverXPBD's mass splitting across the row owners of a body.

Every transmission kernel compiles into the Warp module of this name (``TRANSMISSION_KERNELS``).

Keep this file free of Warp functions, structs and kernels: the modules above register their kernels into the
Warp module of this file's name by ``module=``, and a construct defined here would register into it
under this file's loader, which makes Warp clear the kernels already there (checked with Warp 1.19).
"""

from newton_tendon.kernels.transmission_couplings import (
    CouplingModel,
    CouplingWork,
    begin_couplings,
    coupling_body_inverse_mass,
    coupling_inverse_mass,
    coupling_jacobian,
    coupling_lambda,
    coupling_slot,
    coupling_slot_count,
    polynomial,
    report_coupling_forces,
    solve_couplings,
)
from newton_tendon.kernels.transmission_data import (
    BIG,
    ROWS,
    TRANSMISSION_FIXED,
    TRANSMISSION_KERNELS,
    TRANSMISSION_SPATIAL,
    TransmissionControl,
    TransmissionModel,
    TransmissionParams,
    TransmissionReport,
    TransmissionScratch,
    TransmissionWork,
    vec6,
)
from newton_tendon.kernels.transmission_geometry import (
    JACOBIAN_CANCEL,
    TWO_PI,
    body_com,
    body_inverse_mass,
    body_jacobian,
    effective_inverse_mass,
    iterate_rate,
    joint_frames,
    joint_term,
    point_jacobian,
    report_geometry,
    response,
    shift_poses,
    slot_begin,
    slot_end,
    slot_inverse_mass,
    transmission_geometry,
    transmission_lengths,
    transmission_rate,
    uncancelled,
    update_transmission_geometry,
)
from newton_tendon.kernels.transmission_rows import (
    CURVATURE_STEP,
    TINY,
    begin_transmissions,
    report_transmissions,
    reset_transmissions,
    row_update,
    setup_rows,
    solve_transmissions,
    total_impulse,
)
from newton_tendon.kernels.transmission_splitting import (
    count_row_owners,
    is_row_owner,
    split_coupling_masses,
    split_transmission_masses,
)

__all__ = [
    "BIG",
    "CURVATURE_STEP",
    "JACOBIAN_CANCEL",
    "ROWS",
    "TINY",
    "TRANSMISSION_FIXED",
    "TRANSMISSION_KERNELS",
    "TRANSMISSION_SPATIAL",
    "TWO_PI",
    "CouplingModel",
    "CouplingWork",
    "TransmissionControl",
    "TransmissionModel",
    "TransmissionParams",
    "TransmissionReport",
    "TransmissionScratch",
    "TransmissionWork",
    "begin_couplings",
    "begin_transmissions",
    "body_com",
    "body_inverse_mass",
    "body_jacobian",
    "count_row_owners",
    "coupling_body_inverse_mass",
    "coupling_inverse_mass",
    "coupling_jacobian",
    "coupling_lambda",
    "coupling_slot",
    "coupling_slot_count",
    "effective_inverse_mass",
    "is_row_owner",
    "iterate_rate",
    "joint_frames",
    "joint_term",
    "point_jacobian",
    "polynomial",
    "report_coupling_forces",
    "report_geometry",
    "report_transmissions",
    "reset_transmissions",
    "response",
    "row_update",
    "setup_rows",
    "shift_poses",
    "slot_begin",
    "slot_end",
    "slot_inverse_mass",
    "solve_couplings",
    "solve_transmissions",
    "split_coupling_masses",
    "split_transmission_masses",
    "total_impulse",
    "transmission_geometry",
    "transmission_lengths",
    "transmission_rate",
    "uncancelled",
    "update_transmission_geometry",
    "vec6",
]
