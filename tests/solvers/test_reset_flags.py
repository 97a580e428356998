"""``solver.reset`` with newton's arguments (issue 26): a bool world mask, with or without its last
entry for entities in no world, and ``StateFlags`` bits.

newton resets a solver's tendon history whatever the flags and restores only the state arrays the
flags name; ours keeps that history in the State (material, routing, winch pay-out, multipliers), so
``flags=0`` resets exactly that and leaves the bodies, and ``None`` restores everything.
"""

import numpy as np
import pytest
import warp as wp

import newton_tendon as nt
from newton_tendon import StateFlags, TendonGuide
from newton_tendon.solvers import SolverVBD, SolverXPBD

SOLVERS = {"xpbd": SolverXPBD, "vbd": SolverVBD}


def _worlds(n=3):
    """n worlds, each a 1 kg body hanging from a world anchor on a 1 m compliant cable."""
    top = nt.ModelBuilder()
    for _ in range(n):
        w = nt.ModelBuilder()
        body = w.add_body(xform=(0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0), mass=1.0)
        w.add_tendon([TendonGuide(body=-1), TendonGuide(body=body, compliance=1e-3)])
        top.add_world(w)
    top.color()
    return top.finalize()


def _run(name, mask_fn, flags=None, steps=20):
    model = _worlds()
    solver = SOLVERS[name](model, iterations=4)
    s0, s1 = model.state(), model.state()
    for _ in range(steps):
        solver.step(s0, s1, None, None, 1.0 / 60.0)
        s0, s1 = s1, s0
    # Change every world's cable so a reset is visible in the history.
    rest = s0.tendon_segment_rest_length.numpy() + np.float32(0.25)
    s0.tendon_segment_rest_length.assign(rest)
    before = (s0.body_q.numpy().copy(), s0.body_qd.numpy().copy(), rest.copy())
    solver.reset(s0, world_mask=mask_fn(model), flags=flags)
    after = (s0.body_q.numpy(), s0.body_qd.numpy(), s0.tendon_segment_rest_length.numpy())
    return model, before, after


MASKS = {
    "int32": lambda m: wp.array([0, 1, 0], dtype=wp.int32),
    "bool": lambda m: wp.array([False, True, False], dtype=wp.bool),
    "bool-with-global": lambda m: wp.array([False, True, False, False], dtype=wp.bool),
    "int32-with-global": lambda m: wp.array([0, 1, 0, 1], dtype=wp.int32),
}


@pytest.mark.parametrize("name", sorted(SOLVERS))
@pytest.mark.parametrize("mask", sorted(MASKS))
def test_every_mask_form_resets_the_same_world(name, mask):
    """World 1 only, whichever form the mask takes: its body returns to the model's pose at rest and
    its cable to the model's 1 m; worlds 0 and 2 are bitwise untouched."""
    model, (q0, qd0, r0), (q1, qd1, r1) = _run(name, MASKS[mask])
    np.testing.assert_array_equal(q1[[0, 2]], q0[[0, 2]])
    np.testing.assert_array_equal(qd1[[0, 2]], qd0[[0, 2]])
    np.testing.assert_array_equal(r1[[0, 2]], r0[[0, 2]])
    np.testing.assert_array_equal(q1[1], model.body_q.numpy()[1])
    np.testing.assert_array_equal(qd1[1], 0.0)
    assert r1[1] == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("name", sorted(SOLVERS))
@pytest.mark.parametrize(("given", "resets"), [((False, True), True), ((True, False), True), ((False, False), False)])
def test_a_model_without_worlds_is_reset_by_the_global_entry(name, given, resets):
    """A builder that made no world puts everything in world 0 here; newton puts it in world -1, which
    the last entry of its [world_count + 1] mask selects (newton's test_vbd_reset_restores_tendon_state
    resets with [False, True]). Either entry selects world 0; neither leaves it bitwise untouched."""
    b = nt.ModelBuilder()
    body = b.add_body(xform=(0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0), mass=1.0)
    b.add_tendon([TendonGuide(body=-1), TendonGuide(body=body, compliance=1e-3)])
    b.color()
    model = b.finalize()
    assert model.world_count == 1
    solver = SOLVERS[name](model, iterations=4)
    s0, s1 = model.state(), model.state()
    for _ in range(10):
        solver.step(s0, s1, None, None, 1.0 / 60.0)
        s0, s1 = s1, s0
    s0.tendon_segment_rest_length.fill_(0.5)
    q_before = s0.body_q.numpy().copy()
    solver.reset(s0, world_mask=wp.array(given, dtype=wp.bool), flags=StateFlags.NONE)
    rest = float(s0.tendon_segment_rest_length.numpy()[0])
    assert rest == (pytest.approx(1.0, abs=1e-6) if resets else 0.5)
    if resets:  # the solver's report is refreshed for the reset worlds only
        assert float(solver.tendon_segment_rest_length.numpy()[0]) == pytest.approx(1.0, abs=1e-6)
    np.testing.assert_array_equal(s0.body_q.numpy(), q_before)


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_flags_zero_resets_only_the_history_in_the_state(name):
    """flags=0 (StateFlags.NONE): the cable material of world 1 is restored, its body is not moved."""
    _, (q0, qd0, _), (q1, qd1, r1) = _run(name, MASKS["bool"], flags=StateFlags.NONE)
    np.testing.assert_array_equal(q1, q0)
    np.testing.assert_array_equal(qd1, qd0)
    assert r1[1] == pytest.approx(1.0, abs=1e-6)


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_flags_pick_the_body_arrays(name):
    """BODY_Q restores the pose and keeps the velocity; BODY_QD the reverse."""
    model, (q0, qd0, _), (q1, qd1, _) = _run(name, MASKS["int32"], flags=StateFlags.BODY_Q)
    np.testing.assert_array_equal(q1[1], model.body_q.numpy()[1])
    np.testing.assert_array_equal(qd1[1], qd0[1])
    assert np.any(qd0[1] != 0.0)
    model, (q0, qd0, _), (q1, qd1, _) = _run(name, MASKS["int32"], flags=StateFlags.BODY_QD)
    np.testing.assert_array_equal(q1[1], q0[1])
    np.testing.assert_array_equal(qd1[1], 0.0)


@pytest.mark.parametrize(
    ("mask", "flags", "exc", "match"),
    [
        (lambda: wp.array([0.0, 1.0, 0.0], dtype=float), None, ValueError, "int32 or bool"),
        (lambda: wp.array([0, 1], dtype=wp.int32), None, ValueError, r"shape \(3,\) or \(4,\)"),
        (lambda: np.array([0, 1, 0], dtype=np.int32), None, ValueError, "must be a wp.array"),
        (lambda: None, 1.5, TypeError, "flags must be StateFlags bits"),
        (lambda: None, True, TypeError, "flags must be StateFlags bits"),
    ],
)
def test_bad_reset_arguments_raise_before_anything_changes(mask, flags, exc, match):
    model = _worlds()
    solver = SolverXPBD(model)
    s0 = model.state()
    q = s0.body_q.numpy() + np.float32(1.0)
    s0.body_q.assign(q)
    with pytest.raises(exc, match=match):
        solver.reset(s0, world_mask=mask(), flags=flags)
    np.testing.assert_array_equal(s0.body_q.numpy(), q)
