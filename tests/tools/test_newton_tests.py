"""tools/newton_tests.py, the runner of newton's own tendon tests (issue 26), checked offline: on a
fake wheel holding the files it copies, the tree it lays out resolves ``import newton`` to newton_tendon,
answers ``newton._src`` imports with placeholders that raise when used, and runs a TestCase file."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import newton_tests as runner  # noqa: E402

_PROBE = """\
import importlib
import unittest

import newton
import newton_tendon
from newton import Axis
from newton._src.solvers.some_kernels import private_kernel


class TestProbe(unittest.TestCase):
    def test_newton_is_newton_tendon(self):
        self.assertIs(newton.ModelBuilder, newton_tendon.ModelBuilder)
        self.assertIs(Axis, newton_tendon.Axis)
        solvers = importlib.import_module("newton.solvers")
        self.assertIs(solvers.SolverXPBD, newton_tendon.solvers.SolverXPBD)

    def test_internal_placeholder_raises(self):
        with self.assertRaises(RuntimeError) as info:
            private_kernel(1)
        self.assertIn("newton._src.solvers.some_kernels.private_kernel", str(info.exception))

    def test_excluded_by_the_runner(self):
        self.fail("the exclusion list should have dropped this test")


def test_plain_function_is_not_collected(test, device):
    raise AssertionError("module-level test_* functions are bodies for add_test, not tests")
"""


@pytest.fixture
def fake_wheel(tmp_path, monkeypatch):
    """A zip with the names the runner copies; the first test file holds the probe above."""
    wheel = tmp_path / "newton-1.8.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for i, name in enumerate(runner.TEST_FILES):
            body = _PROBE if i == 0 else "import newton\n"
            zf.writestr(f"newton/tests/{name}", body)
        for name in runner.SUPPORT_FILES:
            zf.writestr(name, "")
        zf.writestr("newton/examples/tendon/utils.py", "import newton\n")
    excluded = ((f"{runner.TEST_FILES[0]}::*::test_excluded_by_the_runner*", "probe"),)
    monkeypatch.setattr(runner, "EXCLUDED", excluded)
    return wheel


def test_runner_counts_a_fake_wheel(fake_wheel, capsys):
    """Two probe tests pass, one is excluded, the plain function is not collected; exit status 0."""
    rc = runner.main(["--wheel", str(fake_wheel)])
    out = capsys.readouterr().out.strip().splitlines()[-1]
    assert out == "2 passed, 0 failed, 1 excluded", out
    assert rc == 0


def test_runner_tree_copies_examples_and_writes_the_shim(fake_wheel, tmp_path):
    """build_tree copies the test files, the support files and examples/tendon/ and writes the shim."""
    root = tmp_path / "tree"
    root.mkdir()
    runner.build_tree(fake_wheel, root)
    for name in runner.TEST_FILES:
        assert (root / "newton" / "tests" / name).is_file()
    assert (root / "newton" / "examples" / "tendon" / "utils.py").is_file()
    shim = (root / "newton" / "__init__.py").read_text()
    assert "newton_tendon" in shim
    probe = "import newton, newton_tendon; assert newton.Axis is newton_tendon.Axis; print(newton.__version__)"
    env = {"PYTHONPATH": f"{root}:{ROOT}", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith(runner.NEWTON_VERSION)


def test_exclusions_each_have_a_reason_and_causes_mask_numbers():
    """Every excluded pattern (internals, issue 42's decided list, the conventions) names a test file and
    gives a reason; the decided list holds issue 42's 19 tests and the rolling-spin test decided after
    them (20), none also a convention; cause_of drops numbers, keeps names."""
    for pattern, reason in runner.EXCLUDED + runner.DECIDED + runner.CONVENTIONS:
        assert pattern.split("::")[0] in runner.TEST_FILES and len(reason) > 10
    assert len(runner.DECIDED) == 20 and len(runner.CONVENTIONS) == 2
    assert not {p for p, _ in runner.DECIDED} & {p for p, _ in runner.CONVENTIONS}
    assert runner.cause_of("AssertionError: 3.5 != 2 within 7 delta\nmore") == "AssertionError: # != # within # delta"
    assert runner.cause_of("AttributeError: 'SolverXPBD' has no attribute 'x2'") == (
        "AttributeError: 'SolverXPBD' has no attribute 'x2'"
    )
