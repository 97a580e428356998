"""The combination matrix: scenes built from a table of features, every single feature, every pair
and a seeded sample of triples, on both solvers, each in 1 world, in an odd and in an even number of
worlds with per-world parameters, checked against invariants that hold for every scene.

The features (``tests/fuzz/combinations_scenes.py``, ``FEATURES``): routed cables (frictionless,
frictional, over a dynamic roller, with a length winch, with a force winch), spatial tendons (sites
only, sphere wrap, cylinder wrap with a side site, pulley), a fixed tendon, a coupling, joints with
limits and drives, an articulated chain with a light virtual link between two hinges, an arm under
random joint forces (issue 43), free bodies resting on the ground, kinematic bodies. Each sits in its own region
of one world; world ``w`` scales its masses, stiffnesses and commands by ``1 + 0.07 w``.

The invariants (``combinations_scenes.Checker``, after every step, every world): finite state;
joints hold and limits are respected; resting bodies stay at their rest height; kinematic bodies
follow their twist; routed cables keep their material (minus what winches paid out), inextensible
cables do not stretch, length winches apply their command, and the capstan bound holds at every
frictional guide; the energy of passive scenes does not grow. Then each world of the odd and of the
even batch must equal, bit for bit (``body_q``, ``body_qd``), the same world built alone.

Profiles (environment variable ``NEWTON_TENDON_MATRIX``):

* default: ``STEPS`` = 48 steps of 1/240 s, batches of 3 and 2 worlds, all 17 singles and 136 pairs
  and ``TRIPLE_SAMPLE`` = 12 seeded triples, each on both solvers (330 tests, plus 7 tests that each
  invariant can fail; 3 min 6 s wall on 2 shared CPU cores with the two features of issue 43);
* ``NEWTON_TENDON_MATRIX=long``: 240 steps, batches of 5 and 4 worlds, the singles, pairs and 120
  seeded triples (450 tests, 13 minutes wall at 72040d5; the seed is fixed, so a failure reproduces).

A failing test's id names the combination and the solver (``test_combination[cpu-vbd-spatial_sites+resting]``),
and its message the world, the step, the invariant and the numbers.
"""

from __future__ import annotations

import itertools
import os
import random

import numpy as np
import pytest

import newton_tendon as nt

from .combinations_scenes import FEATURES, Checker, InvariantError, Scene, compare_worlds, step_checked, step_plain

PROFILE = os.environ.get("NEWTON_TENDON_MATRIX", "default").strip().lower()
if PROFILE not in ("default", "long"):
    raise ValueError(f"NEWTON_TENDON_MATRIX must be 'default' or 'long', got {PROFILE!r}")
LONG = PROFILE == "long"

STEPS = 240 if LONG else 48
"""Steps of 1/240 s per scene. 48 steps (0.2 s) see every feature's event: the dynamic roller engages
at step ~29, the force winch pulls its load into its roller by step ~10 (and a wrong route round the
rim shows by step ~40), the light bob of ``joints`` swings 0.3 rad, the slider reaches its lower
limit."""
ODD_WORLDS = 5 if LONG else 3
EVEN_WORLDS = 4 if LONG else 2
TRIPLE_SAMPLE = 120 if LONG else 12
TRIPLE_SEED = 24

NAMES = list(FEATURES)
SINGLES = [(a,) for a in NAMES]
PAIRS = list(itertools.combinations(NAMES, 2))
TRIPLES = random.Random(TRIPLE_SEED).sample(list(itertools.combinations(NAMES, 3)), TRIPLE_SAMPLE)
COMBINATIONS = SINGLES + PAIRS + TRIPLES


@pytest.mark.parametrize("features", COMBINATIONS, ids="+".join)
def test_combination(device, solver, features):
    """The scene of ``features`` in 1 world (world parameters 0), in ODD_WORLDS and in EVEN_WORLDS worlds
    (parameters 0, 1, ...): every invariant of ``combinations_scenes.Checker`` after every step in the
    single world and in every world of the odd batch, and each world of both batches bitwise equal to
    the same world built alone."""
    alone = {0: Scene(features, [0], solver, device)}
    step_checked(alone[0], STEPS)
    odd = Scene(features, range(ODD_WORLDS), solver, device)
    step_checked(odd, STEPS)
    for w in range(1, ODD_WORLDS):
        alone[w] = step_plain(Scene(features, [w], solver, device), STEPS)
    even = step_plain(Scene(features, range(EVEN_WORLDS), solver, device), STEPS)
    differ = compare_worlds(odd, alone) + compare_worlds(even, alone)
    assert not differ, "worlds are not isolated:\n" + "\n".join(differ)


# ----------------------------------------------------------------------------------------------
# The checks can fail: each invariant, fed a scene that breaks it, raises with its own message.

SELF_TEST_STEPS = 12


def _checked(scene, steps=SELF_TEST_STEPS, before=None):
    checker = Checker(scene)
    checker.start()
    if before is not None:
        before(scene)
    for step in range(steps):
        paid = scene.state_0.tendon_guide_winch_paid.numpy().astype(np.float64)
        rest = scene.state_0.tendon_segment_rest_length.numpy().astype(np.float64)
        qd = scene.state_0.body_qd.numpy().astype(np.float64)
        scene.step(step)
        checker.check(step, paid, rest, qd)


def _nudge_body(scene, body, dz=0.0, vz=0.0):
    q, qd = scene.state_0.body_q.numpy(), scene.state_0.body_qd.numpy()
    q[body, 2] += dz
    qd[body, 2] += vz
    scene.state_0.body_q.assign(q)
    scene.state_0.body_qd.assign(qd)


def test_checks_detect_a_body_leaving_its_rest_height(device):
    """A resting sphere lifted 5 cm falls back: more than REST_TOL away from its rest height at once."""
    scene = Scene(["resting"], [0], "xpbd", device)
    with pytest.raises(InvariantError, match="left its rest height"):
        _checked(scene, before=lambda s: _nudge_body(s, 0, dz=0.05))


def test_checks_detect_an_overdamped_load_passing_its_static_height(device):
    """The damped hanging load moved 6 cm down (21 mm below z*) before the energy is recorded (so the
    energy check stays quiet): it is below its static height by more than OVERSHOOT_TOL at once."""
    scene = Scene(["cable_damped"], [0], "xpbd", device)
    _nudge_body(scene, 0, dz=-0.06)
    with pytest.raises(InvariantError, match="passed its static height"):
        _checked(scene)


def test_checks_detect_energy_growth(device):
    """A passive scene whose body is kicked upwards at 1 m/s after the energy was recorded gains 0.5 J."""
    scene = Scene(["spatial_sphere"], [0], "xpbd", device)
    with pytest.raises(InvariantError, match="passive energy grew"):
        _checked(scene, before=lambda s: _nudge_body(s, 0, vz=1.0))


def test_checks_detect_a_joint_coming_apart(device):
    """A pendulum bob moved 5 cm off its hinge after a step: its joint frames are more than JOINT_TOL apart."""
    scene = Scene(["fixed_tendon"], [0], "xpbd", device)
    checker = Checker(scene)
    checker.start()
    scene.step(0)
    _nudge_body(scene, 0, dz=0.05)
    with pytest.raises(InvariantError, match="came apart"):
        checker.check(0, None, None)


def test_checks_detect_created_cable(device):
    """Material added to a span behind the solver's back (1 cm) breaks the conservation check."""
    scene = Scene(["cable_frictional"], [0], "xpbd", device)

    checker = Checker(scene)
    checker.start()
    paid = np.zeros(scene.model.tendon_guide_count)
    rest = scene.state_0.tendon_segment_rest_length.numpy().astype(np.float64)
    qd = scene.state_0.body_qd.numpy().astype(np.float64)
    scene.step(0)
    checker.check(0, paid, rest, qd)
    edited = scene.state_0.tendon_segment_rest_length.numpy()
    edited[0] += 0.01
    scene.state_0.tendon_segment_rest_length.assign(edited)
    scene.step(1)
    with pytest.raises(InvariantError, match="not conserved"):
        checker.check(1, paid, edited.astype(np.float64), qd)


def test_checks_detect_a_broken_capstan_bound(device):
    """The frictional cable's roller given mu = 1.5 in the model while the checker keeps its authored
    0.3: the cable holds a load ratio of 3 (exp(1.5 pi/2 + 0.2 pi/2) = 14.4 allowed by the solver), far
    beyond the authored bound of 2.2."""
    scene = Scene(["cable_frictional"], [0], "xpbd", device)
    mu = scene.model.tendon_guide_mu.numpy()
    mu[2] = 1.5
    scene.model.tendon_guide_mu.assign(mu)
    scene.solver.notify_model_changed(nt.ModelFlags.TENDON_PROPERTIES)
    with pytest.raises(InvariantError, match="capstan bound violated"):
        _checked(scene, steps=24)


def test_isolation_check_detects_a_different_world(device):
    """Worlds with different parameters are told apart bit for bit (world 1 compared with world 0 built
    alone)."""
    batched = step_plain(Scene(["cable_frictional"], [0, 1], "xpbd", device), 4)
    alone = step_plain(Scene(["cable_frictional"], [0], "xpbd", device), 4)
    assert compare_worlds(batched, {0: alone, 1: alone}) and not compare_worlds(batched, {0: alone, 1: step_plain(
        Scene(["cable_frictional"], [1], "xpbd", device), 4)})
