"""Spatial transmission tendon geometry (``newton_tendon/kernels/spatial.py``, ``newton_tendon/transmission.py``).

Oracles: the independent float64 reference in ``tests/transmission/spatial_reference.py``, central finite
differences of that reference for every reported gradient, the spec's worked pulley example and
closed-form wraps, and MuJoCo's ``ten_length`` for the same MJCF geometry (MuJoCo >= 4.0 uses the
same side-site rule: the route keeps the winding of endpoint -> side site -> endpoint).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import warp as wp

from newton_tendon.transmission import (
    SPATIAL_PATH_KEYS,
    TendonPulley,
    TendonSite,
    TendonWrap,
    flatten_spatial_path,
    spatial_path_model,
)
from newton_tendon.kernels.spatial import SPATIAL_PULLEY, SPATIAL_SITE, spatial_tendon_geometry

from .spatial_reference import advance_poses, body_rotation, quat_matrix, route_info, tendon_length

LENGTH_RTOL = 1.0e-5
"""float32 kernel vs float64 oracle: coordinates of O(1) m carry ~6e-8 relative rounding, and a
route takes a few dozen operations (atan2, sqrt, rotations), so errors stay well below 1e-5."""
LENGTH_ATOL = 1.0e-6
"""Absolute floor [m] for short routes, where relative rounding of O(1) m coordinates dominates."""
JV_ATOL = 2.0e-4
"""|J v - FD| bound [m/s] for unit-scale twists. Gradients are float32 unit vectors (~1e-6), but a
tangent direction from an endpoint close to the surface amplifies rounding of the tangent point by
1/|a - t|; configurations within MARGIN of a jump are skipped, which bounds that factor."""
MARGIN = 2.0e-3
"""Skip random configurations this close (relative to the radius, or in rad) to a route jump, where
float32 and float64 may pick different routes (spec: route selection is nonsmooth)."""

IDENTITY_Q = np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]])


# ---------------------------------------------------------------------------------------------
# helpers


def run_geometry(paths, body_q, device, body_count=None):
    """Flatten ``paths``, launch the kernel, return (length, point_a, grad_a, point_b, grad_b, flat body, start)."""
    body_q = np.asarray(body_q, dtype=np.float64).reshape(-1, 7)
    nb = body_q.shape[0] if body_count is None else body_count
    flats = [flatten_spatial_path(p, nb, name=f"t{k}") for k, p in enumerate(paths)]
    model = spatial_path_model(flats, device=device)
    n = sum(len(f["type"]) for f in flats)
    bq = wp.array(body_q.astype(np.float32), dtype=wp.transform, device=device)
    nan3 = np.full((max(n, 1), 3), np.nan, dtype=np.float32)
    length = wp.array(np.full(len(paths), np.nan, dtype=np.float32), dtype=float, device=device)
    outs = [wp.array(nan3, dtype=wp.vec3, device=device) for _ in range(4)]
    wp.launch(spatial_tendon_geometry, dim=len(paths), inputs=[model, bq], outputs=[length, *outs], device=device)
    res = [length.numpy().astype(np.float64)] + [o.numpy().astype(np.float64)[:n] for o in outs]
    body = np.array([b for f in flats for b in f["body"]], dtype=np.int64)
    return (*res, body, model.start.numpy())


def length_rate(start, body, pa, ga, pb, gb, body_q, body_com, v, w):
    """J v per tendon: sum over points of grad . (v_b + w_b x (p - com_b)); world points do not move."""
    out = np.zeros(len(start) - 1)
    for t in range(len(start) - 1):
        for i in range(start[t], start[t + 1]):
            b = body[i]
            if b < 0:
                continue
            com = body_q[b, :3] + quat_matrix(body_q[b, 3:]) @ body_com[b]
            for p, g in ((pa[i], ga[i]), (pb[i], gb[i])):
                out[t] += g @ (v[b] + np.cross(w[b], p - com))
    return out


def random_poses(rng, n):
    q = rng.normal(size=(n, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    return np.hstack([rng.uniform(-0.5, 0.5, (n, 3)), q])


def to_local(body_q, body, p):
    if body < 0:
        return tuple(float(x) for x in p)
    rot = quat_matrix(body_q[body, 3:])
    return tuple(float(x) for x in rot.T @ (np.asarray(p) - body_q[body, :3]))


def random_unit(rng):
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def random_wrap(rng, body_q, a, b, kind, side_mode):
    """A wrap near the segment a-b (world), on a random body, with a side site of the given mode."""
    nb = body_q.shape[0]
    seg = max(float(np.linalg.norm(b - a)), 0.2)
    r = float(rng.uniform(0.08, 0.35) * seg)
    c = 0.5 * (a + b) + rng.normal(size=3) * 0.6 * r
    body = int(rng.integers(-1, nb))
    axis_w = np.cross(b - a, random_unit(rng)) + 0.3 * seg * random_unit(rng)
    axis_w /= np.linalg.norm(axis_w)
    axis = tuple(float(x) for x in body_rotation(body_q, body).T @ axis_w)
    side = None
    if side_mode != "none":
        d = random_unit(rng)
        if kind == "cylinder":
            d = d - (d @ axis_w) * axis_w
            d /= np.linalg.norm(d)
        dist = rng.uniform(1.3, 3.0) if side_mode == "outside" else rng.uniform(0.0, 0.8)
        s = c + d * dist * r
        if kind == "cylinder":  # interiority is measured perpendicular to the axis (spec)
            s = s + axis_w * rng.uniform(-3.0, 3.0) * r
        sb = int(rng.integers(-1, nb))
        side = TendonSite(body=sb, offset=to_local(body_q, sb, s))
    return TendonWrap(kind=kind, body=body, offset=to_local(body_q, body, c), axis=axis, radius=r, side=side)


def random_path(rng, body_q, wrap_prob=0.7):
    """Random path: 1-2 branches (random divisors, sometimes a leading pulley), 2-4 sites each,
    a random wrap (sphere/cylinder, no/exterior/interior side site) between sites with wrap_prob."""
    nb = body_q.shape[0]
    path = []
    if rng.random() < 0.2:
        path.append(TendonPulley(divisor=float(rng.uniform(0.5, 3.0))))
    for branch in range(int(rng.integers(1, 3))):
        if branch > 0:
            path.append(TendonPulley(divisor=float(rng.uniform(0.5, 3.0))))
        prev = None
        for _ in range(int(rng.integers(2, 5))):
            body = int(rng.integers(-1, nb))
            p = rng.uniform(-1.0, 1.0, 3)
            if prev is not None and rng.random() < wrap_prob:
                kind = str(rng.choice(["sphere", "cylinder"]))
                mode = str(rng.choice(["none", "outside", "inside"]))
                path.append(random_wrap(rng, body_q, prev, p, kind, mode))
            path.append(TendonSite(body=body, offset=to_local(body_q, body, p)))
            prev = p
    return path


def cross2(a, b) -> float:
    """z component of the planar cross product of the first two components of a and b."""
    return float(a[0] * b[1] - a[1] * b[0])


def unit_twists(rng, nb):
    v = rng.normal(size=(nb, 3))
    w = rng.normal(size=(nb, 3))
    return v, w


# ---------------------------------------------------------------------------------------------
# random configurations against the float64 reference


def test_random_lengths_match_reference(device):
    """The float32 kernel reproduces the float64 reference length of random multi-branch paths
    with sphere/cylinder wraps and no, exterior and interior side sites (spec eqs. for l)."""
    rng = np.random.default_rng(1234)
    body_q = random_poses(rng, 3)
    paths = [random_path(rng, body_q) for _ in range(400)]
    length, *_ = run_geometry(paths, body_q, device)
    infos = [route_info(p, body_q) for p in paths]
    ok = np.array([i.margin > MARGIN for i in infos])
    ref = np.array([i.length for i in infos])
    assert np.all(np.isfinite(length))
    assert ok.sum() > 0.85 * len(paths)
    err = np.abs(length - ref)[ok]
    assert np.all(err <= LENGTH_ATOL + LENGTH_RTOL * ref[ok]), f"max length error {err.max():.3e}"
    modes = [m for i, p in zip(infos, paths, strict=True) for m in i.modes]
    # Every routing regime is exercised many times.
    assert modes.count("wrap") > 80 and modes.count("bend") > 30 and modes.count("straight") > 80


def test_random_gradients_match_finite_differences(device):
    """J v from the reported points and gradients equals the central finite difference of the
    reference length along random rigid-body twists of each body (virtual work: spec "Length, velocity, and
    virtual work"), for sites, wrap contact points of moving wraps and pulley-scaled branches."""
    rng = np.random.default_rng(99)
    body_q = random_poses(rng, 3)
    body_com = rng.uniform(-0.2, 0.2, (3, 3))
    paths = [random_path(rng, body_q) for _ in range(150)]
    length, pa, ga, pb, gb, body, start = run_geometry(paths, body_q, device)
    keep = [route_info(p, body_q).margin > MARGIN for p in paths]
    h = 1.0e-6
    worst = 0.0
    # One body moves at a time (a translation and a rotation about its COM), so errors on
    # different bodies cannot cancel.
    for moving in range(3):
        v, w = unit_twists(rng, 3)
        v[np.arange(3) != moving] = 0.0
        w[np.arange(3) != moving] = 0.0
        jv = length_rate(start, body, pa, ga, pb, gb, body_q, body_com, v, w)
        qp = advance_poses(body_q, body_com, v, w, h)
        qm = advance_poses(body_q, body_com, v, w, -h)
        for t, p in enumerate(paths):
            if not keep[t]:
                continue
            fd = (tendon_length(p, qp) - tendon_length(p, qm)) / (2.0 * h)
            worst = max(worst, abs(jv[t] - fd))
            assert abs(jv[t] - fd) <= JV_ATOL, f"tendon {t}: J v {jv[t]:.6f} vs FD {fd:.6f}"
    assert worst > 0.0


def test_internal_forces_balance(device):
    """Moving every body and the world together leaves l unchanged, so the reported gradients
    (forces per unit tension) sum to zero force and zero moment (spec: internal routes cannot
    accelerate an object they lie entirely on)."""
    rng = np.random.default_rng(5)
    body_q = random_poses(rng, 2)
    paths = [random_path(rng, body_q) for _ in range(100)]
    _, pa, ga, pb, gb, _, start = run_geometry(paths, body_q, device)
    for t in range(len(paths)):
        sl = slice(start[t], start[t + 1])
        force = ga[sl].sum(0) + gb[sl].sum(0)
        moment = np.cross(pa[sl], ga[sl]).sum(0) + np.cross(pb[sl], gb[sl]).sum(0)
        assert np.abs(force).max() < 1.0e-5
        assert np.abs(moment).max() < 2.0e-5


def test_outputs_deterministic_and_graph_capturable(device):
    """Two launches give bitwise-identical outputs, and a captured launch replays to the same
    outputs (no allocation or host synchronization inside the kernel)."""
    rng = np.random.default_rng(7)
    body_q = random_poses(rng, 3)
    paths = [random_path(rng, body_q) for _ in range(20)]
    flats = [flatten_spatial_path(p, 3) for p in paths]
    model = spatial_path_model(flats, device=device)
    n = int(model.start.numpy()[-1])
    bq = wp.array(body_q.astype(np.float32), dtype=wp.transform, device=device)

    def outputs():
        return [wp.zeros(len(paths), dtype=float, device=device)] + [
            wp.zeros(n, dtype=wp.vec3, device=device) for _ in range(4)
        ]

    first, second, replay = outputs(), outputs(), outputs()
    wp.launch(spatial_tendon_geometry, dim=len(paths), inputs=[model, bq], outputs=first, device=device)
    wp.launch(spatial_tendon_geometry, dim=len(paths), inputs=[model, bq], outputs=second, device=device)
    with wp.ScopedCapture(device=device) as cap:
        wp.launch(spatial_tendon_geometry, dim=len(paths), inputs=[model, bq], outputs=replay, device=device)
    wp.capture_launch(cap.graph)
    for x, y, z in zip(first, second, replay, strict=True):
        assert np.array_equal(x.numpy(), y.numpy())
        assert np.array_equal(x.numpy(), z.numpy())


# ---------------------------------------------------------------------------------------------
# worked examples


def test_pulley_example_divisors_one_and_two(device):
    """Spec "Pulley branches": divisors 1 and 2 give l = s_A + s_B / 2; branch B's gradients are
    halved, so at T = 10 N its straight segments pull with 5 N."""
    a0, a1 = (0.0, 0.0, 0.0), (0.0, 0.0, 3.0)
    b0, b1, b2 = (1.0, 0.0, 0.0), (1.0, 4.0, 0.0), (4.0, 4.0, 0.0)
    path = [
        TendonSite(offset=a0),
        TendonSite(offset=a1),
        TendonPulley(divisor=2.0),
        TendonSite(offset=b0),
        TendonSite(offset=b1),
        TendonSite(offset=b2),
    ]
    length, pa, ga, pb, gb, *_ = run_geometry([path], IDENTITY_Q, device)
    assert length[0] == pytest.approx(3.0 + (4.0 + 3.0) / 2.0, rel=1e-6)
    np.testing.assert_allclose(ga[0], [0.0, 0.0, -1.0], atol=1e-7)
    np.testing.assert_allclose(ga[1], [0.0, 0.0, 1.0], atol=1e-7)
    np.testing.assert_allclose(ga[2], 0.0)  # the pulley is no spatial point
    np.testing.assert_allclose(ga[3], [0.0, -0.5, 0.0], atol=1e-7)
    np.testing.assert_allclose(ga[4], [-0.5, 0.5, 0.0], atol=1e-7)  # via point: both segments
    np.testing.assert_allclose(ga[5], [0.5, 0.0, 0.0], atol=1e-7)
    tension = 10.0
    assert np.linalg.norm(-tension * ga[5]) == pytest.approx(5.0, rel=1e-6)
    assert np.all(gb == 0.0)


def test_leading_pulley_replaces_initial_divisor(device):
    """A leading pulley sets the first branch's divisor; each later pulley sets its branch's
    divisor directly instead of multiplying (spec "Pulley branches")."""
    path = [
        TendonPulley(divisor=4.0),
        TendonSite(offset=(0.0, 0.0, 0.0)),
        TendonSite(offset=(2.0, 0.0, 0.0)),
        TendonPulley(divisor=0.5),
        TendonSite(offset=(0.0, 0.0, 0.0)),
        TendonSite(offset=(0.0, 1.0, 0.0)),
    ]
    flat = flatten_spatial_path(path, 0)
    assert flat["divisor"] == [4.0, 4.0, 4.0, 0.5, 0.5, 0.5]
    length, *_ = run_geometry([path], np.zeros((0, 7)), device)
    assert length[0] == pytest.approx(2.0 / 4.0 + 1.0 / 0.5, rel=1e-6)


def sphere_closed_form(a, b, c, r):
    """Spec: l = sqrt(rho_a^2 - r^2) + r theta + sqrt(rho_b^2 - r^2), with the sweep
    theta = angle(a, b) - acos(r / rho_a) - acos(r / rho_b) around the centre c."""
    u, v = np.asarray(a) - c, np.asarray(b) - c
    ra, rb = np.linalg.norm(u), np.linalg.norm(v)
    g = math.acos(u @ v / (ra * rb))
    theta = g - math.acos(r / ra) - math.acos(r / rb)
    return math.sqrt(ra * ra - r * r) + r * theta + math.sqrt(rb * rb - r * r), theta


def test_sphere_wrap_closed_form_and_contact_points(device):
    """A sphere the direct segment cuts: the length equals the spec's tangent-arc-tangent formula,
    the contact points lie on the sphere, each tangent is perpendicular to its radius, and the
    sphere receives the two end tensions at the contact points."""
    c = np.array([0.2, -0.1, 0.3])
    r = 0.5
    a, b = c + [-1.5, 0.2, 0.1], c + [1.2, -0.1, 0.3]
    path = [
        TendonSite(offset=tuple(a)),
        TendonWrap(kind="sphere", offset=tuple(c), radius=r),
        TendonSite(offset=tuple(b)),
    ]
    length, pa, ga, pb, gb, *_ = run_geometry([path], IDENTITY_Q, device)
    expected, theta = sphere_closed_form(a, b, c, r)
    assert theta > 0.3
    assert length[0] == pytest.approx(expected, rel=LENGTH_RTOL)
    ta, tb = pa[1], pb[1]
    assert np.linalg.norm(ta - c) == pytest.approx(r, rel=1e-5)
    assert np.linalg.norm(tb - c) == pytest.approx(r, rel=1e-5)
    assert abs((ta - a) @ (ta - c)) < 1e-5 and abs((b - tb) @ (tb - c)) < 1e-5
    np.testing.assert_allclose(ga[1], (ta - a) / np.linalg.norm(ta - a), atol=1e-6)
    np.testing.assert_allclose(gb[1], -(b - tb) / np.linalg.norm(b - tb), atol=1e-6)
    np.testing.assert_allclose(ga[0], -ga[1], atol=1e-7)
    np.testing.assert_allclose(ga[2], -gb[1], atol=1e-7)


def test_sphere_missed_without_side_site_is_straight(device):
    """Without a side site the direct segment is used when it misses the sphere."""
    path = [
        TendonSite(offset=(-2.0, 0.0, 1.2)),
        TendonWrap(kind="sphere", radius=1.0),
        TendonSite(offset=(2.0, 0.0, 1.2)),
    ]
    length, pa, ga, pb, gb, *_ = run_geometry([path], IDENTITY_Q, device)
    assert length[0] == pytest.approx(4.0, rel=1e-6)
    assert np.all(ga[1] == 0.0) and np.all(gb[1] == 0.0)
    np.testing.assert_allclose(pa[1], 0.0)


def planar_wrap_length(pa, pb, r, winding):
    """Tangent-arc-tangent planar length for endpoints at 2D pa, pb around a circle of radius r at
    the origin with route winding angle ``winding`` [rad]."""
    ra, rb = np.linalg.norm(pa), np.linalg.norm(pb)
    arc = abs(winding) - math.acos(r / ra) - math.acos(r / rb)
    return math.sqrt(ra * ra - r * r) + r * arc + math.sqrt(rb * rb - r * r)


def test_cylinder_helix_length_and_axial_gradient(device):
    """Spec: l = sqrt(s_perp^2 + dz^2) for a cylinder, with the axial rise spread in proportion to
    the planar route; the end gradients carry the axial component dz/l (a helix, not a flat arc)."""
    r = 1.0
    a = np.array([-2.0, -0.5, 0.3])
    b = np.array([2.0, -0.5, -0.7])
    w0 = math.atan2(cross2(a, b), a[:2] @ b[:2])
    s_perp = planar_wrap_length(a[:2], b[:2], r, w0)
    path = [TendonSite(offset=tuple(a)), TendonWrap(kind="cylinder", radius=r), TendonSite(offset=tuple(b))]
    length, pa, ga, pb, gb, *_ = run_geometry([path], IDENTITY_Q, device)
    expected = math.hypot(s_perp, b[2] - a[2])
    assert length[0] == pytest.approx(expected, rel=LENGTH_RTOL)
    assert ga[0][2] == pytest.approx(-(b[2] - a[2]) / expected, abs=1e-6)
    assert ga[2][2] == pytest.approx((b[2] - a[2]) / expected, abs=1e-6)
    # Contact points on the surface, at heights interpolated along the planar route.
    for p in (pa[1], pb[1]):
        assert np.hypot(p[0], p[1]) == pytest.approx(r, rel=1e-6)
    la = math.sqrt(a[:2] @ a[:2] - r * r)
    assert pa[1][2] == pytest.approx(a[2] + (b[2] - a[2]) * la / s_perp, abs=1e-6)
    # An infinite cylinder: sliding it along its axis changes nothing.
    assert (ga[1] + gb[1])[2] == pytest.approx(0.0, abs=1e-6)


def test_cylinder_is_infinite_and_axis_follows_body(device):
    """The wrap surface is the infinite cylinder (no caps), with its axis rotated by its body:
    the same planar route far along the axis gives the same helix length."""
    q = (0.0, math.sin(math.pi / 4), 0.0, math.cos(math.pi / 4))  # +90 deg about y: local z -> world x
    body_q = np.array([[0.3, 0.1, -0.2, *q]])
    rot = quat_matrix(q)
    a_l, b_l = np.array([-2.0, -0.5, 25.0]), np.array([2.0, -0.5, 27.0])
    path = [
        TendonSite(body=0, offset=tuple(a_l)),
        TendonWrap(kind="cylinder", body=0, radius=1.0, axis=(0.0, 0.0, 3.0)),
        TendonSite(body=-1, offset=tuple(body_q[0, :3] + rot @ b_l)),
    ]
    length, *_ = run_geometry([path], body_q, device)
    s_perp = planar_wrap_length(a_l[:2], b_l[:2], 1.0, math.atan2(cross2(a_l, b_l), a_l[:2] @ b_l[:2]))
    assert length[0] == pytest.approx(math.hypot(s_perp, 2.0), rel=LENGTH_RTOL)


def overhead_path(height, side_y):
    """Endpoints at y = height on either side of a unit cylinder (axis z) with a side site at y = side_y."""
    return [
        TendonSite(offset=(-2.0, height, 0.0)),
        TendonWrap(kind="cylinder", radius=1.0, side=TendonSite(offset=(0.0, side_y, 0.0))),
        TendonSite(offset=(2.0, height, 0.0)),
    ]


def test_exterior_side_site_keeps_overhead_pulley_and_releases(device):
    """Spec "Side sites": a side site above the pulley keeps the route over it even when the
    direct segment passes below and misses; one below lets the straight segment through; the
    route releases when the direct segment reaches the selected side (it then passes above)."""
    heights = [-1.5, -0.5, 0.5, 0.999, 1.001, 1.5]
    up = run_geometry([overhead_path(h, 2.0) for h in heights], IDENTITY_Q, device)[0]
    down = run_geometry([overhead_path(-1.5, -2.0)], IDENTITY_Q, device)[0]
    assert down[0] == pytest.approx(4.0, rel=1e-6)
    for h, got in zip(heights, up, strict=True):
        pa, pb = np.array([-2.0, h]), np.array([2.0, h])
        if h >= 1.0:
            assert got == pytest.approx(4.0, rel=1e-6)
        else:
            # Clockwise over the top: the polyline a -> (0, 1) -> b winds negatively; below the
            # centre the direct segment winds the other way, so the route winds 2 pi - |W0|.
            g = abs(math.atan2(cross2(pa, pb), pa @ pb))
            winding = -(2.0 * math.pi - g) if h < 0.0 else -g
            assert got == pytest.approx(planar_wrap_length(pa, pb, 1.0, winding), rel=LENGTH_RTOL), h
    # The release at the top tangency is continuous.
    assert abs(up[3] - up[4]) < 1e-3
    # Without the side site the missed segment is straight.
    free = run_geometry(
        [[overhead_path(-1.5, 2.0)[0], TendonWrap(kind="cylinder", radius=1.0), overhead_path(-1.5, 2.0)[2]]],
        IDENTITY_Q,
        device,
    )[0]
    assert free[0] == pytest.approx(4.0, rel=1e-6)


def test_side_site_selects_long_way_round(device):
    """A side site behind the sphere routes the tendon around the far side (a wrap longer than
    180 degrees), as the polyline endpoint -> side site -> endpoint does."""
    a, b = np.array([2.0, 0.5, 0.0]), np.array([2.0, -0.5, 0.0])
    path = [
        TendonSite(offset=tuple(a)),
        TendonWrap(kind="sphere", radius=1.0, side=TendonSite(offset=(-3.0, 0.0, 0.0))),
        TendonSite(offset=tuple(b)),
    ]
    length, *_ = run_geometry([path], IDENTITY_Q, device)
    g = abs(math.atan2(cross2(a, b), a[:2] @ b[:2]))
    expected = planar_wrap_length(a[:2], b[:2], 1.0, 2.0 * math.pi - g)
    assert math.pi < 2.0 * math.pi - g - 2.0 * math.acos(1.0 / np.linalg.norm(a))
    assert length[0] == pytest.approx(expected, rel=LENGTH_RTOL)


@pytest.mark.parametrize("kind", ["sphere", "cylinder"])
def test_interior_side_site_bends_through_surface(device, kind):
    """Spec: an interior side site forces the route through the obstacle: a direct segment that
    cuts it is kept, otherwise the route bends at the single surface point minimizing the two
    straight lengths (checked by brute force); the bend point receives both tensions."""
    r = 1.0
    # A cylinder's side site is interior when inside the cross-section disk, at any height.
    side = TendonSite(offset=(0.1, 0.2, 0.0 if kind == "sphere" else 4.0))
    a, b = np.array([-1.6, 1.3, 0.2]), np.array([1.9, 1.1, -0.4])
    path = [TendonSite(offset=tuple(a)), TendonWrap(kind=kind, radius=r, side=side), TendonSite(offset=tuple(b))]
    cut = [
        TendonSite(offset=(-1.6, 0.3, 0.2)),
        TendonWrap(kind=kind, radius=r, side=side),
        TendonSite(offset=(1.9, 0.1, -0.4)),
    ]
    length, pa, ga, pb, gb, *_ = run_geometry([path, cut], IDENTITY_Q, device)
    assert length[1] == pytest.approx(np.linalg.norm([3.5, -0.2, -0.6]), rel=1e-6)
    # Brute force over the bend point on the surface (sphere: 3D; cylinder: circle + free height).
    phis = np.linspace(0.0, 2.0 * math.pi, 200001)
    if kind == "sphere":
        e1 = a / np.linalg.norm(a)
        n = np.cross(a, b)
        n /= np.linalg.norm(n)
        e2 = np.cross(n, e1)
        pts = r * (np.cos(phis)[:, None] * e1 + np.sin(phis)[:, None] * e2)
        best = np.min(np.linalg.norm(pts - a, axis=1) + np.linalg.norm(pts - b, axis=1))
    else:
        pts = r * np.stack([np.cos(phis), np.sin(phis)], 1)
        planar = np.linalg.norm(pts - a[:2], axis=1) + np.linalg.norm(pts - b[:2], axis=1)
        best = math.hypot(planar.min(), b[2] - a[2])
    assert length[0] == pytest.approx(best, rel=LENGTH_RTOL)
    assert length[0] > np.linalg.norm(b - a) + 1e-3
    p = pa[1]
    radial = p if kind == "sphere" else p * [1.0, 1.0, 0.0]
    assert np.linalg.norm(radial) == pytest.approx(r, rel=1e-5)
    np.testing.assert_allclose(pb[1], p, atol=1e-6)
    np.testing.assert_allclose(ga[1] + gb[1], -(ga[0] + ga[2]), atol=1e-6)


@pytest.mark.parametrize("kind", ["sphere", "cylinder"])
def test_endpoint_on_or_inside_surface_is_straight(device, kind):
    """Spec: an endpoint on or inside an exterior wrapping surface falls back to the unwrapped segment."""
    paths = []
    for a in [(-0.5, 0.0, 0.0), (-1.0, 0.0, 0.0)]:
        for side in (None, TendonSite(offset=(0.0, 3.0, 0.0)), TendonSite(offset=(0.0, 0.2, 0.0))):
            paths.append(
                [TendonSite(offset=a), TendonWrap(kind=kind, radius=1.0, side=side), TendonSite(offset=(3.0, 0.1, 0.0))]
            )
    length, pa, ga, pb, gb, *_ = run_geometry(paths, IDENTITY_Q, device)
    for k, p in enumerate(paths):
        assert length[k] == pytest.approx(np.linalg.norm(np.subtract(p[2].offset, p[0].offset)), rel=1e-6)
        assert np.all(ga[3 * k + 1] == 0.0)


def test_coincident_points_have_zero_direction(device):
    """Spec: coincident endpoints give a zero-length segment with a zero direction, never NaN."""
    path = [
        TendonSite(offset=(0.0, 0.0, 0.0)),
        TendonSite(offset=(0.0, 0.0, 0.0)),
        TendonSite(offset=(0.0, 2.0, 0.0)),
        TendonWrap(kind="sphere", offset=(5.0, 5.0, 5.0), radius=0.5),
        TendonSite(offset=(0.0, 2.0, 0.0)),
    ]
    length, pa, ga, pb, gb, *_ = run_geometry([path], IDENTITY_Q, device)
    assert length[0] == pytest.approx(2.0, rel=1e-7)
    np.testing.assert_array_equal(ga[0], 0.0)
    np.testing.assert_allclose(ga[1], [0.0, -1.0, 0.0])
    np.testing.assert_allclose(ga[2], [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(ga[4], 0.0)
    assert all(np.all(np.isfinite(x)) for x in (pa, ga, pb, gb))


def test_endpoints_collinear_with_centre_give_no_nan(device):
    """Endpoints collinear with a sphere's centre leave the wrapping plane undefined: the kernel
    picks a deterministic plane (through the side site when there is one) and every plane gives
    theta = pi - alpha_a - alpha_b; a cylinder with endpoints opposite through its axis likewise."""
    a, b = (-2.0, 0.0, 0.0), (3.0, 0.0, 0.0)
    r = 1.0
    expected = math.sqrt(3.0) + r * (math.pi - math.acos(0.5) - math.acos(1.0 / 3.0)) + math.sqrt(8.0)
    paths = []
    for kind in ("sphere", "cylinder"):
        for side in (
            None,
            TendonSite(offset=(0.0, 0.0, 2.0)),
            TendonSite(offset=(0.0, 2.0, 0.0)),
            TendonSite(offset=(1.5, 0.0, 0.0)),
        ):
            axis = (0.0, 0.0, 1.0) if side is None or side.offset[2] == 0.0 else (0.0, 1.0, 0.0)
            paths.append(
                [TendonSite(offset=a), TendonWrap(kind=kind, radius=r, axis=axis, side=side), TendonSite(offset=b)]
            )
    length, pa, ga, pb, gb, *_ = run_geometry(paths, IDENTITY_Q, device)
    assert all(np.all(np.isfinite(x)) for x in (length, pa, ga, pb, gb))
    np.testing.assert_allclose(length, expected, rtol=LENGTH_RTOL)
    # With a side site off the line, the route goes round through the side site's half plane.
    k = 1  # sphere, side site above
    assert pa[3 * k + 1][2] > 0.0 and pb[3 * k + 1][2] > 0.0


def test_side_site_on_plane_normal_gives_no_nan(device):
    """A sphere side site straight above the wrapping plane selects no side; the route takes the
    shorter one and stays finite."""
    path = [
        TendonSite(offset=(-2.0, 0.3, 0.0)),
        TendonWrap(kind="sphere", radius=1.0, side=TendonSite(offset=(0.0, 0.0, 2.0))),
        TendonSite(offset=(2.0, 0.3, 0.0)),
    ]
    length, pa, ga, pb, gb, *_ = run_geometry([path], IDENTITY_Q, device)
    assert all(np.all(np.isfinite(x)) for x in (length, pa, ga, pb, gb))
    assert length[0] == pytest.approx(tendon_length(path, IDENTITY_Q), rel=LENGTH_RTOL)


# ---------------------------------------------------------------------------------------------
# MuJoCo as an oracle


def mjcf_scene(body_count, paths, body_q0):
    """MJCF with free bodies, the paths' sites and wrap geoms, and one spatial tendon per path."""
    bodies = {b: [] for b in range(-1, body_count)}
    tendons = []
    names = iter(range(10**6))

    def site(s: TendonSite) -> str:
        name = f"s{next(names)}"
        bodies[s.body].append(f'<site name="{name}" pos="{" ".join(map(repr, s.offset))}"/>')
        return name

    for t, path in enumerate(paths):
        items = []
        for e in path:
            if isinstance(e, TendonSite):
                items.append(f'<site site="{site(e)}"/>')
            elif isinstance(e, TendonPulley):
                items.append(f'<pulley divisor="{e.divisor!r}"/>')
            else:
                g = f"g{next(names)}"
                size = f"{e.radius!r}" if e.kind == "sphere" else f"{e.radius!r} 0.05"
                bodies[e.body].append(
                    f'<geom name="{g}" type="{e.kind}" size="{size}" pos="{" ".join(map(repr, e.offset))}" '
                    f'zaxis="{" ".join(map(repr, e.axis))}" contype="0" conaffinity="0" mass="0"/>'
                )
                side = f' sidesite="{site(e.side)}"' if e.side is not None else ""
                items.append(f'<geom geom="{g}"{side}/>')
        tendons.append(f'<spatial name="t{t}">{"".join(items)}</spatial>')
    world = "".join(bodies[-1])
    body_xml = "".join(
        f'<body name="b{b}"><freejoint/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/>{"".join(bodies[b])}</body>'
        for b in range(body_count)
    )
    return f"<mujoco><worldbody>{world}{body_xml}</worldbody><tendon>{''.join(tendons)}</tendon></mujoco>"


def mujoco_random_path(rng, body_q):
    """Like ``random_path``, but interior side sites of cylinders sit on the cylinder's body in
    its cross-section plane: MuJoCo tests interiority by 3D distance, the spec perpendicular to the
    axis, and the two agree there."""
    path = random_path(rng, body_q)
    out = []
    for e in path:
        if isinstance(e, TendonWrap) and e.kind == "cylinder" and e.side is not None:
            c = np.asarray(e.offset)
            d = np.cross(np.asarray(e.axis), random_unit(rng))
            d /= np.linalg.norm(d)
            inside = rng.random() < 0.5
            dist = rng.uniform(0.0, 0.8) if inside else rng.uniform(1.3, 3.0)
            side = TendonSite(body=e.body, offset=tuple(float(x) for x in c + d * dist * e.radius))
            e = TendonWrap(kind="cylinder", body=e.body, offset=e.offset, axis=e.axis, radius=e.radius, side=side)
        out.append(e)
    return out


def test_lengths_match_mujoco(device):
    """MuJoCo's ten_length for the same sites, sphere/cylinder wraps, side sites and pulleys, at
    random free-body poses, equals the kernel's length (rtol 1e-5: float32 vs MuJoCo's float64)
    and the float64 reference's (rtol 1e-9)."""
    mujoco = pytest.importorskip("mujoco")
    rng = np.random.default_rng(2024)
    nb = 3
    compared = 0
    modes = []
    worst_kernel = worst_ref = 0.0
    for _scene in range(6):
        body_q0 = random_poses(rng, nb)
        paths = [mujoco_random_path(rng, body_q0) for _ in range(25)]
        model = mujoco.MjModel.from_xml_string(mjcf_scene(nb, paths, body_q0))
        data = mujoco.MjData(model)
        for _pose in range(3):
            body_q = random_poses(rng, nb)
            body_q[:, :3] *= 0.3
            for b in range(nb):
                data.qpos[7 * b : 7 * b + 3] = body_q[b, :3]
                data.qpos[7 * b + 3 : 7 * b + 7] = [body_q[b, 6], *body_q[b, 3:6]]
            mujoco.mj_forward(model, data)
            body_q = np.hstack([data.xpos[1:], data.xquat[1:][:, [1, 2, 3, 0]]])
            length = run_geometry(paths, body_q, device)[0]
            for t, p in enumerate(paths):
                info = route_info(p, body_q)
                if info.margin <= MARGIN:
                    continue
                mj = float(data.ten_length[t])
                compared += 1
                modes += info.modes
                worst_kernel = max(worst_kernel, abs(length[t] - mj) / max(mj, 0.1))
                worst_ref = max(worst_ref, abs(info.length - mj) / mj)
                assert info.length == pytest.approx(mj, rel=1e-9), f"reference vs MuJoCo, tendon {t}"
                assert length[t] == pytest.approx(mj, rel=LENGTH_RTOL, abs=LENGTH_ATOL), f"kernel vs MuJoCo, tendon {t}"
    assert compared > 350
    # Wrapped routes and interior-side-site bends are compared, not only straight ones.
    assert modes.count("wrap") > 80 and modes.count("bend") > 50


def test_mujoco_overhead_pulley_side_site(device):
    """MuJoCo keeps an overhead route with a side site above a world pulley when the endpoints hang
    below it; the kernel agrees (the case the spec singles out for side sites)."""
    mujoco = pytest.importorskip("mujoco")
    paths = [overhead_path(h, 2.0) for h in (-1.5, -0.5, 0.5, 1.5)]
    paths += [overhead_path(h, -2.0) for h in (-1.5, 0.5)]
    model = mujoco.MjModel.from_xml_string(mjcf_scene(0, paths, np.zeros((0, 7))))
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    length = run_geometry(paths, np.zeros((0, 7)), device)[0]
    np.testing.assert_allclose(length, data.ten_length, rtol=LENGTH_RTOL)


# ---------------------------------------------------------------------------------------------
# validation of paths


def S(body=-1, offset=(0.0, 0.0, 0.0)):
    return TendonSite(body=body, offset=offset)


def W(**kw):
    kw.setdefault("kind", "sphere")
    kw.setdefault("radius", 0.1)
    return TendonWrap(**kw)


P = TendonPulley


@pytest.mark.parametrize(
    ("path", "exc", "match"),
    [
        ([], ValueError, "empty"),
        ("abc", TypeError, "sequence"),
        ([S(), "site"], TypeError, "element 1 .*TendonSite"),
        ([W(), S()], ValueError, "element 0 .*start with a site"),
        ([P(divisor=2.0), W(), S()], ValueError, "element 1 .*start with a site"),
        ([S(), S(), W()], ValueError, "element 2 .*end with a site"),
        ([S(), S(), P(divisor=2.0)], ValueError, "element 2 .*pulley cannot be the last"),
        ([S(), W(), W(), S()], ValueError, "element 1 .*between two sites"),
        ([S(), S(), P(divisor=2.0), W(), S()], ValueError, "element 3 .*between two sites"),
        ([S(), S(), P(divisor=2.0), P(divisor=2.0), S(), S()], ValueError, "element 3 .*two pulleys in a row"),
        ([S()], ValueError, "element 0 .*fewer than 2 sites"),
        ([S(), S(), P(divisor=2.0), S()], ValueError, "element 3 .*fewer than 2 sites"),
        ([S(), S(), P(divisor=0.0), S(), S()], ValueError, "element 2 .*divisor must be finite and > 0"),
        ([P(divisor=float("inf")), S(), S()], ValueError, "element 0 .*divisor must be finite"),
        ([S(), S(), P(divisor="2"), S(), S()], TypeError, "element 2 .*divisor must be a number"),
        ([S(), W(radius=-1.0), S()], ValueError, "element 1 .*radius must be finite and > 0"),
        ([S(), W(radius=float("nan")), S()], ValueError, "element 1 .*radius"),
        ([S(), W(radius=True), S()], TypeError, "element 1 .*radius must be a number"),
        ([S(body=3), S()], ValueError, r"element 0 .*body 3 is out of range \[-1, 2\)"),
        ([S(), S(body=-2)], ValueError, "element 1 .*out of range"),
        ([S(body=1.0), S()], TypeError, "element 0 .*body must be an int"),
        ([S(offset=(0.0, float("nan"), 0.0)), S()], ValueError, "element 0 .*offset must be finite"),
        ([S(offset=(0.0, 0.0)), S()], ValueError, "element 0 .*3 components"),
        ([S(offset="xyz"), S()], TypeError, "element 0 .*offset must be a sequence"),
        ([S(), W(kind="cylinder", axis=(0.0, 0.0, 0.0)), S()], ValueError, "element 1 .*axis must be nonzero"),
        ([S(), W(kind="capsule"), S()], ValueError, "element 1 .*'sphere' or 'cylinder'"),
        ([S(), W(kind=3), S()], TypeError, "element 1 .*kind"),
        ([S(), W(side=(0.0, 0.0, 0.0)), S()], TypeError, "element 1 .*side must be a TendonSite"),
        ([S(), W(side=S(body=7)), S()], ValueError, "element 1 .*side site body 7 is out of range"),
        ([S(), W(side=S(offset=(math.inf, 0.0, 0.0))), S()], ValueError, "element 1 .*side site offset"),
    ],
)
def test_flatten_rejects_invalid_paths(path, exc, match):
    """Each path rule raises, naming the tendon, the element index and the rule."""
    with pytest.raises(exc, match=match) as info:
        flatten_spatial_path(path, 2, name="finger")
    assert "finger" in str(info.value)


def test_flatten_layout():
    """Flattened lists hold one entry per element with type codes, resolved divisors, unit axes
    and side sites; a pulley holds the divisor of the branch it starts."""
    path = [
        S(body=0, offset=(1.0, 2.0, 3.0)),
        W(kind="cylinder", body=1, offset=(0.0, 1.0, 0.0), axis=(0.0, 3.0, 4.0), radius=0.2, side=S(body=0)),
        S(),
        P(divisor=3.0),
        S(),
        S(body=1),
    ]
    flat = flatten_spatial_path(path, 2)
    assert tuple(flat) == SPATIAL_PATH_KEYS
    assert flat["type"] == [SPATIAL_SITE, 2, SPATIAL_SITE, SPATIAL_PULLEY, SPATIAL_SITE, SPATIAL_SITE]
    assert flat["body"] == [0, 1, -1, -1, -1, 1]
    assert flat["axis"][1] == pytest.approx((0.0, 0.6, 0.8))
    assert flat["radius"] == [0.0, 0.2, 0.0, 0.0, 0.0, 0.0]
    assert flat["has_side"] == [0, 1, 0, 0, 0, 0]
    assert flat["side_body"][1] == 0
    assert flat["divisor"] == [1.0, 1.0, 1.0, 3.0, 3.0, 3.0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        path[0].body = 1
