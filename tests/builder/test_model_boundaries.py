"""What crosses from one model to another, and what no model may hold (issue 41).

- States, Controls and contact buffers carry their model's layout; every entry point refuses those of
  a model of another layout on the host, and accepts those of a model of the same layout.
- One inertia rule (``check_body_inertia``: finite, symmetric, positive semi-definite, triangle
  inequality) in the builder and every importer.
- An exact-inertia mesh must bound a solid (closed, edge-manifold, consistently wound).
- ``Model.world_mask`` takes integer indices in range or a bool mask.
- A native file's ``world_count`` is checked against the worlds its entities use.

The misuse fuzzer (``tests/fuzz/test_misuse.py``) calls each entry point in a child process; these
tests pin the rules and the numbers.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import warp as wp

import newton_tendon as nt
from newton_tendon.inertia import check_closed_mesh, mesh_mass_properties
from newton_tendon.io import native
from newton_tendon.solvers import SolverXPBD

from ..helpers import same

H = 0.1
"""Half extent of the box mesh [m] (a 0.2 m cube: 8 kg at 1000 kg/m^3)."""
BOX_VERTICES = np.array([[x, y, z] for x in (-H, H) for y in (-H, H) for z in (-H, H)])
_QUADS = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
BOX_FACES = np.array([t for a, b, c, d in _QUADS for t in ((a, b, c), (a, c, d))])
"""Twelve outward-wound triangles; faces 10 and 11 are the top (+Z)."""


def _pendulum(n: int) -> nt.ModelBuilder:
    b = nt.ModelBuilder()
    b.add_ground_plane()
    parent = -1
    for i in range(n):
        body = b.add_link(xform=(0.3 * (i + 1), 0.0, 2.0, 0, 0, 0, 1))
        b.add_shape_sphere(body, radius=0.1)
        b.add_joint_revolute(parent, body, parent_xform=(0.3, 0, 2.0 if parent < 0 else 0.0, 0, 0, 0, 1))
        parent = body
    return b


def test_objects_of_another_layout_are_refused_before_any_launch(device):
    """The issue's reproduction: a 3-link model's solver, pipeline and kinematics given the State,
    Control and Contacts of a 1-body model raise ValueError naming the argument and the counts that
    differ (before: a segmentation fault or silent out-of-bounds reads), and the big model's state is
    untouched."""
    big = _pendulum(3).finalize(device)
    small = _pendulum(1).finalize(device)
    solver = SolverXPBD(big)
    pipeline = nt.CollisionPipeline(big)
    s0, s1, control, contacts = big.state(), big.state(), big.control(), pipeline.contacts()
    before = s0.body_q.numpy().copy()
    calls = {
        "state_in": lambda: solver.step(small.state(), s1, control, contacts, 0.01),
        "state_out": lambda: solver.step(s0, small.state(), control, contacts, 0.01),
        "control": lambda: solver.step(s0, s1, small.control(), contacts, 0.01),
        "contacts": lambda: solver.step(s0, s1, control, nt.CollisionPipeline(small).contacts(), 0.01),
    }
    for arg, call in calls.items():
        with pytest.raises(
            ValueError, match=rf"SolverXPBD.step: {arg} belongs to a model of another layout \(.*body_count"
        ):
            call()
    with pytest.raises(ValueError, match=r"SolverXPBD.reset: state .*body_count 1, the model's 3"):
        solver.reset(small.state())
    with pytest.raises(ValueError, match="CollisionPipeline.collide: state"):
        pipeline.collide(small.state(), contacts)
    with pytest.raises(ValueError, match="eval_joint_coordinates: state"):
        nt.eval_joint_coordinates(big, small.state())
    with pytest.raises(ValueError, match="Control.assign: other"):
        control.assign(small.control())
    with pytest.raises(TypeError, match="SolverXPBD.step: state_in must be a State .* got NoneType"):
        solver.step(None, s1, control, contacts, 0.01)
    with pytest.raises(TypeError, match="SolverXPBD.step: contacts must be a Contacts buffer .* got str"):
        solver.step(s0, s1, control, "contacts", 0.01)
    np.testing.assert_array_equal(s0.body_q.numpy(), before)


def test_objects_of_a_model_of_the_same_layout_are_shared(device):
    """Two finalizes of one builder have one layout: the twin's State, Control and contacts step the
    model bit for bit like its own (the check compares counts and the device, not identity)."""
    b = _pendulum(2)
    model, twin = b.finalize(device), b.finalize(device)
    runs = []
    for owner in (model, twin):
        solver, pipeline = SolverXPBD(model), nt.CollisionPipeline(model)
        s0, s1, c = owner.state(), owner.state(), owner.control()
        contacts = nt.CollisionPipeline(owner).contacts()
        for _ in range(20):
            pipeline.collide(s0, contacts)
            solver.step(s0, s1, c, contacts, 1.0 / 240.0)
            s0, s1 = s1, s0
        runs.append(s0.body_q.numpy())
    assert same(runs[0], runs[1])


def test_state_arrays_keep_their_layout():
    """Replacing a State or Control array by one of another shape, dtype or device raises at the
    assignment (the stamp would otherwise describe arrays the object no longer holds); one of the
    same shape and dtype is accepted."""
    model = _pendulum(2).finalize("cpu")
    s, c = model.state(), model.control()
    with pytest.raises(ValueError, match=r"State.body_q: the replacement has shape \(1,\)"):
        s.body_q = wp.zeros(1, dtype=wp.transform, device="cpu")
    with pytest.raises(TypeError, match="State.body_qd: must be a wp.array"):
        s.body_qd = np.zeros((2, 6), np.float32)
    with pytest.raises(ValueError, match="Control.joint_f"):
        c.joint_f = wp.zeros(2, dtype=wp.float64, device="cpu")
    s.body_q = wp.clone(s.body_q)
    c.joint_target_pos = wp.zeros(2, dtype=float, device="cpu")


def test_world_mask_takes_indices_in_range_or_a_bool_mask():
    """-1 (newton's global world), a float and an out-of-range index are refused, naming the call;
    ints and a bool mask of one entry per world select worlds."""
    b = nt.ModelBuilder()
    one = nt.ModelBuilder()
    one.add_body(mass=1.0, inertia=np.eye(3) * 1e-2)
    b.replicate(one, 3)
    model = b.finalize("cpu")
    np.testing.assert_array_equal(model.world_mask([0, 2]).numpy(), [1, 0, 1])
    np.testing.assert_array_equal(model.world_mask(np.array([1])).numpy(), [0, 1, 0])
    np.testing.assert_array_equal(model.world_mask([True, False, True]).numpy(), [1, 0, 1])
    np.testing.assert_array_equal(model.world_mask([]).numpy(), [0, 0, 0])
    for bad, err in (([-1], ValueError), ([3], ValueError), ([1.5], TypeError), ("1", TypeError), (2, TypeError)):
        with pytest.raises(err, match="Model.world_mask"):
            model.world_mask(bad)
    with pytest.raises(ValueError, match="Model.world_mask: a bool mask needs one entry per world"):
        model.world_mask([True, False])


def test_exact_mesh_inertia_needs_a_closed_consistently_wound_mesh():
    """The closed box gives 8 kg at the centre (the divergence theorem, exact); the issue's three
    broken boxes gave 6.667 kg with the centre 1.5 cm off, or 8 kg with it 2.5 cm off, and are now
    refused naming the first bad edge and face. A mesh split along seams (duplicate vertex positions)
    still bounds its solid; MuJoCo's legacy rule (MJCF's default) still accepts an open mesh."""
    mass, com, _ = mesh_mass_properties(1000.0, BOX_VERTICES, BOX_FACES)
    assert abs(mass - 8.0) < 1e-9 and np.abs(com).max() < 1e-12
    open_top = BOX_FACES[:10]
    flipped = BOX_FACES.copy()
    flipped[3] = flipped[3, ::-1]
    doubled_top = np.vstack([BOX_FACES[2:], BOX_FACES[10:]])  # the bottom replaced by a second top
    for faces, rule in ((open_top, "not closed"), (flipped, "not consistently wound"), (doubled_top, "edge")):
        with pytest.raises(ValueError, match=rule):
            check_closed_mesh(BOX_VERTICES, faces)
        b = nt.ModelBuilder()
        body = b.add_body()
        with pytest.raises(ValueError, match=rf"add_shape_mesh\(label=None\): .*{rule}.*face \d+ \["):
            b.add_shape_mesh(body, vertices=BOX_VERTICES, faces=faces, density=1000.0)
        assert b.shape_count == 0 and b.body_mass[body] == 0.0
    # Seams: every triangle with its own three vertices (an unwelded STL), the same solid.
    split = BOX_VERTICES[BOX_FACES.reshape(-1)]
    mass, com, _ = mesh_mass_properties(1000.0, split, np.arange(36).reshape(12, 3))
    assert abs(mass - 8.0) < 1e-9
    # Legacy (MuJoCo's default for MJCF meshes): no closedness rule.
    mesh_mass_properties(1000.0, BOX_VERTICES, open_top, mode="legacy")


@pytest.mark.parametrize("where", ["builder", "urdf", "mjcf", "native"])
def test_one_inertia_rule_in_the_builder_and_every_importer(where, tmp_path):
    """ixx = iyy = 0.01, izz = 0.05 breaks I1 + I2 >= I3: refused wherever it is authored (the URDF
    importer and the builder accepted it), by the shared ``check_body_inertia``; (0.01, 0.01, 0.02)
    sits on the bound and is accepted."""
    for izz, ok in ((0.05, False), (0.02, True)):
        b = nt.ModelBuilder()

        def run(b=b, izz=izz):
            if where == "builder":
                b.add_body(mass=1.0, inertia=np.diag([0.01, 0.01, izz]))
            elif where == "urdf":
                inertia = f'<inertia ixx="0.01" iyy="0.01" izz="{izz}" ixy="0" ixz="0" iyz="0"/>'
                path = tmp_path / "r.urdf"
                path.write_text(
                    f'<robot name="r"><link name="base"/><link name="arm"><inertial><mass value="1"/>{inertia}'
                    '</inertial></link><joint name="j" type="revolute"><parent link="base"/><child link="arm"/>'
                    '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>'
                )
                b.add_urdf(path)
            elif where == "mjcf":
                b.add_mjcf(
                    f'<mujoco><worldbody><body><joint type="hinge"/><inertial pos="0 0 0" mass="1" '
                    f'diaginertia="0.01 0.01 {izz}"/></body></worldbody></mujoco>'
                )
            else:
                one = nt.ModelBuilder()
                one.add_body(mass=1.0, inertia=np.eye(3) * 0.01)
                doc = native.to_dict(one)
                doc["bodies"][0]["inertia"] = [[0.01, 0, 0], [0, 0.01, 0], [0, 0, izz]]
                native.loads(json.dumps(doc))

        if ok:
            run()
        else:
            with pytest.raises(ValueError, match="triangle inequality"):
                run()


def test_native_world_count_is_checked_against_the_worlds_used():
    """A file of one body claiming 1e9 worlds is refused before anything is allocated (finalize tried
    11 GiB); a builder with two empty trailing worlds still round-trips."""
    one = nt.ModelBuilder()
    one.add_body(mass=1.0, inertia=np.eye(3) * 1e-2)
    doc = native.to_dict(one)
    doc["world_count"] = 10**9
    with pytest.raises(ValueError, match="world_count: 1000000000 worlds declared"):
        native.loads(json.dumps(doc))
    b = nt.ModelBuilder()
    b.replicate(one, 2)
    for _ in range(2):
        b.begin_world()
        b.end_world()
    again = native.loads(native.dumps(b))
    assert again.world_count == 4 and again.body_count == 2
