"""The reinforcement-learning layer: observations, per-world parameters, masked resets, example environments."""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

import newton_tendon as nt
from newton_tendon.examples import env_finger, env_payload
from newton_tendon import rl

from ..helpers import Sim

DT = 1.0 / 240.0


# ----------------------------------------------------------------------------------------------
# A small scene with every observed and randomized kind of entity


def _template(mass=1.0, link_mass=0.5, compliance=1e-4, mu=0.2, stiffness=20.0) -> nt.ModelBuilder:
    """A horizontal link on a hinge held by a fixed-tendon spring, and a payload hanging from a
    routed cable: world anchor -> world pinhole (capstan friction) -> payload."""
    b = nt.ModelBuilder()
    link = b.add_link(xform=(0.25, 0.0, 1.0, 0, 0, 0, 1), mass=link_mass, inertia=np.eye(3) * 0.0625, label="link")
    j = b.add_joint_revolute(
        -1, link, parent_xform=(0, 0, 1.0, 0, 0, 0, 1), child_xform=(-0.25, 0, 0, 0, 0, 0, 1), axis=(0, 1, 0)
    )
    b.add_fixed_tendon([j], [0.1], label="spring", stiffness=stiffness, damping=0.5)
    payload = b.add_body(xform=(1.0, 0.0, 0.5, 0, 0, 0, 1), mass=mass, inertia=np.eye(3) * 0.0625, label="payload")
    b.add_tendon(
        [
            nt.TendonGuide(body=-1, offset=(0.4, 0.0, 1.5)),
            nt.TendonGuide(
                body=-1, guide_type=nt.TendonGuideType.PINHOLE, offset=(1.0, 0.0, 1.5), mu=mu, compliance=compliance
            ),
            nt.TendonGuide(body=payload, compliance=compliance, damping=1.0),
        ],
        label="cable",
    )
    return b


def _replicated(world_count: int, **kw) -> nt.ModelBuilder:
    scene = nt.ModelBuilder()
    scene.replicate(_template(**kw), world_count)
    return scene


# ----------------------------------------------------------------------------------------------
# Observations


def test_observer_matches_direct_reads(device):
    """Every observed column equals the array it reads, (value - offset) * scale in float32, in the
    order of the spec, for every world, in one gather."""
    sim = Sim(_replicated(3), device, contacts=False)
    sim.step(DT, 10)
    spec = (
        rl.ObservationSpec()
        .add("body_q", ["payload"])
        .add("body_qd", [0])
        .add("joint_q")
        .add("joint_qd", offset=0.5, scale=2.0)
        .add("tendon_length")
        .add("tendon_segment_material_tension", scale=0.1)
        .add("tendon_segment_rest_length")
        .add("transmission_length")
        .add("transmission_tension")
        .add_input("goal", 2)
    )
    obs = rl.Observer(sim.model, spec, sim.solver)
    assert obs.dim == 7 + 6 + 1 + 1 + 1 + 2 + 2 + 1 + 1 + 2
    assert obs.columns[0] == "body_q[1].x" and obs.columns[-1] == "goal[1]"
    obs.input("goal").assign(np.arange(6, dtype=np.float32).reshape(3, 2))
    o = obs.compute(sim.state_0).numpy()
    q = sim.state_0.body_q.numpy().reshape(3, 2, 7)
    qd = sim.state_0.body_qd.numpy().reshape(3, 2, 6)
    jq, jqd = nt.eval_joint_coordinates(sim.model, sim.state_0)
    f32 = np.float32
    np.testing.assert_array_equal(o[:, 0:7], q[:, 1])
    np.testing.assert_array_equal(o[:, 7:13], qd[:, 0])
    np.testing.assert_array_equal(o[:, 13], jq.numpy())
    np.testing.assert_array_equal(o[:, 14], (jqd.numpy() - f32(0.5)) * f32(2.0))
    np.testing.assert_array_equal(o[:, 15], sim.solver.tendon_length.numpy())
    tension = sim.solver.tendon_segment_material_tension.numpy().reshape(3, 2)
    np.testing.assert_array_equal(o[:, 16:18], tension * f32(0.1))
    np.testing.assert_array_equal(o[:, 18:20], sim.state_0.tendon_segment_rest_length.numpy().reshape(3, 2))
    np.testing.assert_array_equal(o[:, 20], sim.solver.transmission_length.numpy())
    np.testing.assert_array_equal(o[:, 21], sim.solver.transmission_tension.numpy())
    np.testing.assert_array_equal(o[:, 22:24], np.arange(6).reshape(3, 2))
    assert np.all(np.abs(o[:, 16:18]) > 0.0)  # the cable carries the payload


def test_observer_capture_replays(device):
    """A captured gather reads the state's current contents at every replay (no host values baked in)."""
    sim = Sim(_replicated(2), device, contacts=False)
    obs = rl.Observer(sim.model, rl.ObservationSpec().add("body_position").add("joint_q"), sim.solver)
    obs.compute(sim.state_0)
    with wp.ScopedCapture(device=sim.model.device) as cap:
        obs.compute(sim.state_0)
    sim.step(DT, 20)
    wp.capture_launch(cap.graph)
    captured = obs.obs.numpy().copy()
    direct = obs.compute(sim.state_0).numpy()
    np.testing.assert_array_equal(captured, direct)
    assert not np.array_equal(direct[:, 2], sim.model.body_q.numpy().reshape(2, 2, 7)[:, 0, 2])


def test_observer_validation():
    """Bad specs fail at construction, naming the quantity, the entity or the rule."""
    model = _replicated(2).finalize("cpu")
    with pytest.raises(ValueError, match="unknown quantity 'body_pose'"):
        rl.ObservationSpec().add("body_pose")
    with pytest.raises(ValueError, match="pass solver="):
        rl.Observer(model, rl.ObservationSpec().add("tendon_length"))
    with pytest.raises(ValueError, match="no body labelled 'hand'"):
        rl.Observer(model, rl.ObservationSpec().add("body_position", ["hand"]))
    with pytest.raises(ValueError, match="local body index 2 is out of range"):
        rl.Observer(model, rl.ObservationSpec().add("body_position", [2]))
    with pytest.raises(ValueError, match="selects nothing"):
        rl.Observer(model, rl.ObservationSpec())
    with pytest.raises(ValueError, match="finite number"):
        rl.ObservationSpec().add("joint_q", scale=float("nan"))
    with pytest.raises(ValueError, match="already declared"):
        rl.ObservationSpec().add_input("goal", 3).add_input("goal", 1)
    # Worlds that do not share a template cannot be selected per world.
    uneven = nt.ModelBuilder()
    uneven.add_world(_template())
    one = nt.ModelBuilder()
    one.add_body(mass=1.0, inertia=np.eye(3))
    uneven.add_world(one)
    with pytest.raises(ValueError, match="different numbers of body entities"):
        rl.world_entities(uneven.finalize("cpu"), "body")


# ----------------------------------------------------------------------------------------------
# Per-world parameters

PARAMS = [
    dict(mass=0.75, link_mass=0.5, compliance=1e-4, mu=0.0, stiffness=20.0),
    dict(mass=1.25, link_mass=0.25, compliance=4e-4, mu=0.5, stiffness=5.0),
    dict(mass=2.0, link_mass=1.0, compliance=2e-5, mu=1.0, stiffness=50.0),
]


def test_randomized_worlds_match_separately_built_worlds(device, solver):
    """Worlds whose masses, cable compliance, pinhole friction and transmission stiffness were
    rewritten per world with set_per_world step exactly (bitwise) like worlds built with those
    parameters. Bitwise is the right bar: the values are float32-exact or written as the same float32
    the builder stores, the inverse masses are computed by the same formula, and worlds never
    interact (every per-world sum runs in a fixed order)."""
    n = len(PARAMS)
    batch = Sim(_replicated(n), device, contacts=False, solver=solver)
    masses = np.array([[p["link_mass"], p["mass"]] for p in PARAMS])
    flags = rl.set_per_world(batch.model, "body_mass", masses, solver=batch.solver)
    assert flags == nt.ModelFlags.BODY_PROPERTIES
    comp = np.array([[p["compliance"]] * 2 for p in PARAMS])
    rl.set_per_world(batch.model, "tendon_segment_compliance", comp, solver=batch.solver)
    mu = np.array([[0.0, p["mu"], 0.0] for p in PARAMS])
    rl.set_per_world(batch.model, "tendon_guide_mu", mu, solver=batch.solver)
    # One entity by label, in a subset of worlds given out of order.
    stiff = np.array([[PARAMS[2]["stiffness"]], [PARAMS[1]["stiffness"]]])
    rl.set_per_world(batch.model, "transmission_stiffness", stiff, entities=["spring"], worlds=[2, 1])
    batch.solver.notify_model_changed(nt.ModelFlags.TRANSMISSION_PROPERTIES)
    batch.step(DT, 60)
    q = batch.body_q().reshape(n, 2, 7)
    for w, p in enumerate(PARAMS):
        single = Sim(_template(**p), device, contacts=False, solver=solver)
        single.step(DT, 60)
        np.testing.assert_array_equal(q[w], single.body_q(), err_msg=f"world {w}")
    # The parameters matter: the payloads ended at different heights.
    assert len({round(float(z), 4) for z in q[:, 1, 2]}) == n


def test_set_per_world_updates_derived_arrays():
    """Mass and inertia edits refresh the inverse arrays of exactly the written bodies; a rest-length
    edit moves the reset baseline; gravity is per world."""
    model = _replicated(2).finalize("cpu")
    inv0 = model.body_inv_mass.numpy().copy()
    rl.set_per_world(model, "body_mass", np.array([[4.0]]), entities=["payload"], worlds=[1])
    inv = model.body_inv_mass.numpy()
    np.testing.assert_array_equal(inv[[0, 1, 2]], inv0[[0, 1, 2]])
    assert inv[3] == np.float32(0.25)
    inertia = np.broadcast_to(np.diag([0.5, 0.25, 0.125]), (2, 1, 3, 3))
    rl.set_per_world(model, "body_inertia", inertia, entities=[0])
    np.testing.assert_array_equal(model.body_inv_inertia.numpy()[[0, 2]], [np.diag([2.0, 4.0, 8.0])] * 2)
    rl.set_per_world(model, "tendon_segment_rest_length", np.array([[0.7, 1.1], [0.6, 1.2]]))
    np.testing.assert_allclose(model.tendon_segment_initial_rest_length.numpy(), [0.7, 1.1, 0.6, 1.2], rtol=1e-7)
    assert rl.set_per_world(model, "gravity", np.array([[0, 0, -9.81], [0, 0, -1.62]])) is None
    np.testing.assert_allclose(model.gravity.numpy()[:, 2], [-9.81, -1.62], rtol=1e-6)


@pytest.mark.parametrize(
    "name, values, kw, match",
    [
        ("body_weight", np.ones((2, 2)), {}, "unknown parameter 'body_weight'"),
        ("body_mass", np.ones((2, 3)), {}, r"values must have shape \[worlds, entities\] = \(2, 2\)"),
        ("body_mass", -np.ones((2, 2)), {}, "must be finite and > 0"),
        ("body_mass", np.full((2, 2), np.nan), {}, "must be finite and > 0"),
        ("body_inertia", np.ones((2, 2, 3)), {}, r"\(2, 2, 3, 3\)"),
        ("tendon_guide_mu", -np.ones((2, 3)), {}, "must be finite and >= 0"),
        ("transmission_upper_limit", np.full((2, 1), -np.inf), {}, r"a number or \+inf"),
        ("transmission_spring_upper", np.full((2, 1), -5.0), {}, "lower bound .* above the upper"),
        ("joint_armature", np.ones((2, 1)), {}, "joint armature is split at finalize"),
        ("body_mass", np.ones((1, 1)), {"worlds": [2]}, r"world indices must be in \[0, 2\)"),
        ("body_mass", np.ones((2, 1)), {"entities": ["hand"]}, "no body labelled 'hand'"),
        ("tendon_guide_mu", np.ones((2, 1)), {"entities": ["x"]}, "have no labels"),
        ("gravity", np.ones((2, 1, 3)), {}, r"\[worlds, 3\]"),
    ],
)
def test_set_per_world_rejects_bad_input_before_writing(name, values, kw, match):
    """A bad name, shape, value or selection raises a clear error and leaves every model array as it was."""
    model = _replicated(2).finalize("cpu")
    before = {k: v.numpy().copy() for k, v in vars(model).items() if isinstance(v, wp.array)}
    with pytest.raises((ValueError, TypeError), match=match):
        rl.set_per_world(model, name, values, **kw)
    for k, v in before.items():
        np.testing.assert_array_equal(getattr(model, k).numpy(), v, err_msg=k)


def test_set_per_world_rejects_static_body_mass():
    """A static body keeps mass 0: the contact pairs were chosen for its motion type."""
    b = _template()
    b.add_body(xform=(0, 2, 0, 0, 0, 0, 1), mass=0.0, label="post")
    scene = nt.ModelBuilder()
    scene.replicate(b, 2)
    with pytest.raises(ValueError, match="'world_0/post' .* is static or kinematic"):
        rl.set_per_world(scene.finalize("cpu"), "body_mass", np.ones((2, 1)), entities=["post"])


# ----------------------------------------------------------------------------------------------
# Masks, torch


def test_copy_world_mask_sources():
    """None selects every world; NumPy, Warp and torch masks of bool/int/float select their nonzeros."""
    out = wp.zeros(4, dtype=wp.int32, device="cpu")
    np.testing.assert_array_equal(rl.copy_world_mask(None, out).numpy(), [1, 1, 1, 1])
    np.testing.assert_array_equal(rl.copy_world_mask([True, False, False, True], out).numpy(), [1, 0, 0, 1])
    src = wp.array([0.0, 2.0, 0.0, 0.0], dtype=float, device="cpu")
    np.testing.assert_array_equal(rl.copy_world_mask(src, out).numpy(), [0, 1, 0, 0])
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        rl.copy_world_mask(np.ones(3), out)
    torch = pytest.importorskip("torch")
    np.testing.assert_array_equal(rl.copy_world_mask(torch.tensor([0, 0, 1, 1]), out).numpy(), [0, 0, 1, 1])


def test_torch_views_share_memory():
    """to_torch/from_torch are zero-copy: same address, writes seen through both objects."""
    torch = pytest.importorskip("torch")
    sim = Sim(_replicated(2), "cpu", contacts=False)
    obs = rl.Observer(sim.model, rl.ObservationSpec().add("body_position"), sim.solver)
    t = rl.to_torch(obs.obs)
    assert t.data_ptr() == obs.obs.ptr and tuple(t.shape) == (2, 6)
    obs.compute(sim.state_0)
    np.testing.assert_array_equal(t.numpy(), obs.obs.numpy())
    t[0, 0] = 123.0
    assert obs.obs.numpy()[0, 0] == 123.0
    x = torch.zeros((3, 3), dtype=torch.float32)
    a = rl.from_torch(x, dtype=wp.vec3)
    assert a.ptr == x.data_ptr() and a.shape == (3,)
    a.fill_(wp.vec3(1.0, 2.0, 3.0))
    assert float(x[2, 2]) == 3.0
    with pytest.raises(TypeError, match="expected a wp.array"):
        rl.to_torch(np.zeros(3))


# ----------------------------------------------------------------------------------------------
# Environments


def _snapshot(env) -> dict[str, np.ndarray]:
    arrays = {f"state.{k}": v for k, v in vars(env.state_0).items() if isinstance(v, wp.array)}
    arrays |= {f"control.{k}": v for k, v in vars(env.control).items() if isinstance(v, wp.array)}
    arrays |= {"obs": env.observer.obs, "inputs": env.observer.inputs, "episode_step": env.episode_step}
    return {k: v.numpy().copy() for k, v in arrays.items()}


# Entity domain of each state/control array (rows follow the model's flat entity order).
_DOMAIN = {
    "body_q": "body",
    "body_qd": "body",
    "body_f": "body",
    "tendon_segment_rest_length": "tendon_segment",
    "tendon_segment_rest_residual": "tendon_segment",
    "tendon_segment_attachment_local_l": "tendon_segment",
    "tendon_segment_attachment_local_r": "tendon_segment",
    "tendon_segment_multiplier": "tendon_segment",
    "tendon_guide_active": "tendon_guide",
    "tendon_guide_winch_paid": "tendon_guide",
    "tendon_guide_winch_length": "tendon_guide",
    "tendon_seeded": "tendon",
    "joint_multiplier": "joint",
    "joint_limit_multiplier": "joint_dof",
    "transmission_activation": "transmission",
    "transmission_reference_length": "transmission",
    "transmission_row_impulse": "transmission",
    "transmission_term_coordinate": None,
    "joint_target_pos": "joint_dof",
    "joint_target_vel": "joint_dof",
    "joint_f": "joint_dof",
}


def _rows_of_worlds(env, key: str, worlds) -> np.ndarray | None:
    name = key.split(".", 1)[1] if "." in key else key
    if name.startswith("transmission_") and name not in _DOMAIN:
        return rl.world_entities(env.model, "transmission")[worlds].reshape(-1)
    domain = _DOMAIN.get(name, "world")
    if domain is None:
        # Fixed-tendon terms: the same count per world, in world order.
        per = env.model.transmission_term_count // env.world_count
        return (np.asarray(worlds)[:, None] * per + np.arange(per)).reshape(-1)
    if domain == "world":
        return np.asarray(worlds)
    return rl.world_entities(env.model, domain)[worlds].reshape(-1)


ENVS = {"finger": env_finger.Env, "payload": env_payload.Env, "payload_force": env_payload.ForceEnv}


def _assert_masked_reset(env, before: dict, after: dict, mask: np.ndarray):
    """Unselected worlds bitwise unchanged everywhere; selected worlds at the model's initial state."""
    keep = np.nonzero(~mask)[0]
    reset = np.nonzero(mask)[0]
    for key, old in before.items():
        if old.shape[0] == 0:
            continue
        rows = _rows_of_worlds(env, key, keep)
        np.testing.assert_array_equal(after[key][rows], old[rows], err_msg=f"{key} changed in an unselected world")
    bodies = rl.world_entities(env.model, "body")[reset].reshape(-1)
    np.testing.assert_array_equal(after["state.body_q"][bodies], env.model.body_q.numpy()[bodies])
    np.testing.assert_array_equal(after["episode_step"][reset], 0)
    assert np.all(after["episode_step"][keep] > 0)


@pytest.mark.parametrize("env_name", sorted(ENVS))
@pytest.mark.parametrize("use_graph", [False, True], ids=["direct", "graph"])
def test_env_reset_mask_resets_exactly_the_masked_worlds(device, env_name, use_graph):
    """reset(mask) restores the selected worlds (bodies, tendon history, winch, activations, goals)
    and leaves every array of the other worlds bitwise unchanged; also when the reset is a replayed
    graph (Warp 1.19 captures on the CPU too)."""
    env = ENVS[env_name](8, device, backend="numpy", use_graph=use_graph, auto_reset=False)
    rng = np.random.default_rng(3)
    env.reset()
    for _ in range(6):
        env.step(rng.uniform(-1, 1, (8, env.action_dim)).astype(np.float32))
    mask = np.zeros(8, bool)
    mask[[1, 4, 5]] = True
    before = _snapshot(env)
    env.reset(mask)
    after = _snapshot(env)
    _assert_masked_reset(env, before, after, mask)
    if env_name.startswith("payload"):
        guides = rl.world_entities(env.model, "tendon_guide")[mask].reshape(-1)
        np.testing.assert_array_equal(after["state.tendon_guide_winch_paid"][guides], 0.0)
        np.testing.assert_array_equal(after["control.tendon_guide_winch_length"][guides], 0.0)
        segs = rl.world_entities(env.model, "tendon_segment")[mask].reshape(-1)
        np.testing.assert_array_equal(
            after["state.tendon_segment_rest_length"][segs], env.model.tendon_segment_initial_rest_length.numpy()[segs]
        )
    else:
        tx = rl.world_entities(env.model, "transmission")[mask].reshape(-1)
        np.testing.assert_array_equal(after["state.transmission_activation"][tx], 0.0)
        np.testing.assert_array_equal(after["obs"][mask, :4], 0.0)  # joints straight and at rest


def test_env_reset_mask_in_graph(device):
    """The same masked reset as a graph replay (a CUDA graph on cuda:0, where the envs capture by
    default; Warp's CPU capture on cpu)."""
    env = env_payload.Env(8, device, backend="numpy", auto_reset=False, use_graph=True)
    assert env.use_graph
    env.reset()
    for _ in range(6):
        env.step(np.full((8, 1), -0.5, np.float32))
    mask = np.arange(8) % 3 == 0
    before = _snapshot(env)
    env.reset(mask)
    _assert_masked_reset(env, before, _snapshot(env), mask)


def test_env_graph_matches_direct_and_actions_act(device):
    """A captured env step replays to bitwise the trajectory of direct launches with the same actions
    written between replays (actions reach Control inside the graph); flexor commands bend the finger
    down and the extensor brings it back up."""
    envs = [env_finger.Env(4, device, backend="numpy", use_graph=g) for g in (False, True)]
    flex = np.tile(np.array([1.0, 1.0, -1.0], np.float32), (4, 1))
    for env in envs:
        env.reset()
    for i in range(40):
        a = flex if i < 20 else -flex
        outs = [env.step(a) for env in envs]
        np.testing.assert_array_equal(outs[0][0], outs[1][0])
        np.testing.assert_array_equal(outs[0][1], outs[1][1])
        if i == 19:
            q_flexed = outs[0][0][:, :2].copy()
    q_extended = outs[0][0][:, :2]
    assert np.all(q_flexed > 0.5), q_flexed
    assert np.all(q_extended[:, 0] < 0.0), q_extended
    # Tension commands reached the tendons: the extensor pulls with T_MAX at the end.
    np.testing.assert_allclose(envs[1].solver.transmission_actuation_force.numpy()[2::3], -env_finger.T_MAX, rtol=1e-3)


@pytest.mark.parametrize("env_name", sorted(ENVS))
def test_env_runs_100_steps_64_worlds(env_name):
    """Each example environment runs 100 random steps for 64 worlds on the CPU with finite outputs."""
    env = ENVS[env_name](64, "cpu")
    rng = np.random.default_rng(0)
    obs = env.reset()
    assert tuple(obs.shape) == (64, env.obs_dim)
    for _ in range(100):
        obs, reward, done = env.step(env.random_actions(rng))
    for x in (obs, reward):
        assert np.all(np.isfinite(np.asarray(x)))
    assert tuple(reward.shape) == (64,) and tuple(done.shape) == (64,)
    if env.backend == "torch":
        torch = pytest.importorskip("torch")
        assert obs.dtype == torch.float32 and done.dtype == torch.bool
        assert obs.data_ptr() == env.observer.obs.ptr  # zero-copy view of the env's buffer


def test_env_auto_reset_at_episode_end():
    """With auto_reset, the step that ends an episode reports done and returns the new episode's first
    observation; the step counters restart."""

    class Short(env_finger.Env):
        episode_length = 5

    env = Short(4, "cpu", backend="numpy")
    env.reset()
    goals0 = env.goal.numpy().copy()
    a = np.ones((4, 3), np.float32)
    for i in range(5):
        obs, _, done = env.step(a)
        assert done.all() == (i == 4)
    np.testing.assert_array_equal(obs[:, :4], 0.0)  # joints straight and at rest again
    np.testing.assert_array_equal(env.episode_step.numpy(), 0)
    assert not np.array_equal(env.goal.numpy(), goals0)  # a new goal per episode


def test_force_env_actions_pull_with_the_commanded_tension(device):
    """``env_payload.ForceEnv``: action a sets the drum tension to m g (1 + 0.3 a). Over 0.5 s from
    rest, a = 1 lifts the payload by (0.3 g) t^2 / 2 = 0.368 m and a = -1 lowers it as much (5 %:
    the payload swings slightly under the roller, and its drop is measured in whole frames); the
    tension observation reads 1 + 0.3 a (1e-3)."""

    class Still(env_payload.ForceEnv):
        push = 0.0

    env = Still(4, device, backend="numpy", auto_reset=False)
    env.reset()
    z0 = env.payload_heights()
    actions = np.array([[1.0], [1.0], [-1.0], [-1.0]], np.float32)
    for _ in range(15):  # 15 frames of 1/30 s
        obs, _, _ = env.step(actions)
    t = 15 * env.frame_dt
    expected = 0.5 * 0.3 * 9.81 * t * t
    np.testing.assert_allclose(env.payload_heights() - z0, expected * actions[:, 0], rtol=0.05)
    np.testing.assert_allclose(obs[:, 7], 1.0 + 0.3 * actions[:, 0], rtol=1e-3)


def test_env_rejects_bad_actions_and_arguments():
    """Wrong action shapes and unknown options are refused with the expected shape or choices."""
    env = env_finger.Env(2, "cpu", backend="numpy")
    with pytest.raises(ValueError, match=r"actions must have shape \(2, 3\)"):
        env.step(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="xpbd, vbd"):
        env_finger.Env(2, "cpu", solver="mujoco")
    with pytest.raises(ValueError, match="world_count"):
        env_finger.Env(0, "cpu")


def test_payload_winch_lifts_by_commanded_length(device):
    """Reeling the winch in 0.3 m (action -0.6 = -0.3 m/s for 1 s) lifts the payload 0.3 m within
    1 % (the cable stretches 1e-4 m under 1 kg at 1e-5 m/N; the roller is frictionless)."""

    class Still(env_payload.Env):
        push = 0.0

    env = Still(4, device, backend="numpy", auto_reset=False)
    env.reset()
    z0 = env.payload_heights()
    for _ in range(30):
        env.step(np.full((4, 1), -0.6, np.float32))
    for _ in range(60):
        obs, _, _ = env.step(np.zeros((4, 1), np.float32))
    paid = obs[:, 6]
    np.testing.assert_allclose(paid, -0.3, rtol=1e-5)
    np.testing.assert_allclose(env.payload_heights() - z0, 0.3, rtol=0.01)
    np.testing.assert_allclose(obs[:, 7], 1.0, rtol=0.02)  # tension / weight once at rest


def test_rollout_script_prints_table(capsys):
    """The random-policy rollout prints one env-steps/s row per run."""
    from newton_tendon.examples import rollout_random

    rows = rollout_random.main(["--env", "payload", "--worlds", "4", "--steps", "3"])
    assert len(rows) == 1 and rows[0]["env_steps_per_s"] > 0
    out = capsys.readouterr().out
    assert "env-steps/s" in out and "payload" in out
