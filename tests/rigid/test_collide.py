"""Tests of the narrow-phase contact slots in ``newton_tendon.kernels.collide``.

Device results (float32) are compared with float64 NumPy references written here. All queries of a test go
through one launch of ``collide_slots_test_kernel``, so the module is compiled once for the whole file. The
``device`` fixture (tests/conftest.py) runs every test on "cpu" unless NEWTON_TENDON_TEST_DEVICES says otherwise.
"""

import numpy as np
import pytest
import warp as wp

from newton_tendon.kernels import collide
from newton_tendon.kernels.types import SHAPE_BOX, SHAPE_CAPSULE, SHAPE_CYLINDER, SHAPE_PLANE, SHAPE_SPHERE

# float32 rounds at ~6e-8 relative; the shapes here are of unit size and a contact point goes through a few
# rotations and sums, so device-vs-float64 differences stay around 1e-6. 2e-5 leaves room without hiding errors.
POS_TOL = 2.0e-5
# Normals are unit vectors built from the same float32 data; the same reasoning gives a slightly smaller bound.
NORMAL_TOL = 1.0e-5
# Random box-box poses go through the separating-axis test with sums of 6 projected extents (up to ~6 units),
# so the float32 error budget is a few times larger than for a single point.
SAT_TOL = 1.0e-4
# The box-box kernel keeps a face axis unless an edge axis beats it by this fraction of the face penetration
# (``_EDGE_AXIS_BIAS`` in the module), so a face-mode depth may exceed the SAT optimum by the factor 1 / (1 - 0.05).
EDGE_AXIS_BIAS = 0.05
# The capsule-box search stops within ~1e-5 (relative to the summed sizes) of the minimal signed distance when
# the deepest point lies inside the box, where no projection step can sharpen it.
CAPSULE_BOX_TOL = 1.0e-4

PLANE, SPHERE, CAPSULE, BOX, CYLINDER = (
    int(t) for t in (SHAPE_PLANE, SHAPE_SPHERE, SHAPE_CAPSULE, SHAPE_BOX, SHAPE_CYLINDER)
)


# ---------------------------------------------------------------------------------------------------------------
# float64 pose helpers
# ---------------------------------------------------------------------------------------------------------------


def quat(axis, angle):
    """Quaternion (x, y, z, w) of a rotation by ``angle`` about ``axis``."""
    axis = np.asarray(axis, dtype=np.float64)
    axis = axis / np.linalg.norm(axis)
    return np.concatenate([np.sin(0.5 * angle) * axis, [np.cos(0.5 * angle)]])


def quat_mul(q, r):
    """Hamilton product ``q * r`` of (x, y, z, w) quaternions."""
    x1, y1, z1, w1 = q
    x2, y2, z2, w2 = r
    return np.array(
        [
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        ]
    )


def rot(q):
    """Rotation matrix of a unit (x, y, z, w) quaternion."""
    x, y, z, w = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])
# A generic scene rotation applied to whole configurations so that nothing relies on world-aligned frames.
SCENE_Q = quat([0.3, -0.5, 0.8], 0.7)


def pose(p, q=IDENTITY):
    """A pose as a (position, quaternion) pair of float64 arrays."""
    return np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)


def in_scene(pose_, scene_q=SCENE_Q, scene_p=(0.2, -0.1, 0.3)):
    """Applies the scene transform (rotation then translation) to a pose."""
    p, q = pose_
    return rot(scene_q) @ p + np.asarray(scene_p), quat_mul(scene_q, q)


def scene_vec(v, scene_q=SCENE_Q):
    """Rotates a direction by the scene rotation."""
    return rot(scene_q) @ np.asarray(v, dtype=np.float64)


def scene_point(p, scene_q=SCENE_Q, scene_p=(0.2, -0.1, 0.3)):
    """Maps a point by the scene transform."""
    return rot(scene_q) @ np.asarray(p, dtype=np.float64) + np.asarray(scene_p)


# ---------------------------------------------------------------------------------------------------------------
# Device evaluation
# ---------------------------------------------------------------------------------------------------------------


def evaluate(device, queries, margin=0.0, slots=None):
    """Runs every slot of every query pair in one launch.

    Args:
        device: Warp device to run on.
        queries: List of ``(type_a, pose_a, scale_a, type_b, pose_b, scale_b)``.
        margin: Contact margin.
        slots: Optional slot count per query (defaults to the pair capacity).

    Returns:
        A list with, per query, a dict of NumPy arrays ``valid, point_a, point_b, normal, separation, capacity``.
    """
    rows = []
    for k, (ta, pa, sa, tb, pb, sb) in enumerate(queries):
        count = collide.pair_contact_capacity(ta, tb) if slots is None else slots[k]
        for s in range(count):
            rows.append((k, ta, pa, sa, tb, pb, sb, s))

    def xf(p):
        return wp.transform(wp.vec3(*p[0]), wp.quat(*p[1]))

    n = len(rows)
    inputs = [
        wp.array([r[1] for r in rows], dtype=int, device=device),
        wp.array([xf(r[2]) for r in rows], dtype=wp.transform, device=device),
        wp.array([wp.vec3(*r[3]) for r in rows], dtype=wp.vec3, device=device),
        wp.array([r[4] for r in rows], dtype=int, device=device),
        wp.array([xf(r[5]) for r in rows], dtype=wp.transform, device=device),
        wp.array([wp.vec3(*r[6]) for r in rows], dtype=wp.vec3, device=device),
        wp.array([r[7] for r in rows], dtype=int, device=device),
        float(margin),
    ]
    names = ["valid", "point_a", "point_b", "normal", "separation", "capacity"]
    dtypes = [int, wp.vec3, wp.vec3, wp.vec3, float, int]
    outputs = [wp.zeros(n, dtype=dt, device=device) for dt in dtypes]
    no_meshes = [wp.zeros(1, dtype=wp.vec3, device=device)] + [wp.zeros(0, dtype=wp.vec2i, device=device)] * 2
    wp.launch(collide.collide_slots_test_kernel, dim=n, inputs=[*inputs, *no_meshes], outputs=outputs, device=device)
    data = {name: out.numpy().astype(np.float64) for name, out in zip(names, outputs, strict=True)}
    owner = np.array([r[0] for r in rows])
    results = []
    for k in range(len(queries)):
        sel = owner == k
        res = {name: data[name][sel] for name in names}
        res["valid"] = res["valid"].astype(int)
        results.append(res)
    return results


def valid_contacts(res):
    """Valid rows of a result as a list of ``(point_a, point_b, normal, separation)``."""
    return [
        (res["point_a"][i], res["point_b"][i], res["normal"][i], res["separation"][i])
        for i in np.nonzero(res["valid"])[0]
    ]


def check_well_formed(res):
    """Asserts finite fields, unit normals and ``separation == dot(point_b - point_a, normal)`` on all slots."""
    for key in ("point_a", "point_b", "normal", "separation"):
        assert np.all(np.isfinite(res[key])), key
    np.testing.assert_allclose(np.linalg.norm(res["normal"], axis=1), 1.0, atol=NORMAL_TOL)
    for pa, pb, n, sep in valid_contacts(res):
        assert sep == pytest.approx(np.dot(pb - pa, n), abs=POS_TOL)


def assert_contacts_match(res, expected, check_normal=True):
    """Asserts that the valid contacts equal ``expected`` as sets.

    Args:
        res: One entry of :func:`evaluate`.
        expected: List of ``(point_a, point_b, normal, separation)`` float64 references.
        check_normal: Whether to compare normals as well.
    """
    check_well_formed(res)
    got = valid_contacts(res)
    assert len(got) == len(expected), f"{len(got)} valid contacts, expected {len(expected)}: {got}"
    unused = list(range(len(got)))
    for epa, epb, en, esep in expected:
        match = None
        for i in unused:
            pa, pb, n, sep = got[i]
            if (
                np.linalg.norm(pa - epa) < POS_TOL
                and np.linalg.norm(pb - epb) < POS_TOL
                and abs(sep - esep) < POS_TOL
                and (not check_normal or np.linalg.norm(n - en) < NORMAL_TOL)
            ):
                match = i
                break
        assert match is not None, f"no device contact matches {(epa, epb, en, esep)}; got {got}"
        unused.remove(match)


# ---------------------------------------------------------------------------------------------------------------
# float64 references
# ---------------------------------------------------------------------------------------------------------------


def ref_plane_point(plane_pose, plane_scale, p, radius):
    """Reference contact of a plane with a point swept by ``radius``; returns (contact, inside_extents)."""
    c, q = plane_pose
    r = rot(q)
    n = r[:, 2]
    local = r.T @ (p - c)
    inside = all(plane_scale[i] <= 0.0 or abs(local[i]) <= plane_scale[i] for i in range(2))
    depth = local[2]
    return (p - depth * n, p - radius * n, n, depth - radius), inside


def ref_sphere_sphere(ca, ra, cb, rb):
    """Reference contact of two spheres with distinct centres."""
    d = cb - ca
    n = d / np.linalg.norm(d)
    return ca + ra * n, cb - rb * n, n, np.linalg.norm(d) - ra - rb


def capsule_segment(pose_, half_height):
    """World end points of a capsule's core segment."""
    c, q = pose_
    axis = rot(q)[:, 2]
    return c - half_height * axis, c + half_height * axis


def closest_param(p0, p1, x):
    """Parameter of the point of segment ``p0 p1`` closest to ``x``."""
    d = p1 - p0
    return float(np.clip(np.dot(x - p0, d) / np.dot(d, d), 0.0, 1.0))


def segment_distance(p0, p1, q0, q1):
    """Exact distance between two non-degenerate segments (minimum of a convex quadratic on the unit square)."""
    candidates = []
    dp, dq, r = p1 - p0, q1 - q0, p0 - q0
    m = np.array([[dp @ dp, -dp @ dq], [-dp @ dq, dq @ dq]])
    if abs(np.linalg.det(m)) > 1e-12:
        s, t = np.linalg.solve(m, [-dp @ r, dq @ r])
        if 0 <= s <= 1 and 0 <= t <= 1:
            candidates.append((s, t))
    for s in (0.0, 1.0):
        candidates.append((s, closest_param(q0, q1, p0 + s * dp)))
    for t in (0.0, 1.0):
        candidates.append((closest_param(p0, p1, q0 + t * dq), t))
    return min(np.linalg.norm(p0 + s * dp - q0 - t * dq) for s, t in candidates)


def box_sdf(pose_, half, x):
    """Signed distance from a world point to a box (negative inside)."""
    c, q = pose_
    local = rot(q).T @ (x - c)
    d = np.abs(local) - half
    return np.linalg.norm(np.maximum(d, 0.0)) + min(np.max(d), 0.0)


def ref_sphere_box(center, radius, box_pose, half):
    """Reference sphere-box contact: closest point outside, exit through the nearest face inside."""
    c, q = box_pose
    r = rot(q)
    local = r.T @ (center - c)
    closest = np.clip(local, -half, half)
    if np.linalg.norm(closest - local) > 0:
        n_local = (closest - local) / np.linalg.norm(closest - local)
    else:
        depths = [(half[i] - s * local[i], i, s) for i in range(3) for s in (1.0, -1.0)]
        _, i, s = min(depths, key=lambda d: d[0])
        n_local = -s * np.eye(3)[i]
        closest = local.copy()
        closest[i] = s * half[i]
    n = r @ n_local
    pa = center + radius * n
    pb = r @ closest + c
    return pa, pb, n, np.dot(pb - pa, n)


def box_sat_separation(pose_a, half_a, pose_b, half_b):
    """Largest gap over the 15 separating axes of two boxes (negative: least penetration)."""
    ra, rb = rot(pose_a[1]), rot(pose_b[1])
    d = pose_b[0] - pose_a[0]
    axes = [ra[:, i] for i in range(3)] + [rb[:, i] for i in range(3)]
    for i in range(3):
        for j in range(3):
            c = np.cross(ra[:, i], rb[:, j])
            if np.linalg.norm(c) > 1e-6:
                axes.append(c / np.linalg.norm(c))
    best = -np.inf
    for axis in axes:
        ext = np.sum(half_a * np.abs(ra.T @ axis)) + np.sum(half_b * np.abs(rb.T @ axis))
        best = max(best, abs(d @ axis) - ext)
    return best


# ---------------------------------------------------------------------------------------------------------------
# Capacities
# ---------------------------------------------------------------------------------------------------------------


def test_capacities_and_device_twin_agree(device):
    """The Python slot table matches the device function, and the unsupported pair (plane-plane) has no slots."""
    expected = {
        (PLANE, SPHERE): 1,
        (PLANE, CAPSULE): 2,
        (PLANE, BOX): 8,
        (PLANE, CYLINDER): 8,
        (SPHERE, SPHERE): 1,
        (SPHERE, CAPSULE): 1,
        (SPHERE, BOX): 1,
        (CAPSULE, CAPSULE): 5,
        (CAPSULE, BOX): 4,
        (BOX, BOX): 25,
        (SPHERE, CYLINDER): 1,
        (CAPSULE, CYLINDER): 4,
        (BOX, CYLINDER): 28,
        (CYLINDER, CYLINDER): 21,
        **{(t, 5): 1 for t in range(6)},  # ellipsoid pairs: one slot each (tests/rigid/test_ellipsoid.py)
    }
    queries = []
    for ta in range(6):
        for tb in range(ta, 6):
            assert collide.pair_contact_capacity(ta, tb) == expected.get((ta, tb), 0)
            queries.append((ta, pose([0, 0, 0]), [1, 1, 1], tb, pose([0, 0, 0.5]), [1, 1, 1]))
    results = evaluate(device, queries, slots=[1] * len(queries))
    for (ta, _, _, tb, _, _), res in zip(queries, results, strict=True):
        assert int(res["capacity"][0]) == expected.get((ta, tb), 0)
        if expected.get((ta, tb), 0) == 0:
            assert res["valid"][0] == 0  # unsupported pairs never report a contact
    assert collide.MAX_PAIR_CONTACTS == 28


# ---------------------------------------------------------------------------------------------------------------
# Plane pairs
# ---------------------------------------------------------------------------------------------------------------


PLANE_TILTED = in_scene(pose([0.0, 0.0, 0.0]))


def test_plane_sphere_depth(device):
    """A sphere's contact with a (tilted) plane is its lowest point, at separation = height - radius; a finite
    plane ignores spheres outside its rectangle."""
    plane_rot = rot(PLANE_TILTED[1])
    queries, expected = [], []
    for local_center, radius, plane_scale in [
        ([0.3, -0.2, 0.45], 0.5, [0, 0, 0]),  # penetrating by 0.05
        ([1.0, 2.0, 0.70], 0.5, [0, 0, 0]),  # 0.2 above
        ([0.5, 0.5, 0.40], 0.5, [1.0, 1.0, 0]),  # inside a finite plane
        ([1.5, 0.5, 0.40], 0.5, [1.0, 1.0, 0]),  # beyond half_width: no contact
    ]:
        center = plane_rot @ np.array(local_center) + PLANE_TILTED[0]
        queries.append((PLANE, PLANE_TILTED, plane_scale, SPHERE, pose(center), [radius, 0, 0]))
        contact, inside = ref_plane_point(PLANE_TILTED, plane_scale, center, radius)
        expected.append([contact] if inside and contact[3] < 0.3 else [])
    for res, exp in zip(evaluate(device, queries, margin=0.3), expected, strict=True):
        assert_contacts_match(res, exp)


def test_plane_capsule_ends(device):
    """A capsule lying on a plane touches with both segment ends; a tilted one with its lower end only."""
    queries, expected = [], []
    for q in (quat([0, 1, 0], np.pi / 2), quat([1, 0.2, 0], 0.6)):
        cap_pose = in_scene(pose([0.1, 0.2, 0.28], q))
        queries.append((PLANE, PLANE_TILTED, [0, 0, 0], CAPSULE, cap_pose, [0.3, 0.5, 0]))
        exp = []
        for end in capsule_segment(cap_pose, 0.5):
            contact, _ = ref_plane_point(PLANE_TILTED, np.zeros(3), end, 0.3)
            if contact[3] < 0.0:
                exp.append(contact)
        expected.append(exp)
    results = evaluate(device, queries)
    assert [len(e) for e in expected] == [2, 1]
    for res, exp in zip(results, expected, strict=True):
        assert_contacts_match(res, exp)


def test_plane_box_corner_counts(device):
    """A box resting flat with small penetration gives its 4 bottom corners at the penetration depth; a tilted box
    gives only its lowest corner. Separations equal the corners' signed heights above the plane."""
    half = np.array([0.5, 0.3, 0.2])
    flat = in_scene(pose([0.4, -0.3, 0.19], quat([0, 0, 1], 0.4)))
    q_tilt = quat([1, 1, 0], 0.5)
    lowest = np.min((np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).T.reshape(-1, 3) * half) @ rot(q_tilt).T, axis=0)[
        2
    ]
    tilted = in_scene(pose([0.0, 0.0, -lowest - 0.01], q_tilt))  # lowest corner 0.01 below the plane
    queries, expected = [], []
    for box_pose in (flat, tilted):
        queries.append((PLANE, PLANE_TILTED, [0, 0, 0], BOX, box_pose, half))
        exp = []
        for corner in np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).T.reshape(-1, 3) * half:
            contact, _ = ref_plane_point(PLANE_TILTED, np.zeros(3), rot(box_pose[1]) @ corner + box_pose[0], 0.0)
            if contact[3] < 0.0:
                exp.append(contact)
        expected.append(exp)
    assert [len(e) for e in expected] == [4, 1]
    for res, exp in zip(evaluate(device, queries), expected, strict=True):
        assert_contacts_match(res, exp)
        for _, _, _, sep in valid_contacts(res):
            assert sep < 0.0


def ref_cylinder_rim(plane_pose, cyl_pose, radius, half_height):
    """Reference rim points of the plane-cylinder slots (deepest rim point and 90-degree steps, both caps)."""
    n = rot(plane_pose[1])[:, 2]
    r = rot(cyl_pose[1])
    axis = r[:, 2]
    down = -n - np.dot(-n, axis) * axis
    u = down / np.linalg.norm(down) if np.linalg.norm(down) > 1e-6 else r[:, 0]
    v = np.cross(axis, u)
    points = []
    for cap in (half_height, -half_height):
        for offset in (u, v, -u, -v):
            points.append(cyl_pose[0] + cap * axis + radius * offset)
    return points


def test_plane_cylinder_upright_and_side(device):
    """An upright cylinder sinking into a plane gets 4 rim contacts on its bottom cap; one lying on its side gets
    2, the lowest rim point of each cap."""
    radius, half_height, pen = 0.4, 0.6, 0.01
    upright = in_scene(pose([0.2, 0.1, half_height - pen], quat([0, 0, 1], 0.3)))
    side = in_scene(pose([0.2, 0.1, radius - pen], quat([1, 0, 0], np.pi / 2)))
    queries, expected = [], []
    for cyl_pose in (upright, side):
        queries.append((PLANE, PLANE_TILTED, [0, 0, 0], CYLINDER, cyl_pose, [radius, half_height, 0]))
        exp = []
        for p in ref_cylinder_rim(PLANE_TILTED, cyl_pose, radius, half_height):
            contact, _ = ref_plane_point(PLANE_TILTED, np.zeros(3), p, 0.0)
            if contact[3] < 0.0:
                exp.append(contact)
        expected.append(exp)
    assert [len(e) for e in expected] == [4, 2]
    results = evaluate(device, queries)
    for res, exp in zip(results, expected, strict=True):
        assert_contacts_match(res, exp)
        for _, _, _, sep in valid_contacts(res):
            assert sep == pytest.approx(-pen, abs=POS_TOL)


# ---------------------------------------------------------------------------------------------------------------
# Sphere and capsule pairs
# ---------------------------------------------------------------------------------------------------------------


def test_sphere_sphere_and_sphere_capsule(device):
    """Sphere-sphere contacts lie on the line of centres; a sphere against a capsule uses the closest point of the
    capsule segment (interior or an end). Separation = centre distance - radii."""
    ca = scene_point([0.0, 0.0, 0.0])
    cap_pose = in_scene(pose([0.6, 0.3, 0.1], quat([0, 1, 0], 1.1)))
    b0, b1 = capsule_segment(cap_pose, 0.7)
    queries = [
        (SPHERE, pose(ca), [0.5, 0, 0], SPHERE, pose(scene_point([0.3, 0.4, 0.5])), [0.4, 0, 0]),
        (SPHERE, pose(ca), [0.5, 0, 0], SPHERE, pose(scene_point([0.8, 0.1, -0.2])), [0.2, 0, 0]),
        (SPHERE, pose(ca), [0.5, 0, 0], CAPSULE, cap_pose, [0.25, 0.7, 0]),
        (SPHERE, pose(b1 + 0.4 * (b1 - b0)), [0.3, 0, 0], CAPSULE, cap_pose, [0.25, 0.7, 0]),  # beyond end b1
        (SPHERE, pose(b1 + 2.0 * (b1 - b0)), [0.3, 0, 0], CAPSULE, cap_pose, [0.25, 0.7, 0]),  # beyond margin
    ]
    expected = [
        ref_sphere_sphere(ca, 0.5, queries[0][4][0], 0.4),
        ref_sphere_sphere(ca, 0.5, queries[1][4][0], 0.2),
        ref_sphere_sphere(ca, 0.5, b0 + closest_param(b0, b1, ca) * (b1 - b0), 0.25),
        ref_sphere_sphere(queries[3][1][0], 0.3, b1, 0.25),
        ref_sphere_sphere(queries[4][1][0], 0.3, b1, 0.25),
    ]
    margin = 0.5
    for res, exp in zip(evaluate(device, queries, margin=margin), expected, strict=True):
        assert_contacts_match(res, [exp] if exp[3] < margin else [])
    assert [e[3] < margin for e in expected] == [True, True, True, True, False]


def test_capsule_capsule_crossing(device):
    """Two crossing capsules touch once, at the closest pair of their segments, with the normal along the common
    perpendicular; for random non-parallel poses the deepest valid slot equals the exact segment distance minus
    the radii."""
    ra, rb, gap = 0.2, 0.3, -0.02
    a_pose = in_scene(pose([0, 0, 0], quat([0, 1, 0], np.pi / 2)))  # along world x before the scene rotation
    b_pose = in_scene(pose([0.1, 0.05, ra + rb + gap], quat([1, 0, 0], np.pi / 2)))  # along y, above
    queries = [(CAPSULE, a_pose, [ra, 1.0, 0], CAPSULE, b_pose, [rb, 0.8, 0])]
    n = scene_vec([0, 0, 1])
    touch = scene_point([0.1, 0.0, 0.0])
    expected = [[(touch + ra * n, touch + (ra + gap) * n, n, gap)]]

    rng = np.random.default_rng(3)
    random_cases = []
    for _ in range(20):
        pa = pose(rng.uniform(-0.3, 0.3, 3), quat(rng.normal(size=3), rng.uniform(0, np.pi)))
        pb = pose(rng.uniform(-0.3, 0.3, 3), quat(rng.normal(size=3), rng.uniform(0, np.pi)))
        sa, sb = [0.15, rng.uniform(0.2, 0.8), 0], [0.1, rng.uniform(0.2, 0.8), 0]
        queries.append((CAPSULE, pa, sa, CAPSULE, pb, sb))
        true_sep = segment_distance(*capsule_segment(pa, sa[1]), *capsule_segment(pb, sb[1])) - sa[0] - sb[0]
        random_cases.append(true_sep)
    results = evaluate(device, queries, margin=10.0)  # a large margin keeps every computed slot valid
    assert_contacts_match(with_margin(results[0], 0.0), expected[0])
    for res, true_sep in zip(results[1:], random_cases, strict=True):
        check_well_formed(res)
        seps = [c[3] for c in valid_contacts(res)]
        assert min(seps) == pytest.approx(true_sep, abs=POS_TOL)


def with_margin(res, margin):
    """Re-applies a smaller margin to a result evaluated with a larger one (validity is separation < margin)."""
    res = dict(res)
    res["valid"] = res["valid"] * (res["separation"] < margin)
    return res


def test_capsule_capsule_parallel(device):
    """Parallel capsules resting on each other get one contact at each end of their overlap (not one arbitrary
    point), so they rest without rocking; identical stacked capsules give exactly 2 contacts."""
    ra, rb, pen = 0.2, 0.25, 0.01
    q = quat([0, 1, 0], np.pi / 2)  # segments along world x before the scene rotation
    n = scene_vec([0, 0, 1])
    a_pose = in_scene(pose([0, 0, 0], q))
    queries, expected = [], []
    for b_center_x, ha, hb, overlap in [
        (0.0, 1.0, 1.0, (-1.0, 1.0)),
        (0.8, 1.0, 0.6, (0.2, 1.0)),
        (0.0, 1.0, 0.5, (-0.5, 0.5)),
    ]:
        b_pose = in_scene(pose([b_center_x, 0, ra + rb - pen], q))
        queries.append((CAPSULE, a_pose, [ra, ha, 0], CAPSULE, b_pose, [rb, hb, 0]))
        expected.append([(scene_point([x, 0, ra]), scene_point([x, 0, ra - pen]), n, -pen) for x in overlap])
    for res, exp in zip(evaluate(device, queries), expected, strict=True):
        assert_contacts_match(res, exp)


def test_sphere_box_face_and_inside(device):
    """A sphere near a box face touches the face's closest point (including corner/edge regions); a centre inside
    the box exits through the nearest face, with separation -(face distance + radius)."""
    half = np.array([0.5, 0.4, 0.3])
    box_pose = in_scene(pose([0.1, 0.0, 0.2], quat([0, 0, 1], 0.3)))
    r = rot(box_pose[1])
    queries, expected = [], []
    for local_center, radius in [
        ([0.1, 0.1, 0.55], 0.3),  # above the top face, penetrating 0.05
        ([0.7, 0.55, 0.4], 0.3),  # near the (+x, +y, +z) corner
        ([0.1, -0.3, 0.05], 0.2),  # inside, nearest face -y
        ([0.45, 0.0, 0.0], 0.1),
    ]:  # inside, nearest face +x
        center = r @ np.array(local_center) + box_pose[0]
        queries.append((SPHERE, pose(center), [radius, 0, 0], BOX, box_pose, half))
        expected.append(ref_sphere_box(center, radius, box_pose, half))
    results = evaluate(device, queries, margin=0.1)
    for res, exp in zip(results, expected, strict=True):
        assert_contacts_match(res, [exp] if exp[3] < 0.1 else [])
    assert expected[2][3] == pytest.approx(-(0.1 + 0.2))
    np.testing.assert_allclose(expected[2][2], r @ np.array([0, 1, 0]))  # box moves +y: the sphere leaves via -y


def test_capsule_box(device):
    """A capsule across a box standing on an edge touches once, at that edge; a capsule lying across or along a flat
    top and overhanging it touches at both box edges; a short one lying on the top touches at both segment ends."""
    half = np.array([0.5, 0.5, 0.5])
    flat_box = in_scene(pose([0, 0, 0]))
    edge_box = in_scene(pose([0, 0, 0], quat([1, 0, 0], np.pi / 4)))  # top edge along x at height sqrt(2) / 2
    radius, pen = 0.1, 0.01
    along_x = quat([0, 1, 0], np.pi / 2)
    along_y = quat([1, 0, 0], np.pi / 2)
    h = 0.5 * np.sqrt(2.0)
    n = scene_vec([0, 0, -1])  # the box (shape b) moves down, away from the capsule above it
    cases = [
        (edge_box, pose([0.1, 0.2, h + radius - pen], along_y), 1.0, h, [(0.1, 0.0)]),
        (flat_box, pose([0.1, 0.2, 0.5 + radius - pen], along_y), 1.0, 0.5, [(0.1, -0.5), (0.1, 0.5)]),
        (flat_box, pose([0.2, 0.1, 0.5 + radius - pen], along_x), 1.2, 0.5, [(-0.5, 0.1), (0.5, 0.1)]),
        (flat_box, pose([0.0, 0.1, 0.5 + radius - pen], along_x), 0.3, 0.5, [(-0.3, 0.1), (0.3, 0.1)]),
    ]
    queries, expected = [], []
    for box_pose, cap_pose, hh, top, xys in cases:
        queries.append((CAPSULE, in_scene(cap_pose), [radius, hh, 0], BOX, box_pose, half))
        expected.append([(scene_point([x, y, top - pen]), scene_point([x, y, top]), n, -pen) for x, y in xys])
    for res, exp in zip(evaluate(device, queries), expected, strict=True):
        assert_contacts_match(res, exp)


def test_sphere_and_capsule_box_random_poses(device):
    """For random poses, the sphere-box slot equals the float64 reference, and the deepest capsule-box slot equals
    the minimal signed box distance along the capsule segment (dense float64 sampling) minus the radius, with
    every capsule-box point on the box surface."""
    rng = np.random.default_rng(11)
    queries, expected = [], []
    for _ in range(20):
        hb = rng.uniform(0.1, 0.7, 3)
        pb = pose(rng.uniform(-0.2, 0.2, 3), quat(rng.normal(size=3), rng.uniform(0, np.pi)))
        center = rng.uniform(-1.0, 1.0, 3)
        queries.append((SPHERE, pose(center), [0.3, 0, 0], BOX, pb, hb))
        expected.append(ref_sphere_box(center, 0.3, pb, hb))
        pa = pose(rng.uniform(-1.0, 1.0, 3), quat(rng.normal(size=3), rng.uniform(0, np.pi)))
        sa = [rng.uniform(0.05, 0.3), rng.uniform(0.1, 0.8), 0]
        queries.append((CAPSULE, pa, sa, BOX, pb, hb))
        p0, p1 = capsule_segment(pa, sa[1])
        coarse = np.linspace(0.0, 1.0, 401)
        t0 = coarse[np.argmin([box_sdf(pb, hb, p0 + t * (p1 - p0)) for t in coarse])]
        fine = np.clip(np.linspace(t0 - 0.003, t0 + 0.003, 601), 0.0, 1.0)
        expected.append(min(box_sdf(pb, hb, p0 + t * (p1 - p0)) for t in fine) - sa[0])
    results = evaluate(device, queries, margin=100.0)  # keep every computed slot valid
    for query, res, exp in zip(queries, results, expected, strict=True):
        if query[0] == SPHERE:
            assert_contacts_match(res, [exp])
            continue
        check_well_formed(res)
        contacts = valid_contacts(res)
        assert min(c[3] for c in contacts) == pytest.approx(exp, abs=CAPSULE_BOX_TOL)
        for _, point_b, _, _ in contacts:
            assert abs(box_sdf(query[4], query[5], point_b)) < POS_TOL


# ---------------------------------------------------------------------------------------------------------------
# Box-box
# ---------------------------------------------------------------------------------------------------------------


def box_corners(pose_, half):
    """World corners of a box."""
    local = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).T.reshape(-1, 3) * half
    return local @ rot(pose_[1]).T + pose_[0]


def test_box_box_stacked(device):
    """A small box resting on a large one (yawed and offset) yields its 4 bottom corners with normal +Z and
    separation = -penetration; equal aligned boxes yield 4 (duplicates are dropped); equal boxes yawed by 45
    degrees yield the 8 corners of their octagonal overlap."""
    pen = 0.01
    n = scene_vec([0, 0, 1])
    big = in_scene(pose([0, 0, 0]))
    half_big = np.array([1.0, 1.0, 0.5])
    queries, expected = [], []

    small_half = np.array([0.3, 0.2, 0.25])
    small = in_scene(pose([0.2, -0.3, 0.5 + 0.25 - pen], quat([0, 0, 1], 0.6)))
    queries.append((BOX, big, half_big, BOX, small, small_half))
    bottom = [c for c in box_corners(small, small_half) if np.dot(c - scene_point([0, 0, 0.5]), n) < 0]
    expected.append([(c - np.dot(c - scene_point([0, 0, 0.5]), n) * n, c, n, -pen) for c in bottom])

    same = in_scene(pose([0, 0, 1.0 - pen]))
    queries.append((BOX, big, half_big, BOX, same, half_big))
    expected.append(
        [(scene_point([x, y, 0.5]), scene_point([x, y, 0.5 - pen]), n, -pen) for x in (-1, 1) for y in (-1, 1)]
    )

    cube = np.array([0.5, 0.5, 0.5])
    yawed = in_scene(pose([0, 0, 1.0 - pen], quat([0, 0, 1], np.pi / 4)))
    queries.append((BOX, in_scene(pose([0, 0, 0])), cube, BOX, yawed, cube))
    k = 0.5 * (np.sqrt(2.0) - 1.0)  # octagon vertices sit at (+-0.5, +-k) and (+-k, +-0.5)
    octagon = [(sx * 0.5, sy * k) for sx in (-1, 1) for sy in (-1, 1)] + [
        (sx * k, sy * 0.5) for sx in (-1, 1) for sy in (-1, 1)
    ]
    expected.append([(scene_point([x, y, 0.5]), scene_point([x, y, 0.5 - pen]), n, -pen) for x, y in octagon])

    results = evaluate(device, queries)
    assert [len(e) for e in expected] == [4, 4, 8]
    for res, exp in zip(results, expected, strict=True):
        assert_contacts_match(res, exp)


def test_box_box_reference_face_on_b(device):
    """When the first box is the small one on top, the reference face belongs to b; the normal still points from a
    to b (downwards) and the contacts are a's bottom corners."""
    pen = 0.02
    small_half = np.array([0.2, 0.2, 0.2])
    small = in_scene(pose([0.1, 0.1, 0.5 + 0.2 - pen], quat([0, 0, 1], 0.2)))
    big = in_scene(pose([0, 0, 0]))
    n = scene_vec([0, 0, -1])
    top = scene_point([0, 0, 0.5])
    bottom = [c for c in box_corners(small, small_half) if np.dot(c - top, n) > 0]
    expected = [(c, c + np.dot(c - top, n) * -n, n, -pen) for c in bottom]
    (res,) = evaluate(device, [(BOX, small, small_half, BOX, big, np.array([1.0, 1.0, 0.5]))])
    assert_contacts_match(res, expected)


def test_box_box_corner_down_and_edge_edge(device):
    """A box balanced on a corner touches a face once at that corner; two boxes whose edges cross (each rolled 45
    degrees about perpendicular horizontal axes) touch once through the edge-edge slot, with the normal along
    the common perpendicular of the edges and separation equal to the edge gap."""
    cube = np.array([0.5, 0.5, 0.5])
    base = in_scene(pose([0, 0, 0]))
    n = scene_vec([0, 0, 1])
    pen = 0.01
    # Corner down: rotate so that the body diagonal (1, 1, 1) points along -z.
    diag = np.array([1.0, 1.0, 1.0]) / np.sqrt(3.0)
    axis = np.cross(diag, [0, 0, -1])
    q_corner = quat(axis, np.arccos(np.dot(diag, [0, 0, -1])))
    corner_pose = pose([0.1, 0.2, 0.5 + np.sqrt(3.0) * 0.5 - pen], q_corner)
    tip = scene_point([0.1, 0.2, 0.5 - pen])
    queries = [(BOX, base, cube, BOX, in_scene(corner_pose), cube)]
    expected = [[(tip + pen * n, tip, n, -pen)]]

    # Edge-edge: a's top edge runs along x at height h, b's bottom edge runs along y at height z_b - h.
    h = 0.5 * np.sqrt(2.0)
    a_edge = in_scene(pose([0, 0, 0], quat([1, 0, 0], np.pi / 4)))
    for gap in (-0.02, 0.03):
        b_edge = in_scene(pose([0.05, -0.1, 2 * h + gap], quat([0, 1, 0], np.pi / 4)))
        queries.append((BOX, a_edge, cube, BOX, b_edge, cube))
        expected.append([(scene_point([0.05, 0, h]), scene_point([0.05, 0, h + gap]), n, gap)])
    results = evaluate(device, queries, margin=0.05)
    for res, exp in zip(results, expected, strict=True):
        assert_contacts_match(res, exp)
    assert results[1]["valid"][24] == 1 and results[1]["valid"][:24].sum() == 0


def test_box_box_random_poses_against_sat(device):
    """For random poses: boxes separated (float64 SAT) by more than the margin give no contact; overlapping boxes
    give at least one; no contact is deeper than the SAT penetration along its normal allows; and every valid
    contact point lies on the surface of its own box."""
    rng = np.random.default_rng(7)
    margin = 0.01
    queries = []
    for _ in range(60):
        ha, hb = rng.uniform(0.2, 0.7, 3), rng.uniform(0.2, 0.7, 3)
        pa = pose(rng.uniform(-0.2, 0.2, 3), quat(rng.normal(size=3), rng.uniform(0, np.pi)))
        pb = pose(rng.uniform(-1.2, 1.2, 3), quat(rng.normal(size=3), rng.uniform(0, np.pi)))
        queries.append((BOX, pa, ha, BOX, pb, hb))
    results = evaluate(device, queries, margin=margin)
    n_separated = n_overlapping = 0
    for (_, pa, ha, _, pb, hb), res in zip(queries, results, strict=True):
        check_well_formed(res)
        sat = box_sat_separation(pa, ha, pb, hb)
        contacts = valid_contacts(res)
        if sat > margin + SAT_TOL:
            n_separated += 1
            assert not contacts
        elif sat < -SAT_TOL:
            n_overlapping += 1
            assert contacts
            # Face-mode depths are measured along a face axis whose gap is within the edge bias of the SAT optimum.
            assert min(c[3] for c in contacts) >= sat / (1.0 - EDGE_AXIS_BIAS) - SAT_TOL
        for point_a, point_b, _, _ in contacts:
            assert abs(box_sdf(pa, ha, point_a)) < SAT_TOL
            assert abs(box_sdf(pb, hb, point_b)) < SAT_TOL
    assert n_separated >= 5 and n_overlapping >= 5


# ---------------------------------------------------------------------------------------------------------------
# Margin and degenerate inputs
# ---------------------------------------------------------------------------------------------------------------


def test_margin_gates_validity(device):
    """A slot is valid exactly when its separation is below the margin: shapes 0.05 apart are reported with a
    margin of 0.1 (positive separation) and dropped with a margin of 0.02."""
    gap = 0.05
    queries = [
        (PLANE, PLANE_TILTED, [0, 0, 0], SPHERE, pose(scene_point([0, 0, 0.5 + gap])), [0.5, 0, 0]),
        (SPHERE, pose([0, 0, 0]), [0.5, 0, 0], SPHERE, pose([0, 0, 1.0 + gap]), [0.5, 0, 0]),
        (SPHERE, pose([0, 0, 0.5 + 0.3 + gap]), [0.3, 0, 0], BOX, pose([0, 0, 0]), [0.5, 0.5, 0.5]),
        (BOX, pose([0, 0, 0]), [0.5, 0.5, 0.5], BOX, pose([0, 0, 1.0 + gap]), [0.5, 0.5, 0.5]),
        (CAPSULE, pose([0, 0, 0]), [0.2, 0.5, 0], CAPSULE, pose([0, 0.4 + gap, 0]), [0.2, 0.5, 0]),
    ]
    wide = evaluate(device, queries, margin=0.1)
    narrow = evaluate(device, queries, margin=0.02)
    for res_wide, res_narrow in zip(wide, narrow, strict=True):
        check_well_formed(res_wide)
        contacts = valid_contacts(res_wide)
        assert contacts
        for _, _, _, sep in contacts:
            assert sep == pytest.approx(gap, abs=POS_TOL)
        assert res_narrow["valid"].sum() == 0


def test_degenerate_inputs_stay_finite(device):
    """Coincident centres, zero-length capsules, identical segments, zero-size and coincident boxes, and a sphere
    at a box centre produce finite fields and unit normals (fixed fallback +Z where no direction exists)."""
    origin = pose([0, 0, 0])
    tilted = pose([0, 0, 0], quat([1, 2, 3], 0.8))
    queries = [
        (SPHERE, origin, [0.5, 0, 0], SPHERE, origin, [0.5, 0, 0]),
        (SPHERE, origin, [0.0, 0, 0], SPHERE, origin, [0.0, 0, 0]),
        (SPHERE, origin, [0.5, 0, 0], CAPSULE, origin, [0.2, 0.0, 0]),
        (CAPSULE, origin, [0.2, 0.0, 0], CAPSULE, origin, [0.2, 0.0, 0]),
        (CAPSULE, tilted, [0.2, 0.6, 0], CAPSULE, tilted, [0.2, 0.6, 0]),
        (CAPSULE, origin, [0.2, 0.0, 0], BOX, origin, [0.0, 0.0, 0.0]),
        (SPHERE, tilted, [0.3, 0, 0], BOX, tilted, [0.5, 0.5, 0.5]),
        (BOX, tilted, [0.5, 0.5, 0.5], BOX, tilted, [0.5, 0.5, 0.5]),
        (BOX, origin, [0.0, 0.0, 0.0], BOX, origin, [0.0, 0.0, 0.0]),
        (PLANE, origin, [0, 0, 0], BOX, origin, [0.0, 0.0, 0.0]),
        (PLANE, origin, [0, 0, 0], CYLINDER, origin, [0.0, 0.0, 0]),
        (PLANE, origin, [0, 0, 0], CAPSULE, pose([0, 0, 0], quat([1, 0, 0], np.pi / 2)), [0.2, 0.0, 0]),
    ]
    results = evaluate(device, queries, margin=0.1)
    for res in results:
        check_well_formed(res)
    # Coincident sphere centres fall back to +Z: point_a on top of a, point_b at the bottom of b.
    assert_contacts_match(results[0], [(np.array([0, 0, 0.5]), np.array([0, 0, -0.5]), np.array([0, 0, 1.0]), -1.0)])
    # A zero-length capsule behaves like a sphere: one contact, not two copies.
    assert results[3]["valid"].sum() == 1
    assert results[11]["valid"].sum() == 1
    # Coincident boxes still report contacts (deep overlap) rather than nothing.
    assert results[7]["valid"].sum() >= 1
