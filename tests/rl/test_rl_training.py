"""Policies learn on the example tasks with rsl-rl's PPO, in one process and in two (torchrun, gloo),
and a trained policy replays into a USD recording.

Short versions of ``python -m newton_tendon.examples.rl_train`` (the full runs, 100 iterations on 256
worlds, reach the tasks' thresholds in under a minute each on 2 cores; docs/rl.md has their curves).
Here the finger trains 60 iterations on 128 worlds (184,320 env steps, about 13 s) and the payload
30 (92,160 env steps, about 7 s); each must beat the random policy's return on the same evaluation
episodes by ``MARGIN``. The finger's learning curve turns between iterations 20 and 40 (since XPBD's
joints are solved Gauss-Seidel and converge, about 10 iterations later than before), and a run that
stops there is anywhere from -18 to -53 (seeds 0-4 at 20 iterations): past it the seeds agree.
Measured with seeds 0, 1, 2: finger random -55.9/-55.5/-55.4, trained -11.45/-9.06/-9.63 (gains
44-46); payload random -42.3/-41.4/-41.6, trained -5.57/-5.93/-5.53 (gains about 36). The tests run
seed 0.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("rsl_rl")
pytest.importorskip("matplotlib")

from newton_tendon.examples import rl_train  # noqa: E402

MARGIN = 15.0
"""Required gain over the random policy's mean episode return (the smallest gain measured is 36)."""
FINGER = dict(worlds=128, iterations=60, seed=0)
PAYLOAD = dict(worlds=128, iterations=30, seed=0)


@pytest.fixture(scope="module")
def finger_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("finger")
    return rl_train.train("finger", out=str(out), verbose=False, **FINGER), out


def test_finger_learns(finger_run):
    """Tendon-driven finger reaching random goals (3 pull-only tendons through activation-filtered
    drives): PPO beats the random policy by MARGIN after 184,320 env steps."""
    r, out = finger_run
    assert r["trained_return"] >= r["random_return"] + MARGIN, r
    assert -60.0 < r["random_return"] < -50.0  # the baseline measured above: the task did not change
    assert r["env_steps"] == 60 * 24 * 128 and r["processes"] == 1
    curve = json.loads((out / "finger_curve.json").read_text())["curve"]
    finished = [ret for _, ret in curve if ret is not None]
    assert len(curve) == 60 and len(finished) >= 3 and finished[-1] > finished[0]  # the curve rises
    assert (out / "finger_curve.png").stat().st_size > 10_000
    assert (out / "finger_policy.pt").exists()


def test_payload_learns(tmp_path):
    """Winch, roller with capstan friction (mu 0.1) and a swinging payload brought to a random
    height: PPO beats the random policy by MARGIN after 61,440 env steps."""
    r = rl_train.train("payload", out=str(tmp_path), plot=False, verbose=False, **PAYLOAD)
    assert r["trained_return"] >= r["random_return"] + MARGIN, r
    assert -45.0 < r["random_return"] < -38.0


def test_replay_writes_usd(finger_run, tmp_path):
    """The saved policy replays one episode (120 frames after the initial one) into a USD stage whose
    bodies move, with returns like the training run's evaluation."""
    from pxr import Usd, UsdGeom

    r, out = finger_run
    usd = tmp_path / "finger.usda"
    rep = rl_train.main(["--task", "finger", "--replay", str(out / "finger_policy.pt"), "--usd", str(usd)])
    assert rep["frames"] == 121 and np.all(np.isfinite(rep["returns"]))
    assert np.mean(rep["returns"]) > r["random_return"] + MARGIN
    stage = Usd.Stage.Open(str(usd))
    moving = [
        p
        for p in stage.Traverse()
        if p.IsA(UsdGeom.Xformable)
        and len(UsdGeom.Xformable(p).GetOrderedXformOps()) > 0
        and any(len(op.GetTimeSamples()) > 100 for op in UsdGeom.Xformable(p).GetOrderedXformOps())
    ]
    assert len(moving) >= 2 * 4  # both links of every world are animated
    with pytest.raises(ValueError, match="holds a 'finger' policy"):
        rl_train.replay("payload", str(out / "finger_policy.pt"), str(tmp_path / "x.usda"))


def test_torchrun_two_processes_match_one(finger_run, tmp_path):
    """The same training under torchrun with 2 processes (gloo on the CPU), 64 worlds each:

    - the random-policy evaluation equals the single process's (relative 1e-9): each process holds
      its shard of global worlds with their goals and draws their actions, so only the float64
      summation order of the mean differs;
    - both processes end with identical policy parameters (gradients averaged by rsl-rl over
      torch.distributed, parameters broadcast from rank 0);
    - the trained return is not worse than the single process's by more than 3.0 (distributing
      must not cost learning). The two runs draw different exploration noise for rank 1's worlds
      and each rank shuffles its own half into minibatches, so they are not the same run: three single-process seeds give -11.45, -9.06 and -9.63 (standard deviation 1.0), the
      two-process run -7.09.
    """
    single, _ = finger_run
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    cmd = [
        sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
        "-m", "newton_tendon.examples.rl_train", "--task", "finger", "--worlds", "128", "--iterations", "60",
        "--seed", "0", "--out", str(tmp_path), "--no-plot",
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    r = json.loads((tmp_path / "finger_curve.json").read_text())
    assert r["processes"] == 2 and r["worlds"] == 128 and r["ranks_in_sync"] is True
    assert r["random_return"] == pytest.approx(single["random_return"], rel=1e-9)
    assert r["trained_return"] > single["trained_return"] - 3.0, (r["trained_return"], single["trained_return"])
    assert r["trained_return"] >= r["random_return"] + MARGIN


def test_training_is_reproducible():
    """The same seed gives the same run to the bit: the env's episodes (reset(seed)), the policy's
    initialization and exploration noise (torch.manual_seed), and the physics (a fixed kernel
    sequence) are all seeded. A different seed gives another run."""
    runs = [rl_train.train("finger", worlds=16, iterations=6, seed=s, out=None, verbose=False) for s in (3, 3, 4)]
    # Iterations in which no episode finished hold NaN; NaN equals NaN here.
    np.testing.assert_array_equal(np.array(runs[0]["curve"], float), np.array(runs[1]["curve"], float))
    assert runs[0]["trained_return"] == runs[1]["trained_return"]
    assert runs[0]["random_return"] == runs[1]["random_return"]
    assert runs[2]["trained_return"] != runs[0]["trained_return"]
