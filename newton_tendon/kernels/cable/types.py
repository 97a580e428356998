"""Routed cables: the structs that carry a cable's state between kernels and the host.

``TendonHistory`` is a State's cable history (material per span, route membership, material points,
winch pay-out); ``TendonWork`` is the solver-owned per-step scratch of the material relaxation;
``TendonDiagnostics`` is what ``tendon_diagnostics`` writes for the solver's diagnostic arrays. The
host builds them in ``newton_tendon.state`` and ``newton_tendon.solvers.base``: a field added here
is filled there. The cached route geometry (``TendonGeometry``) lives with its functions in
``cached``, SolverVBD's rows (``TendonLinearization``) in ``vbd_rows``.
"""

import warp as wp

wp.set_module_options({"enable_backward": False})


@wp.struct
class TendonHistory:
    """A State's routed-tendon history: material per span, route membership, body-local material
    points of each span's ends, and whether the history was seeded (see ``State``)."""

    rest: wp.array(dtype=float)
    residual: wp.array(dtype=float)
    active: wp.array(dtype=wp.int32)
    ml: wp.array(dtype=wp.vec3)
    mr: wp.array(dtype=wp.vec3)
    seeded: wp.array(dtype=wp.int32)
    winch: wp.array(dtype=float)


@wp.struct
class TendonWork:
    """Solver-owned per-step tendon arrays: starting span lengths, multipliers and the scratch of
    the material relaxation (runs of frictionless spans, capstan ratios), plus the attachment
    points and wrap flags that double as diagnostics."""

    stretch0: wp.array(dtype=float)
    rest0: wp.array(dtype=float)
    lam: wp.array(dtype=float)
    lam_hat: wp.array(dtype=float)
    stiff: wp.array(dtype=float)
    xl: wp.array(dtype=wp.vec3)
    xr: wp.array(dtype=wp.vec3)
    ratio: wp.array(dtype=float)
    run_first: wp.array(dtype=wp.int32)
    run_flex: wp.array(dtype=float)
    run_num: wp.array(dtype=float)
    run_begin: wp.array(dtype=wp.int32)
    run_end: wp.array(dtype=wp.int32)
    run_scale: wp.array(dtype=float)
    run_skip: wp.array(dtype=wp.int32)
    wrap_error: wp.array(dtype=wp.int32)
    winch_force: wp.array(dtype=float)
    sweeps: wp.array(dtype=wp.int32)


@wp.struct
class TendonDiagnostics:
    """Solver diagnostics written after each step and at construction and reset (names as on the
    solver, see ``RoutedTendonLaunchers``). ``lam_prev`` is read: the XPBD multipliers before the last
    iteration; ``lam_out``/``dlam_out`` are newton's sign and units of the multiplier and its last step;
    ``rest_out``/``ml_out``/``mr_out`` the material the next step starts from (``history.fold_span``)."""

    material_tension: wp.array(dtype=float)
    damping_tension: wp.array(dtype=float)
    seg_stiffness: wp.array(dtype=wp.float64)
    seg_active: wp.array(dtype=wp.int32)
    seg_compliance: wp.array(dtype=float)
    seg_damping: wp.array(dtype=float)
    rolling_l: wp.array(dtype=float)
    rolling_r: wp.array(dtype=float)
    lam_prev: wp.array(dtype=float)
    lam_out: wp.array(dtype=float)
    dlam_out: wp.array(dtype=float)
    guide_l: wp.array(dtype=wp.int32)
    guide_r: wp.array(dtype=wp.int32)
    guide_active: wp.array(dtype=wp.int32)
    guide_wrap: wp.array(dtype=float)
    total_cable: wp.array(dtype=float)
    total_length: wp.array(dtype=float)
    rest_out: wp.array(dtype=float)
    ml_out: wp.array(dtype=wp.vec3)
    mr_out: wp.array(dtype=wp.vec3)
