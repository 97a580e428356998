"""SolverVBD-specific behaviour: graph colours, world independence, multipliers in the State, large steps.

The physics shared with SolverXPBD (closed forms for joints, drives, limits, contacts) runs on both
solvers in tests/rigid/test_rigid.py. Here: what only VBD has, namely body colours (bodies of one colour
are updated in parallel, so VBD refuses an uncoloured model), augmented-Lagrangian multipliers that
the step reports in the State (``joint_multiplier``, ``joint_limit_multiplier`` and
``contact_multiplier`` start every step at zero, so they are results, not history;
``tendon_segment_multiplier``, the span tensions, carries over), and stiff rows that hold at
dt = 1/60 where XPBD's 8 iterations leave centimetres.

The chain scenes are the demo/benchmark pendulum chain (``newton_tendon.demo.pendulum_chain``,
capsule links 0.4 m long hinged about +Y, 2.88 kg per link at mass_scale 1). An earlier version
warm-started all multipliers from the previous step and diverged on chains with hinge limits and
on chains hitting the ground tilted up; ``test_limited_chain_and_tilted_impacts_stay_bounded``
keeps those scenes.
"""

import math

import numpy as np
import pytest
import warp as wp

import newton_tendon as nt
from newton_tendon.demo import pendulum_chain
from newton_tendon.solvers import SolverVBD
from newton_tendon.transmission import TendonSite
from newton_tendon.kernels import cable as cable_kernels

from ..helpers import Sim, capture_steps, quat_to_matrix

MULTIPLIERS = ("joint_multiplier", "joint_limit_multiplier", "contact_multiplier", "tendon_segment_multiplier")

# (mass_scale, initial tilt [rad]) per distinct world: a positive tilt lowers the free end.
CHAIN_PARAMS = [(1.0, 0.0), (0.5, 0.3), (2.0, -0.3), (1.4, 0.5), (0.7, 0.15)]


def _chain(mass_scale: float, angle: float, links: int = 4, height: float = 1.0):
    """The demo chain and the world placement that rotates it by ``angle`` about its first hinge.

    The placement (p, R_y(angle)) keeps the hinge at (0, 0, height): p = (0, 0, h) - R_y (0, 0, h)."""
    chain = pendulum_chain(links=links, height=height, mass_scale=mass_scale)
    s, c = math.sin(angle), math.cos(angle)
    xform = (-height * s, 0.0, height * (1.0 - c), 0.0, math.sin(angle / 2), 0.0, math.cos(angle / 2))
    return chain, xform


def _chains_on_ground(params, **kw) -> nt.ModelBuilder:
    scene = nt.ModelBuilder()
    scene.add_ground_plane()
    for mass_scale, angle in params:
        chain, xform = _chain(mass_scale, angle, **kw)
        scene.add_world(chain, xform)
    return scene


def _contact_slot_world(model) -> np.ndarray:
    """World of each contact slot: the world of its shape pair (the shared ground is world -1)."""
    pairs = model.shape_contact_pairs.numpy()[model.contact_pair.numpy()]
    shape_world = model.shape_world.numpy()
    return np.maximum(shape_world[pairs[:, 0]], shape_world[pairs[:, 1]])


def _per_world(sim: Sim) -> list[dict[str, np.ndarray]]:
    """Body poses/velocities and every multiplier, split by world."""
    m = sim.model
    body_world = m.body_world.numpy()
    joint_world = body_world[m.joint_child.numpy()]
    slot_world = _contact_slot_world(m)
    segment_world = np.zeros(0, dtype=np.int32)
    if m.tendon_count:  # tendon t owns tendon_start[t + 1] - tendon_start[t] - 1 spans
        segment_world = np.repeat(m.tendon_world.numpy(), np.diff(m.tendon_start.numpy()) - 1)
    out = []
    for w in range(m.world_count):
        out.append(
            {
                "body_q": sim.state_0.body_q.numpy()[body_world == w],
                "body_qd": sim.state_0.body_qd.numpy()[body_world == w],
                "joint_multiplier": sim.state_0.joint_multiplier.numpy()[joint_world == w],
                "joint_limit_multiplier": sim.state_0.joint_limit_multiplier.numpy()[joint_world == w],
                "contact_multiplier": sim.state_0.contact_multiplier.numpy()[slot_world == w],
                "tendon_segment_multiplier": sim.state_0.tendon_segment_multiplier.numpy()[segment_world == w],
            }
        )
    return out


def _snapshot(state) -> dict[str, np.ndarray]:
    return {name: getattr(state, name).numpy().copy() for name in ("body_q", "body_qd", *MULTIPLIERS)}


def _assert_states_equal(a: dict, b: dict):
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def _max_anchor_error(model, body_q: np.ndarray) -> float:
    """Largest distance [m] between a joint's parent and child anchor points (world)."""
    parent = model.joint_parent.numpy()
    child = model.joint_child.numpy()
    x_p = model.joint_X_p.numpy()
    x_c = model.joint_X_c.numpy()

    def point(b, x):
        if b < 0:
            return x[:3].astype(np.float64)
        q = body_q[b].astype(np.float64)
        return q[:3] + quat_to_matrix(q[3:]) @ x[:3]

    return max(np.linalg.norm(point(parent[j], x_p[j]) - point(child[j], x_c[j])) for j in range(model.joint_count))


# ----------------------------------------------------------------------------------------------
# Colours


def test_uncoloured_model_is_rejected_with_the_fix_in_the_message(device):
    """VBD updates the bodies of one colour in parallel: a model with moving bodies and no colours is
    refused with a ValueError that names ``builder.color()``; adding a body after colouring drops the
    (now stale) colours, so it is refused again until the builder is recoloured. Bodies of an
    articulation take their steps in the tree pass (``joint_solver="articulation"``, the default) and
    need no colour: the uncoloured chain is accepted there."""
    b, _ = _chain(1.0, 0.0, links=2)
    with pytest.raises(ValueError, match=r"builder\.color\(\)"):
        SolverVBD(b.finalize(device), joint_solver="body")
    SolverVBD(b.finalize(device))  # every moving body is in a tree: no colour needed
    b.color()
    SolverVBD(b.finalize(device))  # coloured: accepted
    b.add_body(xform=(0.0, 0.0, 3.0, 0, 0, 0, 1), mass=1.0, inertia=np.eye(3) * 0.01)
    with pytest.raises(ValueError, match=r"builder\.color\(\)"):
        SolverVBD(b.finalize(device))
    b.color()
    SolverVBD(b.finalize(device))


def test_static_and_kinematic_bodies_need_no_colours(device):
    """Only moving bodies are solved: a model whose bodies are all static (mass 0) or kinematic builds
    a SolverVBD without ``builder.color()``; the kinematic body follows x = x0 + v t, the static one stays."""
    b = nt.ModelBuilder()
    b.add_ground_plane()
    static = b.add_body(xform=(0.0, 0.0, 0.5, 0, 0, 0, 1))
    b.add_shape_box(static, hx=0.1, hy=0.1, hz=0.1, density=0.0)
    kinematic = b.add_body(xform=(1.0, 0.0, 0.5, 0, 0, 0, 1), is_kinematic=True, velocity=(0.5, 0, 0, 0, 0, 0))
    b.add_shape_box(kinematic, hx=0.1, hy=0.1, hz=0.1)
    model = b.finalize(device)
    assert (model.body_color.numpy() < 0).all()  # not coloured
    solver = SolverVBD(model)
    s0, s1 = model.state(), model.state()
    for _ in range(5):
        solver.step(s0, s1, None, None, 0.1)
        s0, s1 = s1, s0
    q = s0.body_q.numpy()
    np.testing.assert_array_equal(q[static], model.body_q.numpy()[static])
    assert q[kinematic, 0] == pytest.approx(1.25, abs=1e-6)
    assert q[kinematic, 2] == 0.5


# ----------------------------------------------------------------------------------------------
# Determinism and world independence


def test_world_results_do_not_depend_on_the_world_count(device):
    """A 4-link chain hitting the ground, replicated 1, 7 and 64 times with per-world masses and tilts
    (world k uses CHAIN_PARAMS[k % 5]): after 1 s every world equals, bit for bit, the single-world run
    with its parameters (poses, velocities, joint and contact multipliers), so identical worlds are
    bitwise identical too. Bodies of one colour share no row and every world is coloured alike, so a
    world's arithmetic is the same whatever else is in the launch."""
    dt, steps = 1.0 / 120.0, 120
    single = []
    for params in CHAIN_PARAMS:
        sim = Sim(_chains_on_ground([params]), device, solver="vbd")
        sim.step(dt, steps)
        single.append(_per_world(sim)[0])
        assert np.isfinite(single[-1]["body_q"]).all()
    # The check is only meaningful with contacts and joint rows carrying load, and with worlds whose
    # parameters make a difference (so a world cannot match another world's run by accident).
    assert any((s["contact_multiplier"] != 0).any() for s in single)
    assert all((s["joint_multiplier"] != 0).any() for s in single)
    for i in range(len(single)):
        for j in range(i):
            assert not np.array_equal(single[i]["body_q"], single[j]["body_q"])
    for n in (7, 64):
        sim = Sim(_chains_on_ground([CHAIN_PARAMS[k % 5] for k in range(n)]), device, solver="vbd")
        sim.step(dt, steps)
        worlds = _per_world(sim)
        for k in range(n):
            _assert_states_equal(worlds[k], single[k % 5])


def _sphere_on_ground_world(radius: float = 0.1, pull: float = 0.0, sites: int = 3, speed: float = 0.0):
    """One world: a sphere (density 1000) resting on the ground at (0, 0, radius), moving at ``speed``
    [m/s] along +x, tied to a spatial transmission tendon of ``sites`` sites (world, world, sphere;
    or world, sphere for 2) of stiffness 50 N/m, whose rest length is ``pull`` [m] shorter than its
    initial length (0: the spring starts at rest).

    The tendon gives the model one transmission slot per site, so 3 sites put the contact slots,
    which follow the transmission slots in the slot array, at an odd offset."""
    world = nt.ModelBuilder()
    sphere = world.add_body(xform=(0.0, 0.0, radius, 0, 0, 0, 1), velocity=(speed, 0.0, 0.0, 0.0, 0.0, 0.0))
    world.add_shape_sphere(sphere, radius=radius, density=1000.0)
    points = [(0.5, 0.0, 1.0), (0.2, 0.0, 1.0)][3 - sites :]
    path = [TendonSite(body=-1, offset=p) for p in points] + [TendonSite(body=sphere)]
    corners = np.array([*points, (0.0, 0.0, radius)])
    length = float(np.linalg.norm(np.diff(corners, axis=0), axis=1).sum())
    world.add_spatial_tendon(path, stiffness=50.0, spring_lower=length - pull, spring_upper=length - pull)
    return world


def _scene_of_worlds(worlds) -> nt.ModelBuilder:
    scene = nt.ModelBuilder()
    scene.add_ground_plane()
    for w in worlds:
        scene.add_world(w)
    return scene


# A sphere resting on the ground stays at its radius: the augmented-Lagrangian contact row leaves a
# penetration its multiplier closes over the iterations; measured after 1 s at 240 Hz: 4.1e-7 m on
# VBD, 1e-9 m on XPBD. 1e-5 m is 1e-4 of the radius. With the bodies of each contact swapped, the
# contact pulled the sphere into the ground (z = -1.9e4 m after 1 s).
RESTING_SPHERE_TOL = 1.0e-5


def test_contact_sides_do_not_depend_on_the_transmission_slot_count(device, solver):
    """A 0.1 m sphere resting on the ground plane, tied to a 3-site spatial tendon whose spring is at
    rest (stiffness 50 N/m, so it exerts nothing): after 1 s at 240 Hz the sphere is still at
    z = r with zero velocity (static equilibrium, contact force m g).

    The tendon's three transmission slots put the contact slots at an odd offset in the slot array.
    VBD read a contact's side from the parity of its absolute slot, so it applied every contact with
    its two bodies swapped (each side pushed towards the other) whenever the transmission and
    coupling slots summed to an odd count."""
    sim = Sim(_scene_of_worlds([_sphere_on_ground_world()]), device, solver=solver)
    assert sim.model.transmission_slot_count % 2 == 1
    sim.step(1.0 / 240.0, 240)
    q = sim.body_q()[0]
    assert abs(q[2] - 0.1) < RESTING_SPHERE_TOL, f"sphere at z = {q[2]}"
    assert np.abs(q[:2]).max() < RESTING_SPHERE_TOL
    assert np.abs(sim.body_qd()[0]).max() < 1.0e-3  # m/s, rad/s: at rest (one contact ulp per step is 3e-5 m/s)
    if solver == "vbd":  # the contact carries the weight (XPBD reports no multipliers)
        assert (sim.state_0.contact_multiplier.numpy()[:, 0] < 0.0).any()


def test_world_results_do_not_depend_on_other_worlds_slot_counts(device):
    """A world whose sphere slides on the ground pulled by a 3-site spatial tendon (odd transmission
    slot count), stepped alone, then after one other such world (contact slots at an even offset) and
    between two others (odd again): after 0.5 s its poses, velocities and contact multipliers are the
    same bits in all three models. A world's rows must not read the slot numbering of other worlds;
    with the contact sides read from the absolute slot parity, the world alone sank through the
    ground while the one among two worlds rested."""
    dt, steps = 1.0 / 240.0, 120
    target = dict(radius=0.1, pull=0.1, speed=0.5)
    others = [dict(radius=0.12, pull=0.05, speed=-0.3), dict(radius=0.08, pull=0.15, speed=0.2)]

    def run(before, after):
        params = [*before, target, *after]
        sim = Sim(_scene_of_worlds([_sphere_on_ground_world(**p) for p in params]), device, solver="vbd")
        sim.step(dt, steps)
        k = len(before)
        m = sim.model
        # Offset of the first contact slot: joint, guide, transmission and coupling slots precede it.
        contact_base = 2 * m.joint_count + 2 * m.tendon_guide_count + m.transmission_slot_count + m.coupling_slot_count
        return {
            "body_q": sim.state_0.body_q.numpy()[k],
            "body_qd": sim.state_0.body_qd.numpy()[k],
            "contact_multiplier": sim.state_0.contact_multiplier.numpy()[_contact_slot_world(m) == k],
            "slot_parity": contact_base % 2,
        }

    alone = run([], [])
    # Still on the ground (a sliding, rolling contact sinks 1.8e-5 m at 8 iterations; swapped sides
    # sank it by metres), and sliding: friction and the tendon carry load.
    assert abs(alone["body_q"][2] - 0.1) < 1.0e-3
    assert abs(alone["body_qd"][0]) > 0.01
    assert (alone["contact_multiplier"][:, 1:] != 0.0).any()
    one_before = run(others[:1], [])
    between = run(others[:1], others[1:])
    assert {alone["slot_parity"], one_before["slot_parity"], between["slot_parity"]} == {0, 1}
    for other in (one_before, between):
        for name in ("body_q", "body_qd", "contact_multiplier"):
            np.testing.assert_array_equal(other[name], alone[name], err_msg=name)


def test_captured_graph_replays_bitwise_with_joints_and_contacts(device):
    """Stepping through a captured graph (collision + VBD step, two steps per graph) reproduces direct
    stepping bit for bit, multipliers included, on chains that hit the ground."""
    params = [CHAIN_PARAMS[3], CHAIN_PARAMS[0]]
    dt, steps = 1.0 / 120.0, 60
    direct = Sim(_chains_on_ground(params), device, solver="vbd")
    direct.step(dt, steps)
    assert (direct.state_0.contact_multiplier.numpy() != 0).any()  # contacts carried load

    sim = Sim(_chains_on_ground(params), device, solver="vbd")
    sim.step(dt, 2)  # compile kernels outside the capture
    sim.state_0.assign(sim.model.state())
    sim.state_1.assign(sim.model.state())
    graph = capture_steps(sim, dt, 2)
    for _ in range(steps // 2):
        wp.capture_launch(graph)
    _assert_states_equal(_snapshot(sim.state_0), _snapshot(direct.state_0))


# ----------------------------------------------------------------------------------------------
# Multipliers live in the State: reset and checkpoints


def _loaded_scene(n_worlds: int) -> nt.ModelBuilder:
    """Per world: a 3-link chain hung 2 m up (it never reaches the ground) at a per-world tilt and mass,
    a one-link arm whose hinge limit (+-0.2 rad) it falls onto and then rests against, a box resting
    on the ground and a weight hanging from an inextensible cable, so joint, limit, contact and
    tendon span multipliers all carry load. (The limit is on a lone link: limited hinges inside a
    chain make VBD diverge at 8 iterations, see the module docstring.)"""
    scene = nt.ModelBuilder()
    scene.add_ground_plane()
    for k in range(n_worlds):
        mass_scale, angle = CHAIN_PARAMS[k % len(CHAIN_PARAMS)]
        world = nt.ModelBuilder()
        chain, xform = _chain(mass_scale, angle, links=3, height=2.0)
        world.add_builder(chain, xform)
        arm = pendulum_chain(links=1, height=2.0, mass_scale=mass_scale)
        arm.joint_limit_lower[0] = -0.2
        arm.joint_limit_upper[0] = 0.2
        world.add_builder(arm, (0.0, -1.0, 0.0, 0, 0, 0, 1))
        box = world.add_body(xform=(0.0, 1.0, 0.1, 0, 0, 0, 1))
        world.add_shape_box(box, hx=0.1, hy=0.1, hz=0.1, density=1000.0 * mass_scale)
        weight = world.add_body(xform=(0.0, -2.0, 1.5, 0, 0, 0, 1), mass=mass_scale, inertia=np.eye(3) * 0.01)
        world.add_tendon([nt.TendonGuide(body=-1, offset=(0.0, -2.0, 2.0)), nt.TendonGuide(body=weight)])
        scene.add_world(world)
    return scene


def test_reset_restores_masked_worlds_including_their_multipliers(device):
    """reset(state, mask) returns the masked world's bodies to the model's initial poses and velocities
    and zeroes its joint, limit, contact and tendon span multipliers; the other worlds keep every array
    bit for bit.
    Stepping on, the reset world then retraces a fresh run exactly: nothing of its old history
    survives anywhere."""
    dt, steps = 1.0 / 120.0, 40
    sim = Sim(_loaded_scene(3), device, solver="vbd")
    sim.step(dt, steps)
    before = _per_world(sim)
    for w in range(3):  # every multiplier kind is loaded in every world before the reset
        for name in MULTIPLIERS:
            assert (before[w][name] != 0).any(), (w, name)

    sim.solver.reset(sim.state_0, sim.model.world_mask([1]))
    after = _per_world(sim)
    initial = sim.model.body_world.numpy() == 1
    np.testing.assert_array_equal(after[1]["body_q"], sim.model.body_q.numpy()[initial])
    np.testing.assert_array_equal(after[1]["body_qd"], sim.model.body_qd.numpy()[initial])
    for name in MULTIPLIERS:
        assert not after[1][name].any(), name
    for w in (0, 2):
        _assert_states_equal(after[w], before[w])

    fresh = Sim(_loaded_scene(3), device, solver="vbd")
    fresh.step(dt, steps)
    sim.step(dt, steps)
    _assert_states_equal(_per_world(sim)[1], _per_world(fresh)[1])


def test_state_assign_checkpoint_replays_and_multipliers_are_results(device):
    """save -> step N -> restore -> step N gives the same bits, multipliers included; a new solver
    continuing from the checkpoint does too (no hidden solver history). Joint and contact
    multipliers are the step's results (every step starts them at zero): zeroing them in the
    restored state changes nothing. (Span tensions are history, warm-started into the next step;
    ``test_cables.test_stiff_cable_large_step`` is the scene that needs them.)"""
    dt, steps = 1.0 / 120.0, 30
    sim = Sim(_loaded_scene(2), device, solver="vbd")
    sim.step(dt, 30)
    checkpoint = sim.model.state()
    checkpoint.assign(sim.state_0)
    for name in MULTIPLIERS:
        assert getattr(checkpoint, name).numpy().any(), name
    sim.step(dt, steps)
    first = _snapshot(sim.state_0)

    sim.state_0.assign(checkpoint)
    sim.step(dt, steps)
    _assert_states_equal(_snapshot(sim.state_0), first)

    other = Sim(_loaded_scene(2), device, solver="vbd")
    other.state_0.assign(checkpoint)
    other.step(dt, steps)
    _assert_states_equal(_snapshot(other.state_0), first)

    sim.state_0.assign(checkpoint)
    for name in ("joint_multiplier", "joint_limit_multiplier", "contact_multiplier"):
        getattr(sim.state_0, name).zero_()
    sim.step(dt, steps)
    _assert_states_equal(_snapshot(sim.state_0), first)


def test_limited_chain_and_tilted_impacts_stay_bounded(device):
    """Regression: with multipliers warm-started from the previous step, a 3-link chain with
    +-0.3 rad hinge limits diverged at step 62 (dt = 1/120) and the 4-link chain tilted up 0.9 rad
    diverged ~10 steps after hitting the ground. Without warm starts both stay bounded like XPBD:
    measured fastest body speeds 16.2 m/s (limited chain; XPBD < 20) and 18.5 / 58.8 m/s for the
    chain tilted up / down 0.9 rad (XPBD 26.5 / 52.1; down starts it inside the ground). Bounds are
    about 2x the measured values: a divergence reaches 1e30."""
    b = pendulum_chain(links=3)
    for j in range(3):
        b.joint_limit_lower[j], b.joint_limit_upper[j] = -0.3, 0.3
    sim = Sim(b, device, solver="vbd", contacts=False)
    worst = 0.0
    for _ in range(24):
        sim.step(1.0 / 120.0, 10)
        worst = max(worst, np.abs(sim.body_qd()).max())
    assert worst < 40.0

    for tilt, bound in ((-0.9, 40.0), (0.9, 120.0)):
        scene = nt.ModelBuilder()
        scene.add_ground_plane()
        chain, xform = _chain(1.0, tilt)
        scene.add_builder(chain, xform=xform)
        sim = Sim(scene, device, solver="vbd")
        worst = 0.0
        for _ in range(18):
            sim.step(1.0 / 120.0, 10)
            worst = max(worst, np.abs(sim.body_qd()).max())
        assert np.isfinite(worst) and worst < bound


# ----------------------------------------------------------------------------------------------
# Large time steps


def test_chain_at_large_time_step_keeps_its_joints(device):
    """A 3-link chain falling onto the ground at dt = 1/60 with 8 iterations stays finite, and every
    hinge keeps its two anchor points within 4e-3 m of each other over 2 s (|x_p - x_c|, the joint's
    position error). Measured: VBD 1.6e-3 m, multipliers starting at zero each step (4.7e-4 m when
    they were warm-started); XPBD at the same settings: 8.6e-3 m."""
    scene = nt.ModelBuilder()
    scene.add_ground_plane()
    scene.add_builder(pendulum_chain(links=3))
    sim = Sim(scene, device, solver="vbd", iterations=8)
    worst = 0.0
    for _ in range(120):
        sim.step(1.0 / 60.0)
        q = sim.body_q()
        assert np.isfinite(q).all() and np.isfinite(sim.body_qd()).all()
        worst = max(worst, _max_anchor_error(sim.model, q))
    assert worst < 4.0e-3
    assert sim.contacts.count() > 0  # it did reach the ground


def test_box_stack_at_large_time_step_stays_stacked(device):
    """Three 0.2 m boxes (8 kg each) stacked on the ground at dt = 1/60 stay stacked for 2 s: no box
    drifts more than 1 cm from its initial position in any direction (rest: x_n = x_0), and the stack
    ends at rest. Measured: worst drift 3.1e-4 m, final speed 6.4e-6 (XPBD at the same settings
    sinks by up to 3.1 cm)."""
    b = nt.ModelBuilder()
    b.add_ground_plane()
    for i in range(3):
        body = b.add_body(xform=(0.0, 0.0, 0.1 + 0.2 * i, 0, 0, 0, 1))
        b.add_shape_box(body, hx=0.1, hy=0.1, hz=0.1)
    sim = Sim(b, device, solver="vbd", iterations=8)
    q0 = sim.body_q()
    worst = 0.0
    for _ in range(120):
        sim.step(1.0 / 60.0)
        worst = max(worst, np.abs(sim.body_q()[:, :3] - q0[:, :3]).max())
    assert worst < 1.0e-2
    assert np.abs(sim.body_qd()).max() < 1.0e-3  # at rest


def test_bead_on_a_short_loaded_span_converges_to_equal_tensions(device):
    """A frictionless pinhole on a free body (a bead) next to the end anchor of a taut cable whose two
    ends sit on one moving kinematic body: the span between bead and anchor is 0-3 mm long and
    carries 50-100 N, so moving the bead by a fraction of a millimetre turns it by tens of degrees.
    Converged (64 iterations), the spans must be inextensible (l = L) and, across the frictionless
    pinhole, equally tense (capstan with mu = 0; spec: routed cable, frictionless guides transmit the
    tension unchanged). Without the span rows' geometric stiffness (``TendonLinearization.kg``) the
    Newton steps of the bead overshot sideways into a two-cycle between iterations that kept the short
    span stretched by 1.96 mm and pulling 63 N against 113 N (a long-profile fuzz finding).
    Tolerances: 1e-5 m is 0.5 % of that stretch; 1e-3 relative is the settle tolerance of the
    material relaxation (``tendon_settle_tol``)."""
    b = nt.ModelBuilder()
    body0 = b.add_body(is_kinematic=True, mass=1.0, inertia=np.eye(3) * 0.03125)
    bead = b.add_body(mass=2.16, inertia=np.eye(3) * 0.03125)
    b.add_tendon(
        [
            # (This scene's long-profile original started at a roller on body0; a route may no
            # longer end on a roller, and that span, wholly on body0, exerted nothing.)
            nt.TendonGuide(body=body0),
            nt.TendonGuide(body=body0),
            nt.TendonGuide(body=bead, guide_type=nt.TendonGuideType.PINHOLE, offset=(-0.25, 0.0, 0.0)),
            nt.TendonGuide(body=body0, offset=(-0.25, 0.0, 0.0)),
        ]
    )
    sim = Sim(b, device, iterations=64, contacts=False, solver="vbd")
    qd = sim.state_0.body_qd.numpy()
    qd[body0] = (0.45, -0.356, 0.449, -0.376, -0.153, 0.655)
    sim.state_0.body_qd.assign(qd)
    sv = sim.solver
    sim.step(1.0 / 240.0)  # the bead starts on the end anchor: an end stop (span 2 at the rest floor)
    for step in range(1, 4):
        sim.step(1.0 / 240.0)
        rest = sim.state_0.tendon_segment_rest_length.numpy()
        assert rest[2] > 1.0e-5, f"step {step}: the bead should have left the end stop: {rest}"
        xl = sv.tendon_segment_attachment_l.numpy().astype(np.float64)
        xr = sv.tendon_segment_attachment_r.numpy().astype(np.float64)
        stretch = np.linalg.norm(xr - xl, axis=1) - rest
        tension = sv.tendon_segment_material_tension.numpy().astype(np.float64)
        assert np.all(np.abs(stretch[1:]) <= 1.0e-5), f"step {step}: stretch {stretch}"
        assert tension[1] > 1.0, f"step {step}: the cable should be loaded: {tension}"
        assert abs(tension[1] - tension[2]) <= 1.0e-3 * max(tension[1:]), f"step {step}: tensions {tension}"


def test_atwood_spans_pull_one_tension_every_step(device):
    """Atwood machine (1.1 kg and 1.0 kg on an inextensible cable over a fixed frictionless roller):
    the two spans are one run row (``cable.TendonLinearization``), so after every step they report
    the same tension, bit for bit, and the machine follows the ideal one (spec: a frictionless guide
    transmits the tension unchanged; a = g (m1 - m2)/(m1 + m2), T = 2 m1 m2 g/(m1 + m2)).
    Tolerances: after 1 s at 8 iterations this scene measured -0.38 % on the drop and -0.07 % on the
    tension; 0.5 % and 0.3 % leave room for float32 and the integrator's O(h) error. (The per-span
    rows before the run rows reported 10.238 N and 10.234 N on the two spans at the first step.)"""
    g, m1, m2, dt = 9.81, 1.1, 1.0, 1.0 / 240.0
    b = nt.ModelBuilder()
    w1 = b.add_body(xform=(-0.5, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=m1, inertia=np.eye(3) * 0.01)
    w2 = b.add_body(xform=(0.5, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=m2, inertia=np.eye(3) * 0.01)
    b.add_tendon(
        [
            nt.TendonGuide(body=w1),
            nt.TendonGuide(
                body=-1, guide_type=nt.TendonGuideType.ROLLER, radius=0.5, offset=(0.0, 0.0, 2.0), axis=(0.0, 1.0, 0.0)
            ),
            nt.TendonGuide(body=w2),
        ]
    )
    sim = Sim(b, device, contacts=False, solver="vbd")
    for step in range(240):
        sim.step(dt)
        tension = sim.solver.tendon_segment_material_tension.numpy()
        assert tension[0] == tension[1], f"step {step}: {tension}"
    accel = g * (m1 - m2) / (m1 + m2)
    drop = 1.0 - float(sim.state_0.body_q.numpy()[w1][2])
    assert drop == pytest.approx(0.5 * accel, rel=5.0e-3)
    assert float(tension[0]) == pytest.approx(2.0 * m1 * m2 * g / (m1 + m2), rel=3.0e-3)


@pytest.mark.parametrize("swing", [0.0, 0.4])
@pytest.mark.parametrize("rollers", [1, 2])
def test_slipping_capstan_holds_its_bound_after_every_step(device, rollers, swing):
    """Two masses on an inextensible cable over fixed rollers wrapped by pi in all, so heavy enough
    to slip: 3 kg against 1 kg over one roller with mu = 0.3 (e = exp(0.3 pi) = 2.57), or 3.5 kg
    against 1 kg over two rollers with mu = 0.35 (e = exp(0.35 pi) = 3.0), whose middle span no
    moving body holds. Spec (capstan): while the cable slips, T_tight = exp(mu theta) T_slack, the
    product over the guides, and the machine follows a = g (m1 - e m2)/(m1 + e m2),
    T_slack = m2 (g + a). The runs on the two sides are one chain row (``cable.TendonLinearization``;
    across the middle span with the product of the ratios), projected onto the bound wherever it is
    evaluated, so the tensions applied in the last sweep meet the bound to float32 rounding: measured
    1e-7..2e-7 relative at 4, 8 and 16 iterations, with the heavy mass started sideways so that it
    swings (changing theta) as well. Separate rows exchanging material only between iterations
    exceeded it by 3e-5 to 3e-4 relative; the bound here is 1e-5. The hanging machine's slack
    tension after 1 s measured within 0.05 % of the ideal one (0.3 % allowed, as the Atwood test)."""
    g, m2 = 9.81, 1.0
    mu, m1 = (0.3, 3.0) if rollers == 1 else (0.35, 3.5)
    centres = [0.0] if rollers == 1 else [-0.5, 0.5]
    radius = 0.5 if rollers == 1 else 0.2
    b = nt.ModelBuilder()
    w1 = b.add_body(
        xform=(-0.5 - 0.2 * (rollers - 1) + swing, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=m1, inertia=np.eye(3) * 0.01
    )
    w2 = b.add_body(xform=(0.5 + 0.2 * (rollers - 1), 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=m2, inertia=np.eye(3) * 0.01)
    guides = [nt.TendonGuide(body=w1, offset=(0.0, 0.0, 0.05))]
    for x in centres:
        guides.append(
            nt.TendonGuide(
                body=-1,
                guide_type=nt.TendonGuideType.ROLLER,
                radius=radius,
                offset=(x, 0.0, 2.0),
                axis=(0.0, 1.0, 0.0),
                mu=mu,
            )
        )
    guides.append(nt.TendonGuide(body=w2, offset=(0.0, 0.0, 0.05)))
    b.add_tendon(guides)
    sim = Sim(b, device, contacts=False, solver="vbd", iterations=8)
    for step in range(240):
        sim.step(1.0 / 240.0)
        tension = sim.solver.tendon_segment_material_tension.numpy().astype(np.float64)
        wrap = sim.solver.tendon_guide_wrap.numpy().astype(np.float64)
        e = math.exp(mu * float(wrap[1 : 1 + rollers].sum()))
        assert tension[0] > tension[-1] > 0.0, f"step {step}: {tension}"
        assert tension[0] <= e * tension[-1] * (1.0 + 1.0e-5), f"step {step}: {tension}, e = {e}"
    if swing == 0.0:
        e = math.exp(mu * math.pi)
        accel = g * (m1 - e * m2) / (m1 + e * m2)
        assert tension[-1] == pytest.approx(m2 * (g + accel), rel=3.0e-3)


# ----------------------------------------------------------------------------------------------
# Kept rows (``cable.rows_still_hold``): a tendon's span rows are kept between iterations while a
# new linearization could change them by rounding alone.


def _kept_rows_scene(name: str) -> nt.ModelBuilder:
    """Frictionless scenes whose bodies move along their spans (the rows' gradients do not turn)."""
    G, K = nt.TendonGuide, nt.TendonGuideType
    b = nt.ModelBuilder()
    if name == "atwood_roller":  # fixed roller, inextensible
        w1 = b.add_body(xform=(-0.5, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=1.1, inertia=np.eye(3) * 0.01)
        w2 = b.add_body(xform=(0.5, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3) * 0.01)
        roller = G(body=-1, guide_type=K.ROLLER, radius=0.5, offset=(0.0, 0.0, 2.0), axis=(0.0, 1.0, 0.0))
        b.add_tendon([G(body=w1), roller, G(body=w2)])
    elif name == "pinholes_damped":  # two world pinholes, compliant and damped spans
        w1 = b.add_body(xform=(-0.5, 0.1, 1.0, 0.0, 0.0, 0.0, 1.0), mass=1.1, inertia=np.eye(3) * 0.01)
        w2 = b.add_body(xform=(0.5, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3) * 0.01)
        c = dict(compliance=1.0e-4, damping=0.5)
        b.add_tendon(
            [
                G(body=w1, offset=(0.0, 0.0, 0.05)),
                G(body=-1, guide_type=K.PINHOLE, offset=(-0.5, 0.0, 2.0), **c),
                G(body=-1, guide_type=K.PINHOLE, offset=(0.5, 0.0, 2.0), **c),
                G(body=w2, **c),
            ]
        )
    elif name == "moving_block":  # a roller on a free block, a counterweight over a world roller
        blk = b.add_body(xform=(0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=2.0, inertia=np.eye(3) * 0.02)
        cw = b.add_body(xform=(1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=1.2, inertia=np.eye(3) * 0.01)
        b.add_tendon(
            [
                G(body=-1, offset=(-0.2, 0.0, 2.0)),
                G(body=blk, guide_type=K.ROLLER, radius=0.2, axis=(0.0, 1.0, 0.0), orientation=-1),
                G(
                    body=-1,
                    guide_type=K.ROLLER,
                    offset=(0.6, 0.0, 2.0),
                    radius=0.2,
                    axis=(0.0, 1.0, 0.0),
                    orientation=-1,
                ),
                G(body=cw),
            ]
        )
    else:  # "routing_3d": the benchmark's 3D route over rollers with axes Y, Z, X; the weight swings
        w = b.add_body(xform=(1.1, 1.45, 1.25, 0.0, 0.0, 0.0, 1.0), mass=1.0, inertia=np.eye(3) * 0.01)
        route = [G(body=-1, offset=(0.0, 0.0, 1.0))]
        for centre, axis, orientation in (
            ((0.1, 0.0, 2.0), (0.0, 1.0, 0.0), 1),
            ((1.0, 0.1, 2.1), (0.0, 0.0, 1.0), 1),
            ((1.1, 1.0, 2.0), (1.0, 0.0, 0.0), -1),
        ):
            route.append(G(body=-1, guide_type=K.ROLLER, offset=centre, axis=axis, radius=0.1, orientation=orientation))
        route.append(G(body=w))
        b.add_tendon(route)
    return b


def _kept_rows_run(device, name: str, keep: bool, iterations: int, steps: int = 240):
    sim = Sim(
        _kept_rows_scene(name), device, iterations=iterations, contacts=False, solver="vbd", tendon_keep_rows=keep
    )
    path = []
    for _ in range(steps):
        sim.step(1.0 / 240.0)
        path.append(sim.body_q()[:, :3])
    return np.array(path), sim.solver.tendon_segment_material_tension.numpy().astype(np.float64)


@pytest.mark.parametrize("name", ["atwood_roller", "pinholes_damped", "moving_block", "routing_3d"])
def test_kept_rows_follow_the_relinearized_solution(device, name):
    """Keeping a tendon's rows while their gradients cannot have turned (``tendon_keep_rows``, the
    default) changes the iterations' path, not their answer. Over 1 s at 8 iterations:

    * the results are not bitwise those of relinearizing every iteration (the kept path ran);
    * every body's path stays as close to a 64-iteration run as the relinearized one does, within
      25 % of the relinearized 8-iteration error plus 1e-5 m (float32 positions of order 1 m
      accumulated over 240 steps). Measured: Atwood 2.05 mm against 1.85 mm, moving block 1.97 mm
      against 1.97 mm, pinholes 2.0 um against 0.8 um, 3D route 9.5 um against 6.6 um;
    * the tensions agree within 2e-3 (measured 4e-4 to 1.2e-3; the 3D route's 8-iteration tension
      differs from its motion's by 7e-4, ``test_kept_rows_report_the_tension_the_motion_implies``).
    """
    kept, t_kept = _kept_rows_run(device, name, True, 8)
    fresh, t_fresh = _kept_rows_run(device, name, False, 8)
    ref, _ = _kept_rows_run(device, name, False, 64)
    assert not np.array_equal(kept, fresh), "the rows were never kept"
    err_kept = np.max(np.abs(kept - ref))
    err_fresh = np.max(np.abs(fresh - ref))
    assert err_kept <= 1.25 * err_fresh + 1.0e-5, f"{name}: kept {err_kept:.3g} m, relinearized {err_fresh:.3g} m"
    np.testing.assert_allclose(t_kept, t_fresh, rtol=2.0e-3)


def test_kept_rows_report_the_tension_the_motion_implies(device):
    """The 3D route's weight (1 kg) swings on its cable; its tension must be ``m |a - g|`` with a the
    weight's acceleration (the cable is the only other force; a from the last three positions, whose
    float32 rounding at 1.2 m is 0.07 % of g per ulp). At 64 iterations with kept rows the reported
    tension is within 0.05 % of that (9.0929 N against 9.0978 N); 0.3 % allows four ulps of
    position noise. Relinearizing every iteration read 9.2815 N against 9.0803 N (+2.2 %): each new
    linearization found float32 rounding of the route's length (about 6e-8 m) as new stretch, and the
    multiplier summed it at the row's penalty (5.8e4 N/m), 0.0034 N per iteration (docs/vbd.md)."""
    path, tension = _kept_rows_run(device, "routing_3d", True, 64)
    accel = (path[-1, 0] - 2.0 * path[-2, 0] + path[-3, 0]) * 240.0**2
    implied = np.linalg.norm(accel - np.array([0.0, 0.0, -9.81]))
    assert tension[-1] == pytest.approx(implied, rel=3.0e-3)


@wp.kernel
def _row_turn_bound_kernel(
    du: wp.array(dtype=wp.vec3),
    n: wp.array(dtype=wp.vec3),
    chord: wp.array(dtype=float),
    turn: wp.array(dtype=float),
    out: wp.array(dtype=float),
):
    i = wp.tid()
    out[i] = cable_kernels.row_turn_bound(du[i], n[i], chord[i], turn[i])


def _rotate(phi: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotation of v by the rotation vector phi (Rodrigues), float64."""
    angle = np.linalg.norm(phi)
    if angle == 0.0:
        return v
    k = phi / angle
    return v * math.cos(angle) + np.cross(k, v) * math.sin(angle) + k * np.dot(k, v) * (1.0 - math.cos(angle))


def _angle(a: np.ndarray, b: np.ndarray) -> float:
    return math.atan2(np.linalg.norm(np.cross(a, b)), np.dot(a, b))


def test_row_turn_bound_covers_the_turn_of_direction_and_arms(device):
    """``cable.row_turn_bound`` (the test behind kept rows) against exact rigid motions in float64: 400
    random spans (free length 0.2-3 m) whose two end bodies translate by up to 5 cm and turn by up to
    0.05 rad about their COMs (offsets r up to 0.5 m). The span's direction n must turn by no more
    than the bound (first-order in the motion; the second-order remainder, ``|r| |phi|^2 / (2 l)``, at
    most 3e-3 of the bound here, is covered by the rotation term |phi|), and each end's arm ``r x n``
    (the row's angular gradient) must change by no more than |r| times the bound. The 1e-4 relative
    slack is float32 rounding of the bound. The bound is also not loose: for pure translations across the span it is
    within 10 % of the exact turn. A motion along the span by its full length has no bound (1e30)."""
    rng = np.random.default_rng(7)
    cases = []
    for _ in range(400):
        n = rng.normal(size=3)
        n /= np.linalg.norm(n)
        length = rng.uniform(0.2, 3.0)
        xl = rng.uniform(-1.0, 1.0, size=3)
        xr = xl + length * n
        ends = []
        for x in (xl, xr):
            com = x - rng.uniform(-0.5, 0.5, size=3) * rng.uniform(0.0, 1.0)
            v = rng.normal(size=3) * 0.05 / math.sqrt(3.0)
            phi = rng.normal(size=3) * 0.05 / math.sqrt(3.0)
            ends.append((x, com, v, phi))
        cases.append((n, length, ends))
    du, ns, chord, turn = [], [], [], []
    for n, length, ends in cases:
        u = [v + np.cross(phi, x - com) for x, com, v, phi in ends]
        du.append(u[1] - u[0])
        ns.append(n)
        chord.append(length)
        turn.append(sum(np.linalg.norm(e[3]) for e in ends))
    # Pure translations across the span (tightness), and one folded span.
    for n, length, _ in cases[:50]:
        across = np.cross(n, rng.normal(size=3))
        du.append(across / np.linalg.norm(across) * 0.01 * length)
        ns.append(n)
        chord.append(length)
        turn.append(0.0)
    du.append(np.array([0.0, 0.0, -1.0]))
    ns.append(np.array([0.0, 0.0, 1.0]))
    chord.append(1.0)
    turn.append(0.0)
    arrays = [
        wp.array(np.array(a, dtype=np.float32), dtype=t, device=device) for a, t in ((du, wp.vec3), (ns, wp.vec3))
    ]
    arrays += [wp.array(np.array(a, dtype=np.float32), dtype=float, device=device) for a in (chord, turn)]
    out = wp.zeros(len(du), dtype=float, device=device)
    wp.launch(_row_turn_bound_kernel, dim=len(du), inputs=arrays, outputs=[out], device=device)
    bound = out.numpy().astype(np.float64)
    for i, (n, _length, ends) in enumerate(cases):
        moved = [_rotate(phi, x - com) + com + v for x, com, v, phi in ends]
        n_new = (moved[1] - moved[0]) / np.linalg.norm(moved[1] - moved[0])
        assert _angle(n, n_new) <= bound[i] * (1.0 + 1.0e-4), f"case {i}: direction"
        for x, com, _v, phi in ends:
            r = x - com
            change = np.linalg.norm(np.cross(_rotate(phi, r), n_new) - np.cross(r, n))
            assert change <= np.linalg.norm(r) * bound[i] * (1.0 + 1.0e-4) + 1.0e-9, f"case {i}: arm"
    for j in range(50):
        i = len(cases) + j
        exact = math.atan(0.01)
        assert exact <= bound[i] <= 1.1 * exact, f"translation {j}: bound {bound[i]}, exact {exact}"
    assert bound[-1] >= 1.0e29


def test_kept_rows_option_is_a_bool(device):
    b = _kept_rows_scene("atwood_roller")
    b.color()
    model = b.finalize(device)
    with pytest.raises(TypeError, match="tendon_keep_rows must be a bool"):
        SolverVBD(model, tendon_keep_rows=1)
    assert SolverVBD(model).tendon_keep_rows is True


# ----------------------------------------------------------------------------------------------
# Damping of spans without a row of their own

HANG_MASS = 2.0  # kg
HANG_COMPLIANCE = 1.0e-3  # m/N, every span
HANG_DAMPING = 100.0  # N s/m, every span
# After settling (from 1 s on; XPBD settles in 0.75 s) the load holds still to float32 rounding:
# one ulp of a coordinate near 1 m is 1.2e-7 m, measured peak-to-peak 1.2e-7 to 2.4e-7 m on both
# solvers. The span damping lost, VBD's load swung by 2.2 mm (across the load) to 38 mm (world
# anchor) peak-to-peak between 1 s and 1.5 s.
HANG_STILL_TOL = 1.0e-5
# The static answers below hold to the iterations' residual: measured |z - z*| <= 1.3e-5 m and
# |T - T*| <= 1.3e-3 T* (VBD, 8 iterations, across the load; XPBD 7e-6 m, 6e-4 T*). A stretch error of 3e-5 m is
# 1.5e-3 of the hanging stretch; 2e-3 T* is 40 mN of the 19.62 N load.
HANG_Z_TOL = 3.0e-5
HANG_T_RTOL = 2.0e-3


def _damped_hang(anchor: str) -> tuple[nt.ModelBuilder, float, float]:
    """A 2 kg load hanging 1 m below a frictionless world pinhole at the origin, every span of
    compliance c = 1e-3 m/N and damping 100 N s/m, rest lengths from the initial (unstretched) pose.
    Returns the builder, the load's static height z* and the static span tension T*.

    * ``world``: the cable runs from a world anchor 0.5 m to the side, through the pinhole, down to
      the load. One cable through a frictionless pinhole pulls one tension, and only the lower span
      holds the load: ``T* = m g = 19.62 N``. Both spans stretch by c T*, all of it paid into the
      lower span (the upper one is held between fixed points), so ``z* = -(1 + 2 c T*)``.
    * ``kinematic``: the pinhole is on a kinematic body that descends at 0.1 m/s from the origin, the
      anchor 1 m above it. The upper span lengthens with the pinhole's motion and takes the material
      for it from the lower one, so the load keeps still: the same T* and z* (the pinhole's path
      leaves the total length of the two spans unchanged).
    * ``same_body``: the cable hangs from two world anchors 0.2 m apart, down through two pinholes on
      the load and across it between them (a span with both ends on one body). Two vertical spans
      hold the load: ``T* = m g / 2``; three spans stretch by c T*, shared by the two vertical ones:
      ``z* = -(1 + 1.5 c T*)``.

    The upper span (world, kinematic) and the span across the load (same_body) have no row of their
    own: no moving body changes their length, only the material the run moves into them (and the
    kinematic pinhole's motion)."""
    G, K = nt.TendonGuide, nt.TendonGuideType
    span = dict(compliance=HANG_COMPLIANCE, damping=HANG_DAMPING)
    b = nt.ModelBuilder()
    load = b.add_body(xform=(0.0, 0.0, -1.0, 0, 0, 0, 1), mass=HANG_MASS, inertia=np.eye(3) * 0.01)
    g = 9.81
    if anchor == "same_body":
        b.add_tendon(
            [
                G(body=-1, offset=(-0.1, 0.0, 0.0)),
                G(body=load, guide_type=K.PINHOLE, offset=(-0.1, 0.0, 0.0), **span),
                G(body=load, guide_type=K.PINHOLE, offset=(0.1, 0.0, 0.0), **span),
                G(body=-1, offset=(0.1, 0.0, 0.0), **span),
            ]
        )
        tension = HANG_MASS * g / 2.0
        return b, -(1.0 + 1.5 * HANG_COMPLIANCE * tension), tension
    if anchor == "kinematic":
        holder = b.add_body(xform=(0.0, 0.0, 0.0, 0, 0, 0, 1), is_kinematic=True, velocity=(0, 0, -0.1, 0, 0, 0))
        route = [G(body=-1, offset=(0.0, 0.0, 1.0)), G(body=holder, guide_type=K.PINHOLE, **span)]
    else:
        route = [G(body=-1, offset=(0.5, 0.0, 0.0)), G(body=-1, guide_type=K.PINHOLE, **span)]
    b.add_tendon([*route, G(body=load, **span)])
    tension = HANG_MASS * g
    return b, -(1.0 + 2.0 * HANG_COMPLIANCE * tension), tension


def _hang_run(device, solver: str, anchor: str, **kw):
    """1.5 s at 240 Hz: the load's height [m] and the spans' axial tensions [N] of the last 0.5 s."""
    b, z_static, t_static = _damped_hang(anchor)
    sim = Sim(b, device, solver=solver, contacts=False, **kw)
    load = 0
    z, tension = [], []
    for i in range(360):
        sim.step(1.0 / 240.0)
        if i >= 240:
            z.append(sim.body_q()[load, 2])
            material = sim.solver.tendon_segment_material_tension.numpy().astype(np.float64)
            damping = sim.solver.tendon_segment_damping_tension.numpy().astype(np.float64)
            tension.append(material + damping)
    return np.array(z), np.array(tension), z_static, t_static


@pytest.mark.parametrize("anchor", ["world", "kinematic", "same_body"])
def test_damped_span_without_a_row_settles_like_xpbd(device, solver, anchor):
    """A load hanging on a damped cable through a frictionless pinhole comes to rest at the static
    answer (``_damped_hang``: z*, and every span at T*). On VBD the spans joined by the pinhole are
    one run row, ``T_run = sum f_s T_s / sum f_s`` with ``f_s = 1/(k_s + d_s/h)``; a span without a
    row of its own (held between immovable guides, or across one body) entered it with its spring
    only, ``f = c``, so the run lost that span's damping: in series with the other span's stiff
    damper, the spring swung undamped (38 mm peak-to-peak in the last 0.5 s with a world anchor, the
    tensions up to 92 % off T*; 2.2 mm and 21 % across the load). XPBD, whose relaxation and rows damp every
    span, settles in 0.75 s."""
    z, tension, z_static, t_static = _hang_run(device, solver, anchor)
    assert np.ptp(z) < HANG_STILL_TOL, f"load swings by {np.ptp(z):.3g} m"
    assert np.abs(z - z_static).max() < HANG_Z_TOL, f"load at {z[-1]} m, static {z_static} m"
    np.testing.assert_allclose(tension, t_static, rtol=HANG_T_RTOL)


def test_kept_rows_keep_the_damping_of_a_span_without_a_row(device):
    """``tendon_keep_rows`` (the default) rebuilds a kept run row's tension from its members, the
    damped span without a row included (``keep_tendon_rows``): with kept rows the load through the
    world pinhole settles at the same static answer as when every iteration relinearizes, and the
    kept path did run (the results differ in their bits)."""
    kept = _hang_run(device, "vbd", "world")
    fresh = _hang_run(device, "vbd", "world", tendon_keep_rows=False)
    assert not np.array_equal(kept[0], fresh[0]), "the rows were never kept"
    for z, tension, z_static, t_static in (kept, fresh):
        assert np.ptp(z) < HANG_STILL_TOL
        assert np.abs(z - z_static).max() < HANG_Z_TOL
        np.testing.assert_allclose(tension, t_static, rtol=HANG_T_RTOL)
