"""The ``newton-tendon`` command: every subcommand runs with tiny sizes and exits 0; bad arguments
exit non-zero with a message that names the argument and the rule."""

from __future__ import annotations

import io
import json
import sys

import pytest

import newton_tendon as nt
from newton_tendon import cli
from newton_tendon.cli import SimpleProgress, main, progress_factory


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    """Run ``newton-tendon ARGV`` in-process; returns (exit status, stdout, stderr)."""
    rc = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


# ----------------------------------------------------------------------------------------------
# Help and listing


@pytest.mark.parametrize("command", [None, "demo", "run", "list", "bench", "convert"])
def test_help_everywhere(capsys, command):
    """`--help` works on the command and on every subcommand, exits 0 and prints a usage line."""
    argv = ["--help"] if command is None else [command, "--help"]
    rc, out, _ = run_cli(capsys, *argv)
    assert rc == 0
    assert out.startswith("usage: newton-tendon")
    if command is not None:
        assert f"newton-tendon {command}" in out


def test_version(capsys):
    """`--version` prints the package version."""
    rc, out, _ = run_cli(capsys, "--version")
    assert rc == 0 and nt.__version__ in out


def test_list_names_every_example_with_its_description(capsys):
    """`list` prints one line per example module, with the first line of its docstring."""
    rc, out, _ = run_cli(capsys, "list")
    assert rc == 0
    names = cli.example_names()
    assert len(names) >= 10 and "cable_capstan" in names and "transmission_suspended_load" in names
    for name in names:
        line = next(line for line in out.splitlines() if line.split() and line.split()[0] == name)
        assert cli.example_description(name) in line
    assert f"{len(names)} examples" in out


# ----------------------------------------------------------------------------------------------
# run


def test_run_cable_example(capsys, tmp_path, monkeypatch):
    """`run cable_capstan --frames 2` runs the example's own main (its table) and reports a rate."""
    monkeypatch.chdir(tmp_path)  # nothing may be written into the working directory
    rc, out, _ = run_cli(capsys, "run", "cable_capstan", "--frames", "2", "--device", "cpu", "--no-progress")
    assert rc == 0
    assert "cable_capstan: 2 frames" in out  # the example's own header
    assert "exp(mu th)" in out
    assert "world-steps/s" in out
    # The progress/timing wrapper is gone again afterwards.
    from newton_tendon.examples import cable_capstan
    from newton_tendon.examples._common import CableExample

    assert "step" not in cable_capstan.Example.__dict__
    assert cable_capstan.Example.step is CableExample.step
    assert list(tmp_path.iterdir()) == []


def test_run_rl_environment_maps_frames_to_steps(capsys):
    """An RL environment example counts env steps: `--frames 2` becomes its `--steps 2`."""
    rc, out, _ = run_cli(capsys, "run", "env_payload", "--frames", "2", "--worlds", "2", "--device", "cpu")
    assert rc == 0
    assert "run env_payload --steps 2 --worlds 2 --device cpu" in out
    assert "2 frames x" in out and "world-steps/s" in out


def test_run_transmission_example_with_vbd_and_outputs(capsys, tmp_path):
    """`run transmission_suspended_load --solver vbd --worlds 2 --frames 2` writes its outputs under --out."""
    rc, out, _ = run_cli(
        capsys,
        "run",
        "newton_tendon.examples.transmission_suspended_load",  # module spelling accepted too
        "--frames",
        "2",
        "--worlds",
        "2",
        "--solver",
        "vbd",
        "--device",
        "cpu",
        "--out",
        tmp_path,
        "--progress",
    )
    assert rc == 0
    assert "solver vbd" in out and "2 world(s)" in out
    summary = json.loads((tmp_path / "transmission_suspended_load" / "summary.json").read_text())
    assert summary["solver"] == "vbd" and summary["worlds"] == 2 and summary["frames"] == 2
    assert summary["finite"]


def test_run_reports_a_failed_physics_check(capsys, monkeypatch, tmp_path):
    """An example whose test_final fails makes `run` exit 1 with the assertion's message."""
    from newton_tendon.examples import transmission_suspended_load as mod

    def failing(self):
        raise AssertionError("length off by 1 m")

    monkeypatch.setattr(mod.Example, "test_final", failing)
    monkeypatch.setattr(mod.Example, "min_time", 0.0)
    rc, _, err = run_cli(
        capsys, "run", "transmission_suspended_load", "--frames", "1", "--device", "cpu", "--out", tmp_path
    )
    assert rc == 1
    assert "test_final failed" in err and "length off by 1 m" in err


# ----------------------------------------------------------------------------------------------
# bench and convert


def test_bench_tiny(capsys, tmp_path):
    """`bench` with one world and two steps runs every scene of the benchmark and exits 0."""
    rc, out, _ = run_cli(
        capsys,
        "bench",
        "--worlds",
        "1",
        "--steps",
        "2",
        "--repeats",
        "1",
        "--solver",
        "xpbd",
        "--quick",
        "--no-newton",
        "--device",
        "cpu",
        "--out",
        tmp_path,
    )
    assert rc == 0
    assert "w-s/s" in out or "world-steps/s" in out
    if (cli.benchmarks_dir() / "run_all.py").exists():
        assert (tmp_path / "bench" / "results.json").exists()


def test_bench_single_script(capsys):
    """`bench --suite cables --scenes pulley` runs one benchmark script with the given options."""
    rc, out, _ = run_cli(
        capsys, "bench", "--suite", "cables", "--scenes", "pulley", "--worlds", "1", "--steps", "2", "--no-newton"
    )
    assert rc == 0
    assert "== bench_cables.py" in out
    rows = [line for line in out.splitlines() if line.startswith("pulley")]
    assert len(rows) == 2  # one row per solver (--solver both)


def test_convert_native_round_trip(capsys, tmp_path):
    """`convert IN OUT` reads a native scene and writes it back; the copy loads to the same builder."""
    from newton_tendon import io as nt_io

    b = nt.ModelBuilder()
    body = b.add_body(xform=(0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=1.0, label="weight")
    b.add_tendon([nt.TendonGuide(body=-1, offset=(0.0, 0.0, 2.0)), nt.TendonGuide(body=body, compliance=1e-3)])
    src, dst = tmp_path / "scene.json", tmp_path / "copy.json"
    nt_io.save(b, src)
    rc, out, _ = run_cli(capsys, "convert", src, dst)
    assert rc == 0
    assert "1 bodies" in out and "1 routed tendons" in out
    assert nt_io.dumps(nt_io.load(dst)) == nt_io.dumps(b)


# ----------------------------------------------------------------------------------------------
# Bad arguments


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "no_such_example"], "unknown example 'no_such_example'"),
        (["run", "cable_capstan", "--solver", "pbd"], "invalid choice: 'pbd'"),
        (["run", "cable_capstan", "--frames", "0"], "argument --frames: must be an integer >= 1"),
        (["run", "cable_capstan", "--worlds", "-3"], "argument --worlds: must be an integer >= 1"),
        (["run", "cable_capstan", "--device", "gpu:7"], "argument --device: 'gpu:7' is not a Warp device"),
        (["run"], "the following arguments are required: EXAMPLE"),
        (["demo", "--worlds", "0"], "argument --worlds: must be an integer >= 1, got '0'"),
        (["--worlds", "two"], "argument --worlds: must be an integer >= 1, got 'two'"),
        (["demo", "--seconds", "-1"], "argument --seconds: must be a finite number > 0"),
        (["demo", "--seconds", "nan"], "argument --seconds: must be a finite number > 0"),
        (["demo", "--solver", "mujoco"], "invalid choice: 'mujoco'"),
        (["bench", "--worlds", "1,x"], "argument --worlds: must be comma-separated integers >= 1"),
        (["bench", "--suite", "everything"], "invalid choice: 'everything'"),
        (["convert", "/no/such/file.xml", "out.json"], "argument IN: '/no/such/file.xml' is not a file"),
        (["convert", "only_one_argument"], "the following arguments are required: OUT"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
    ],
)
def test_bad_arguments_exit_2_with_a_message(capsys, argv, message):
    """Usage errors exit 2 before any work, and the message names the argument and the rule."""
    rc, out, err = run_cli(capsys, *argv)
    assert rc == 2
    assert message in err
    assert "usage: newton-tendon" in err
    assert out == ""


def test_convert_errors_exit_1(capsys, tmp_path):
    """A conversion the library refuses (an unsupported output format) exits 1 and says why."""
    src = tmp_path / "scene.json"
    from newton_tendon import io as nt_io

    nt_io.save(nt.ModelBuilder(), src)
    rc, _, err = run_cli(capsys, "convert", src, tmp_path / "scene.obj")
    assert rc == 1
    assert "newton-tendon convert: error:" in err and ".json" in err
    assert not (tmp_path / "scene.obj").exists()
    rc, _, err = run_cli(capsys, "convert", src, src)
    assert rc == 2 and "name the same file" in err


def test_convert_missing_output_folder(capsys, tmp_path):
    """OUT in a folder that does not exist is a usage error."""
    src = tmp_path / "scene.json"
    from newton_tendon import io as nt_io

    nt_io.save(nt.ModelBuilder(), src)
    rc, _, err = run_cli(capsys, "convert", src, tmp_path / "missing" / "out.json")
    assert rc == 2 and "does not exist" in err


# ----------------------------------------------------------------------------------------------
# Progress bars


def test_simple_progress_bar_draws_counts():
    """The built-in bar shows done/total and ends its line when closed with advance(0)."""
    stream = io.StringIO()
    bar = SimpleProgress(4, "demo", stream=stream)
    for _ in range(4):
        bar.advance(1)
    bar.advance(0)
    text = stream.getvalue()
    assert "demo [" in text and "4/4 frames" in text
    assert text.endswith("\n")
    assert "#" * 24 in text.splitlines()[-1]


def test_progress_without_tqdm_uses_the_builtin_bar(monkeypatch, capsys):
    """With tqdm missing the factory falls back to the built-in bar; disabled means no bar at all."""
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm now raises ImportError
    advance = progress_factory(True, "run", unit="frame")(3)
    for _ in range(3):
        advance(1)
    advance(0)
    assert "3/3 frames" in capsys.readouterr().err
    assert progress_factory(False, "run") is None


def test_examples_found_from_another_working_directory(tmp_path, monkeypatch):
    """The examples are found next to the package even when the working directory is elsewhere."""
    monkeypatch.chdir(tmp_path)
    package = cli.examples_package()
    assert "cable_capstan" in cli.example_names(package)
    assert cli.example_description("cable_hanging", package).startswith("A mass hanging")
