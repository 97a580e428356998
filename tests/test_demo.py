"""The main job and the README's code run as documented."""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from newton_tendon.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_demo_command_runs_and_writes_outputs(tmp_path, capsys):
    """`newton-tendon demo` exits 0, prints its table and writes a finite summary and trajectory."""
    rc = main(["demo", "--worlds", "2", "--seconds", "0.25", "--device", "cpu", "--out", str(tmp_path)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "world-steps/s" in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["finite"] and summary["worlds"] == 2 and summary["bodies"] == 8
    traj = np.load(tmp_path / "trajectory.npz")
    assert traj["body_q"].shape[1:] == (8, 7)
    # The chains fall from horizontal: after 0.25 s the tips are below the hinge height of 1 m.
    assert all(h < 1.0 for h in summary["tip_height_m"])


def test_python_dash_m_entry_point(tmp_path):
    """`python -m newton_tendon` runs the demo by default and exits 0."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "newton_tendon",
            "--worlds",
            "1",
            "--seconds",
            "0.05",
            "--device",
            "cpu",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "summary.json").exists()


def test_readme_quickstart_runs():
    """The README's quickstart code block runs unchanged and prints finite joint angles."""
    text = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    scope = {}
    exec(compile(code, "README.md", "exec"), scope)
    q = scope["joint_q"].numpy()
    assert q.shape == (1024,) and np.all(np.isfinite(q))
