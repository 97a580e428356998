"""Cylinder contacts (sphere, capsule, box and cylinder against a cylinder) on both solvers, against the
resting poses their geometry gives, and the narrow phase's finiteness in degenerate poses.

Geometry of each resting pose (cylinder radius r, half height h, box half extents, Z up, a static support
whose top is at z = 0):

- a cylinder standing on its cap rests with its centre at z = h; lying on its side (axis horizontal) at z = r;
- a box resting on a lying cylinder of radius r whose axis is at height 0 rests with its centre at r + hz;
- two cylinders: standing on a standing one at h_support + h; lying parallel on a lying one (axes
  horizontal, one above the other) at r_support + r; crossed the same; standing on a lying one at
  r_support + h;
- a shape's ``margin`` moves its contact surface outward, so each pose rises by the sum of the margins.

Tolerance: the solvers hold a resting contact to a penetration of order g dt^2 / iterations; measured on
the CPU, float32: below 5e-5 m in every pose on both solvers. The bound, 1 mm, sits well below any
geometric mistake (a wrong support feature is off by at least a few cm here, a cylinder that falls
through by its size) and above float32 noise on these sizes (~1e-7 m) and the 1% rim inset
(``collide_cylinder._RIM_INSET_REL``), which moves points across the pressing direction only.
"""

import math

import numpy as np
import pytest
import warp as wp

import newton_tendon as nt
from newton_tendon.kernels import collide
from newton_tendon.kernels.types import SHAPE_BOX, SHAPE_CAPSULE, SHAPE_CYLINDER, SHAPE_SPHERE

from ..helpers import Sim, capture_steps

REST_TOL = 1.0e-3
"""Resting height error bound [m] (see the module docstring)."""
DT = 1.0 / 240.0
STEPS = 2 * 240
"""Two seconds: every scene starts 1 cm above its resting pose and settles well before the end."""


def _q_axis(axis, angle):
    a = np.asarray(axis, dtype=float)
    a /= np.linalg.norm(a)
    s = math.sin(0.5 * angle)
    return (*(s * a), math.cos(0.5 * angle))


LYING_X = _q_axis((0.0, 1.0, 0.0), math.pi / 2)  # local Z (the cylinder axis) along world X
LYING_Y = _q_axis((1.0, 0.0, 0.0), math.pi / 2)  # local Z along world Y
UPRIGHT = (0.0, 0.0, 0.0, 1.0)


def _support(b, kind: str, q=UPRIGHT):
    """A static support whose top is at z = 0: a wide box, or a cylinder (standing or lying)."""
    if kind == "box":
        b.add_shape_box(-1, (0.0, 0.0, -0.5, 0, 0, 0, 1), 2.0, 2.0, 0.5, label="support")
    elif q == UPRIGHT:
        b.add_shape_cylinder(-1, (0.0, 0.0, -0.3, *q), radius=0.3, half_height=0.3, label="support")
    else:
        b.add_shape_cylinder(-1, (0.0, 0.0, -0.3, *q), radius=0.3, half_height=0.6, label="support")


def _drop(b, z, q, add):
    body = b.add_body(xform=(0.0, 0.0, z + 0.01, *q))
    add(body)
    return body


CASES = {
    # name: (support, support orientation, body orientation, shape adder, resting centre height)
    "cylinder-standing-on-box": ("box", UPRIGHT, UPRIGHT, lambda b, i: b.add_shape_cylinder(i, radius=0.2, half_height=0.15), 0.15),
    "cylinder-lying-on-box": ("box", UPRIGHT, LYING_X, lambda b, i: b.add_shape_cylinder(i, radius=0.2, half_height=0.15), 0.2),
    "box-on-lying-cylinder": ("cylinder", LYING_Y, UPRIGHT, lambda b, i: b.add_shape_box(i, hx=0.1, hy=0.1, hz=0.05), 0.05),
    "cylinder-on-equal-cylinder": ("cylinder", UPRIGHT, UPRIGHT, lambda b, i: b.add_shape_cylinder(i, radius=0.3, half_height=0.3), 0.3),
    "cylinder-parallel-on-lying-cylinder": ("cylinder", LYING_Y, LYING_Y, lambda b, i: b.add_shape_cylinder(i, radius=0.2, half_height=0.6), 0.2),
    "cylinder-crossed-on-lying-cylinder": ("cylinder", LYING_Y, LYING_X, lambda b, i: b.add_shape_cylinder(i, radius=0.2, half_height=0.3), 0.2),
    "cylinder-standing-on-lying-cylinder": ("cylinder", LYING_Y, UPRIGHT, lambda b, i: b.add_shape_cylinder(i, radius=0.15, half_height=0.1), 0.1),
    "sphere-on-standing-cylinder": ("cylinder", UPRIGHT, UPRIGHT, lambda b, i: b.add_shape_sphere(i, radius=0.1), 0.1),
    "capsule-lying-on-standing-cylinder": ("cylinder", UPRIGHT, LYING_X, lambda b, i: b.add_shape_capsule(i, radius=0.05, half_height=0.1), 0.05),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_resting_pose_on_cylinder_pairs(device, solver, case):
    """A shape dropped 1 cm onto its support comes to rest at the height its geometry gives (module
    docstring), upright, and still; the box-on-lying-cylinder case rests on the cylinder's top line with
    the box's edges, the equal cylinders on their caps."""
    support, q_support, q_body, add, height = CASES[case]
    b = nt.ModelBuilder()
    _support(b, support, q_support)
    body = _drop(b, height, q_body, lambda i: add(b, i))
    sim = Sim(b, device, solver=solver, iterations=16)
    sim.step(DT, STEPS)
    q = sim.body_q()[body]
    assert np.isfinite(q).all()
    assert abs(q[2] - height) < REST_TOL, f"{case}: centre at {q[2]:.6f} m, geometry gives {height} m"
    assert np.linalg.norm(q[:2]) < REST_TOL, f"{case}: drifted to {q[:2]}"
    # Still and in its initial orientation (a tipped shape would show |dot(q, q0)| < 1).
    assert abs(float(np.dot(q[3:], q_body))) > 1.0 - 1.0e-4
    # A box on a lying cylinder sits on a line and rocks between its two bottom edges with nothing to damp
    # it (no rolling friction): measured up to 0.04 rad/s on VBD, 0.016 on XPBD, over 10 s, with the
    # centre within 1e-4 m of its height. The other poses rest on areas and stop.
    still = 5.0e-2 if case == "box-on-lying-cylinder" else 1.0e-2
    assert np.linalg.norm(sim.body_qd()[body]) < still


def test_margins_raise_the_resting_pose(device, solver):
    """A cylinder with margin 0.01 m standing on a box with margin 0.02 m rests 0.03 m higher than with none
    (newton's ShapeConfig.margin: the pair rests margin_a + margin_b apart)."""
    b = nt.ModelBuilder()
    cfg = nt.ModelBuilder.ShapeConfig(margin=0.02)
    b.add_shape_box(-1, (0.0, 0.0, -0.5, 0, 0, 0, 1), 2.0, 2.0, 0.5, cfg=cfg)
    body = _drop(b, 0.15 + 0.03, UPRIGHT, lambda i: b.add_shape_cylinder(i, radius=0.2, half_height=0.15, margin=0.01))
    sim = Sim(b, device, solver=solver, iterations=16)
    sim.step(DT, STEPS)
    assert abs(sim.body_q()[body][2] - 0.18) < REST_TOL


def _stack() -> nt.ModelBuilder:
    """A box and a cylinder (with margins) dropped on a standing cylinder, which stands on a box."""
    b = nt.ModelBuilder()
    _support(b, "box")
    base = b.add_body(xform=(0.0, 0.0, 0.31, 0, 0, 0, 1))
    b.add_shape_cylinder(base, radius=0.3, half_height=0.3, margin=0.005)
    top = b.add_body(xform=(0.05, 0.0, 0.72, *LYING_X))
    b.add_shape_cylinder(top, radius=0.1, half_height=0.2, cfg=nt.ModelBuilder.ShapeConfig(mu=0.4, gap=0.02))
    box = b.add_body(xform=(0.0, 0.1, 0.95, 0, 0, 0, 1))
    b.add_shape_box(box, hx=0.05, hy=0.05, hz=0.05)
    return b


def test_captured_graph_replays_like_direct_stepping(device, solver):
    """A captured step sequence over cylinder contacts (with margins and gaps) replays to the same state as
    stepping directly, bitwise: the contact generation stays graph-capturable."""
    direct = Sim(_stack(), device, solver=solver)
    direct.step(DT, 40)
    sim = Sim(_stack(), device, solver=solver)
    sim.step(DT, 2)  # compile kernels outside the capture
    sim.state_0.assign(sim.model.state())
    sim.state_1.assign(sim.model.state())
    graph = capture_steps(sim, DT, 2)
    for _ in range(20):
        wp.capture_launch(graph)
    assert np.isfinite(sim.body_q()).all()
    np.testing.assert_array_equal(sim.body_q(), direct.body_q())


def _query(ta, xa, sa, tb, xb, sb, margin=0.01):
    n = collide.pair_contact_capacity(ta, tb)
    ins = [
        wp.array([ta] * n, dtype=int),
        wp.array([wp.transform(*xa)] * n, dtype=wp.transform),
        wp.array([sa] * n, dtype=wp.vec3),
        wp.array([tb] * n, dtype=int),
        wp.array([wp.transform(*xb)] * n, dtype=wp.transform),
        wp.array([sb] * n, dtype=wp.vec3),
        wp.array(list(range(n)), dtype=int),
    ]
    outs = [wp.zeros(n, dtype=d) for d in (int, wp.vec3, wp.vec3, wp.vec3, float, int)]
    no_meshes = [wp.zeros(1, dtype=wp.vec3), wp.zeros(0, dtype=wp.vec2i), wp.zeros(0, dtype=wp.vec2i)]
    wp.launch(collide.collide_slots_test_kernel, dim=n, inputs=[*ins, margin, *no_meshes], outputs=outs, device="cpu")
    return [o.numpy() for o in outs]


DEGENERATE = [
    # (type_a, pose_a, scale_a, type_b, pose_b, scale_b): coincident centres, parallel and coaxial axes.
    # The second is a thin long cylinder through a short thick one: no rim point of either lies inside the
    # other, so the narrow phase reports nothing (a known limit of deep, coaxial penetration); it must
    # still be finite.
    (SHAPE_CYLINDER, UPRIGHT, (0.2, 0.3, 0.0), SHAPE_CYLINDER, UPRIGHT, (0.2, 0.3, 0.0)),
    (SHAPE_CYLINDER, LYING_X, (0.2, 0.3, 0.0), SHAPE_CYLINDER, LYING_X, (0.1, 0.5, 0.0)),
    (SHAPE_CYLINDER, UPRIGHT, (0.2, 0.3, 0.0), SHAPE_CYLINDER, LYING_X, (0.2, 0.3, 0.0)),
    (SHAPE_BOX, UPRIGHT, (0.2, 0.2, 0.3), SHAPE_CYLINDER, UPRIGHT, (0.2, 0.3, 0.0)),
    (SHAPE_BOX, UPRIGHT, (0.1, 0.1, 0.1), SHAPE_CYLINDER, LYING_Y, (0.2, 0.3, 0.0)),
    (SHAPE_SPHERE, UPRIGHT, (0.2, 0.0, 0.0), SHAPE_CYLINDER, UPRIGHT, (0.2, 0.3, 0.0)),
    (SHAPE_CAPSULE, UPRIGHT, (0.1, 0.3, 0.0), SHAPE_CYLINDER, UPRIGHT, (0.2, 0.3, 0.0)),
]


@pytest.mark.parametrize("offset", [(0.0, 0.0, 0.0), (0.0, 0.0, 0.6), (0.2, 0.0, 0.0)])
@pytest.mark.parametrize("k", range(len(DEGENERATE)))
def test_degenerate_cylinder_poses_stay_finite(k, offset):
    """Coincident centres, coaxial and parallel axes, and shapes meeting exactly at a rim give finite points,
    unit normals and separations in every slot, and at least one valid contact when the shapes overlap."""
    ta, qa, sa, tb, qb, sb = DEGENERATE[k]
    valid, pa, pb, n, sep, _ = _query(ta, ((0.0, 0.0, 0.0), qa), sa, tb, (offset, qb), sb)
    for x in (pa, pb, n, sep):
        assert np.isfinite(x).all()
    assert np.allclose(np.linalg.norm(n, axis=1), 1.0, atol=1e-5)
    if offset == (0.0, 0.0, 0.0) and k != 1:
        assert valid.any()


def test_equal_cylinders_stacked_get_cap_normals():
    """Two equal cylinders stacked coaxially (1 mm overlap) get only vertical normals and -1 mm separations,
    although every rim point lies exactly on the other cylinder's side (the rim inset decides it)."""
    valid, _, _, n, sep, _ = _query(
        SHAPE_CYLINDER, ((0.0, 0.0, 0.0), UPRIGHT), (0.2, 0.3, 0.0),
        SHAPE_CYLINDER, ((0.0, 0.0, 0.599), UPRIGHT), (0.2, 0.3, 0.0),
    )  # fmt: skip
    assert valid.sum() >= 3  # a support polygon, not a single point
    v = valid == 1
    np.testing.assert_allclose(n[v], np.tile((0.0, 0.0, 1.0), (int(v.sum()), 1)), atol=1e-6)
    np.testing.assert_allclose(sep[v], -0.001, atol=1e-6)
