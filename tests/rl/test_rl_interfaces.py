"""The RL interfaces: gymnasium's vector API over a VecEnv (spaces, reset/step signatures, the three
autoreset modes, final observations, per-world episode lengths, seeding, masked resets, zero-copy
tensors), process shards (``world_offset``), and the rsl-rl adapter.

All checks are exact (bitwise) unless stated: worlds never interact and each env step is the same
sequence of kernels, so two runs given the same seed and actions agree to the bit.
"""

from __future__ import annotations

import numpy as np
import pytest
import warp as wp

from newton_tendon import rl
from newton_tendon.examples import env_finger, env_payload

torch = pytest.importorskip("torch")
gymnasium = pytest.importorskip("gymnasium")

wp.config.quiet = True


def _actions(n, dim, i):
    """Deterministic, varied actions for step i."""
    g = torch.Generator().manual_seed(1000 + i)
    return torch.rand((n, dim), generator=g) * 2.0 - 1.0


def test_gymnasium_spaces_and_signatures():
    """A VecEnv is a gymnasium.vector.VectorEnv: batched and single spaces, reset -> (obs, info),
    step -> (obs, reward, terminated, truncated, info), torch views of the env's buffers (no copy)."""
    from gymnasium.vector import AutoresetMode

    env = env_finger.Env(5, "cpu")
    g = env.to_gymnasium()
    assert isinstance(g, gymnasium.vector.VectorEnv)
    assert g.num_envs == 5 and g.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert g.single_observation_space.shape == (env.obs_dim,) and g.observation_space.shape == (5, env.obs_dim)
    assert g.single_action_space.shape == (3,) and g.action_space.shape == (5, 3)
    assert g.single_action_space.dtype == np.float32 and float(g.single_action_space.low.min()) == -1.0
    obs, info = g.reset(seed=3)
    assert isinstance(info, dict) and tuple(obs.shape) == (5, env.obs_dim)
    out = g.step(torch.from_numpy(g.action_space.sample()))
    assert len(out) == 5
    obs, reward, terminated, truncated, info = out
    assert obs.dtype == torch.float32 and reward.shape == (5,)
    assert terminated.dtype == torch.bool and truncated.dtype == torch.bool
    assert obs.data_ptr() == env.observer.obs.ptr and reward.data_ptr() == env.reward.ptr  # zero-copy
    assert terminated.data_ptr() == env.terminated.ptr and truncated.data_ptr() == env.truncated.ptr
    assert {"final_obs", "_final_obs", "episode_step"} <= set(info)
    assert g.observation_space.contains(obs.numpy())


def test_same_step_autoreset_returns_final_obs():
    """SAME_STEP (the default): the step that ends an episode returns truncated, the first observation
    of the next episode, and in info['final_obs'] the observation a run without autoreset sees at that
    step (bitwise)."""
    a = env_finger.Env(4, "cpu", episode_length=3).to_gymnasium()
    b = env_finger.Env(4, "cpu", episode_length=3, autoreset_mode="disabled").to_gymnasium()
    a.reset(seed=7)
    b.reset(seed=7)
    for i in range(3):
        act = _actions(4, 3, i)
        oa, ra, ta, tra, ia = a.step(act)
        ob, rb, tb, trb, ib = b.step(act)
        assert torch.equal(ra, rb)
    assert tra.all() and not ta.any() and ia["_final_obs"].all()
    assert torch.equal(ia["final_obs"], ob)
    fresh, _ = env_finger.Env(4, "cpu").to_gymnasium().reset(seed=7)
    # The new episode: joints straight and at rest, no tension yet, a new goal.
    assert torch.equal(oa[:, :4], torch.zeros(4, 4)) and torch.equal(oa[:, 7:10], torch.zeros(4, 3))
    assert not torch.equal(oa[:, 10:], fresh[:, 10:])
    assert torch.equal(a.env.output("episode_step"), torch.zeros(4, dtype=torch.int32))


def test_next_step_autoreset():
    """NEXT_STEP: the step that ends an episode returns its last observation; the next step ignores
    the action, returns reward 0, no flags and the new episode's first observation, which equals what
    SAME_STEP returned one step earlier (the same seed draws the same next goal)."""
    from gymnasium.vector import AutoresetMode

    same = env_finger.Env(3, "cpu", episode_length=2).to_gymnasium()
    nxt = env_finger.Env(3, "cpu", episode_length=2, autoreset_mode="next_step").to_gymnasium()
    assert nxt.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    same.reset(seed=1)
    nxt.reset(seed=1)
    for i in range(2):
        os_, _, _, trs, info = same.step(_actions(3, 3, i))
        on, _, _, trn, _ = nxt.step(_actions(3, 3, i))
    assert trs.all() and trn.all()
    assert torch.equal(on, info["final_obs"])
    first_of_next = os_.clone()
    on, rn, tn, trn, _ = nxt.step(_actions(3, 3, 99))
    assert torch.equal(on, first_of_next)
    assert torch.equal(rn, torch.zeros(3)) and not tn.any() and not trn.any()
    # Then the episode runs its full length again.
    _, _, _, trn, _ = nxt.step(_actions(3, 3, 100))
    assert not trn.any()
    _, _, _, trn, _ = nxt.step(_actions(3, 3, 101))
    assert trn.all()


def test_per_world_episode_lengths_and_disabled_autoreset():
    """Each world ends at its own length; with DISABLED autoreset a finished world keeps reporting
    truncated until reset(options={'reset_mask': ...}) restarts just it."""
    lengths = [1, 2, 3, 5]
    g = env_payload.Env(4, "cpu", episode_length=lengths, autoreset_mode="disabled").to_gymnasium()
    g.reset(seed=0)
    first_true = [None] * 4
    for i in range(5):
        _, _, _, tr, _ = g.step(torch.zeros(4, 1))
        for w in range(4):
            if tr[w] and first_true[w] is None:
                first_true[w] = i + 1
    assert first_true == lengths
    mask = np.array([True, False, True, False])
    before = g.env.output("episode_step").clone()
    obs, _ = g.reset(options={"reset_mask": mask})
    steps = g.env.output("episode_step")
    assert steps.tolist() == [0, int(before[1]), 0, int(before[3])]
    with pytest.raises(ValueError, match="unknown options"):
        g.reset(options={"mask": mask})


def test_set_episode_lengths_validates():
    env = env_finger.Env(3, "cpu", backend="numpy")
    env.set_episode_lengths([4, 5, 6])
    np.testing.assert_array_equal(env.max_episode_steps.numpy(), [4, 5, 6])
    with pytest.raises(ValueError, match=r"one int or 3 ints"):
        env.set_episode_lengths([1, 2])
    with pytest.raises(ValueError, match=r"\[1, 2\*\*31 - 1\]"):
        env.set_episode_lengths([1, 0, 2])
    with pytest.raises(TypeError, match="must be ints"):
        env.set_episode_lengths([1.5, 2.0, 3.0])
    np.testing.assert_array_equal(env.max_episode_steps.numpy(), [4, 5, 6])  # unchanged by the refusals
    with pytest.raises(ValueError, match="autoreset_mode must be one of same_step, next_step, disabled"):
        env_finger.Env(2, "cpu", autoreset_mode="sometimes")
    with pytest.raises(ValueError, match=r"world_offset must be an int in \[0, 2\*\*31 - 1\]"):
        env_finger.Env(2, "cpu", world_offset=-1)
    for bad in (-3, 2**31, 1.5, True):
        with pytest.raises(ValueError, match=r"seed must be an int in \[0, 2\*\*31 - 1\]"):
            env.reset(seed=bad)


@pytest.mark.parametrize("solver", ["xpbd", "vbd"])
def test_seed_replays_episodes(solver):
    """reset(seed=s) replays the same episodes bitwise, however the env was used before (the goals,
    the pushes and the first observation, whose tendon tensions the reset zeroes); another seed draws
    other goals."""
    g = env_payload.HoistEnv(4, "cpu", solver=solver).to_gymnasium()

    def run(seed):
        obs, _ = g.reset(seed=seed)
        out = [obs.clone()]
        for i in range(10):
            out.append(g.step(_actions(4, 1, i))[0].clone())
        return torch.stack(out)

    first = run(5)
    for i in range(7):
        g.step(_actions(4, 1, 50 + i))
    assert torch.equal(run(5), first)
    other = run(6)
    assert not torch.equal(other[0, :, -1], first[0, :, -1])  # another target height


def test_world_offset_shards_match_one_process():
    """Two envs holding worlds [0, 3) and [3, 6) (world_offset 0 and 3) step bitwise like the six
    worlds of one env given the same actions: a process shard draws the goals of the same global
    worlds. Six worlds and shards of three: an odd count per shard."""
    full = env_finger.Env(6, "cpu").to_gymnasium()
    shards = [env_finger.Env(3, "cpu", world_offset=o).to_gymnasium() for o in (0, 3)]
    obs_full, _ = full.reset(seed=2)
    obs_shards = [s.reset(seed=2)[0] for s in shards]
    assert torch.equal(torch.cat(obs_shards), obs_full)
    for i in range(8):
        act = _actions(6, 3, i)
        of, rf, _, _, _ = full.step(act)
        parts = [s.step(act[3 * k : 3 * k + 3]) for k, s in enumerate(shards)]
        assert torch.equal(torch.cat([p[0] for p in parts]), of)
        assert torch.equal(torch.cat([p[1] for p in parts]), rf)


def test_reset_zeroes_transmission_force_diagnostics():
    """solver.reset reports no tendon force in the reset worlds (the first observation of an episode
    must not carry the last episode's tension) and leaves the other worlds' diagnostics alone."""
    env = env_finger.Env(4, "cpu", backend="numpy", autoreset_mode="disabled")
    env.reset()
    for _ in range(5):
        env.step(np.ones((4, 3), np.float32))
    tension = env.solver.transmission_tension.numpy().copy()
    assert np.all(tension != 0.0)
    mask = np.array([True, False, False, True])
    env.reset(mask)
    after = env.solver.transmission_tension.numpy().reshape(4, 3)
    np.testing.assert_array_equal(after[mask], 0.0)
    np.testing.assert_array_equal(after[~mask], tension.reshape(4, 3)[~mask])
    for name in ("force", "actuation_force", "limit_force", "friction_force"):
        np.testing.assert_array_equal(getattr(env.solver, "transmission_" + name).numpy().reshape(4, 3)[mask], 0.0)


def test_gymnasium_wrapper_refuses_other_objects():
    from newton_tendon.rl.gymnasium_env import GymnasiumVectorEnv

    with pytest.raises(TypeError, match="must be a newton_tendon.rl.VecEnv"):
        GymnasiumVectorEnv(object())


def test_numpy_backend_gymnasium():
    """With the NumPy backend the same API returns host copies."""
    g = env_payload.Env(2, "cpu", backend="numpy").to_gymnasium()
    obs, _ = g.reset(seed=0)
    obs, reward, terminated, truncated, info = g.step(np.zeros((2, 1), np.float32))
    assert isinstance(obs, np.ndarray) and terminated.dtype == bool and info["final_obs"].shape == (2, obs.shape[1])


class TestRslRlAdapter:
    rsl = pytest.importorskip("newton_tendon.rl.rsl_rl_env", reason="rsl-rl-lib (the rl extra) is not installed")

    def test_interface(self):
        """rsl-rl's VecEnv: sizes, TensorDict observations cloned out of the env buffer (rsl-rl keeps
        them past the next step), time_outs = truncated, episode_length_buf writes the env's clock,
        and the finished episodes' returns summed on the device."""
        from tensordict import TensorDict

        env = env_finger.Env(4, "cpu", episode_length=3)
        r = self.rsl.RslRlVecEnv(env, stats_every=3)
        assert (r.num_envs, r.num_actions, r.max_episode_length) == (4, 3, 3) and r.device == "cpu"
        obs = r.get_observations()
        assert isinstance(obs, TensorDict) and obs["policy"].data_ptr() != env.observer.obs.ptr
        total = torch.zeros(4, dtype=torch.float64)
        for i in range(3):
            obs, rew, done, extras = r.step(_actions(4, 3, i))
            total += rew.double()
        assert done.all() and torch.equal(extras["time_outs"], done)
        ret_sum, count = r.history[0].tolist()
        assert count == 4 and ret_sum == pytest.approx(float(total.sum()), rel=1e-6)
        r.episode_length_buf = torch.tensor([2, 0, 1, 2])
        assert env.output("episode_step").tolist() == [2, 0, 1, 2]
        _, _, done, _ = r.step(_actions(4, 3, 9))
        assert done.tolist() == [True, False, False, True]

    def test_refusals(self):
        with pytest.raises(ValueError, match="torch backend"):
            self.rsl.RslRlVecEnv(env_finger.Env(2, "cpu", backend="numpy"))
        with pytest.raises(ValueError, match="same_step"):
            self.rsl.RslRlVecEnv(env_finger.Env(2, "cpu", autoreset_mode="next_step"))
        with pytest.raises(TypeError, match="must be a newton_tendon.rl.VecEnv"):
            self.rsl.RslRlVecEnv(object())


def test_episode_rng_exported():
    assert rl.episode_rng is not None and "same_step" in rl.AUTORESET_MODES
