"""The transmission-tendon examples (``newton_tendon/examples/transmission_*.py``) run and reach their physical results.

Each example's own ``test_final`` holds the physics check (spec numbers or closed forms); it needs
the example's full default run (1 to 3 s of simulated time, 0.7 to 2.5 s of CPU time each), so the
tests run every example at its default length once. The CLI is smoke-tested with a few frames.
Transmission tendons run on SolverXPBD only, so unlike ``tests/tools/test_examples.py`` there is no
solver parameter.
"""

import importlib
import json
import math
import re

import numpy as np
import pytest

# (module, default frames): the frames each main() runs by default, which test_final needs.
EXAMPLES = [
    ("transmission_suspended_load", 100),  # 2 s = the spec's 2000 steps of 1 ms
    ("transmission_tension_command", 70),  # 1.4 s: command, release, both loads back on the upper limit
    ("transmission_length_servo", 100),  # 2 s: two 1 s servo phases
    ("transmission_cylinder_pulley", 50),  # 1 s of the 2:1 hoist
    ("transmission_fixed_joints", 75),  # 1.5 s: 0.5 s feedforward, 1 s servo
    ("transmission_coupled_cables", 150),  # 3 s: critically damped settling to the equilibrium
]
NAMES = [e[0] for e in EXAMPLES]


def _module(name):
    return importlib.import_module(f"newton_tendon.examples.{name}")


def _assert_finite(example):
    assert np.all(np.isfinite(example.state_0.body_q.numpy()))
    assert np.all(np.isfinite(example.state_0.body_qd.numpy()))
    for key in ("length", "force", "actuation_force", "limit_force"):
        assert np.all(np.isfinite(example.report(key)))


@pytest.mark.parametrize("name, frames", EXAMPLES, ids=NAMES)
def test_example(name, frames, device, solver):
    """Each example runs its default length on both solvers and passes its own physics check (with
    the example's per-solver tolerances); its table is finite."""
    module = _module(name)
    example = module.Example(device=device, solver=solver)
    for _ in range(frames):
        example.step()
    assert example.sim_time == pytest.approx(example.min_time)
    _assert_finite(example)
    example.test_final()
    rows = example.table()
    assert rows and all(math.isfinite(r[1]) for r in rows)


@pytest.mark.parametrize("name", NAMES)
def test_example_cli(device, name, tmp_path, capsys):
    """``main`` with a few frames prints the header and a finite table, skips ``test_final`` (too short)
    and writes ``summary.json`` and ``history.npz`` into ``--out``."""
    out = tmp_path / name
    _module(name).main(["--frames", "3", "--device", device, "--out", str(out)])
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert lines[0].startswith(f"{name}: 3 frames, 0.06 s, 1 world(s) on {device}, solver xpbd")
    table = "\n".join(line for line in lines if not line.lstrip().startswith("outputs in"))
    numbers = [float(x) for x in re.findall(r"[-+]?(?:\d+\.\d*|nan|inf)(?:e[-+]?\d+)?", table)]
    assert numbers and all(math.isfinite(x) for x in numbers), text
    assert "test_final skipped" in text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["example"] == name and summary["frames"] == 3 and summary["finite"]
    assert summary["test_final"].startswith("skipped")
    assert summary["rows"] and all(math.isfinite(r["value"]) for r in summary["rows"])
    history = np.load(out / "history.npz")
    np.testing.assert_allclose(history["t"], [0.02, 0.04, 0.06])


def test_example_cli_full_run_writes_passed(device, tmp_path, capsys):
    """A full default run through ``main`` (the shortest example) records ``test_final: passed``."""
    out = tmp_path / "run"
    _module("transmission_cylinder_pulley").main(["--device", device, "--out", str(out)])
    assert "test_final passed" in capsys.readouterr().out
    assert json.loads((out / "summary.json").read_text())["test_final"] == "passed"


def test_example_cli_help(capsys):
    """``--help`` documents the flags; bad counts are refused."""
    module = _module("transmission_suspended_load")
    with pytest.raises(SystemExit) as exit_help:
        module.main(["--help"])
    assert exit_help.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    for flag in ("--frames", "--device", "--worlds", "--out"):
        assert flag in help_text
    with pytest.raises(SystemExit) as exit_bad:
        module.main(["--frames", "0"])
    assert exit_bad.value.code == 2


def test_example_worlds(device):
    """Replicated worlds (world-fixed sites and wraps moved to each world's place) reach the result
    of one world; the checks run over every world."""
    from newton_tendon.examples import transmission_cylinder_pulley as ex

    example = ex.Example(device=device, world_count=3)
    assert example.model.transmission_count == 3
    for _ in range(50):
        example.step()
    _assert_finite(example)
    example.test_final()


def test_test_final_needs_the_full_run(device):
    """A run shorter than the check needs is refused with a message, not passed or failed silently."""
    from newton_tendon.examples import transmission_tension_command as ex

    example = ex.Example(device=device)
    for _ in range(5):
        example.step()
    with pytest.raises(AssertionError, match="run at least"):
        example.test_final()


def test_test_final_detects_wrong_physics(device):
    """The hoist's check fails when the counterweight is heavier than the scene says: the measured
    accelerations no longer match g (2 m_B - m_A)/(m_A + 4 m_B)."""
    import newton_tendon as nt
    from newton_tendon.examples import transmission_cylinder_pulley as ex

    example = ex.Example(device=device)
    mass = example.model.body_mass.numpy()
    mass[example.counter] *= 1.2
    example.model.body_mass.assign(mass)
    example.solver.notify_model_changed(nt.ModelFlags.BODY_PROPERTIES)
    for _ in range(50):
        example.step()
    with pytest.raises(AssertionError):
        example.test_final()
