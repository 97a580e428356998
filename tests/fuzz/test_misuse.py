"""The misuse fuzzer (issue 41): every public entry point called as a confused user or an adversary
would call it must raise a TypeError or ValueError naming itself, and leave the model, the states and
the solvers as they were and usable.

The cases are in ``misuse_cases.py``; they run in a child process, so that a segmentation fault (what
the State of another model did to ``SolverXPBD.step`` before the layout checks) is a failed case, not
a dead test run. When the child dies, the case it was running is recorded as a crash and a new child
goes on from the next case.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHILD_TIMEOUT_S = 900
"""Bound on one child run [s]: the 170 cases take about 40 s on 2 cores with a warm kernel cache, and
the first child compiles the two solvers' kernels when the cache is cold (a few minutes)."""


def run_misuse_cases(device: str) -> tuple[int, dict[int, str], dict[int, str]]:
    """Run every case; returns (case count, {index: name}, {index: failure}) with crashes as failures."""
    names: dict[int, str] = {}
    failures: dict[int, str] = {}
    count = None
    first = 0
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    while count is None or first < count:
        proc = subprocess.run(
            [sys.executable, "-m", "tests.fuzz.misuse_cases", device, str(first)],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT_S,
        )
        running = None
        for line in proc.stdout.splitlines():
            word, _, rest = line.partition(" ")
            if word == "COUNT":
                count = int(rest)
            elif word == "START":
                index, _, name = rest.partition(" ")
                running = int(index)
                names[running] = name
            elif word == "PASS":
                running = None
            elif word == "FAIL":
                index, _, reason = rest.partition(" ")
                failures[int(index)] = json.loads(reason)
                running = None
        if count is None:
            raise AssertionError(f"the misuse child did not start (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
        if running is None:
            if proc.returncode != 0:
                raise AssertionError(f"the misuse child exited {proc.returncode} between cases:\n{proc.stderr[-3000:]}")
            break
        # The child died inside a case: a crash (a segmentation fault exits -11).
        failures[running] = f"the process died (exit {proc.returncode}): {proc.stderr[-500:]}"
        first = running + 1
    return count, names, failures


def test_misuse_raises_named_errors_and_leaves_everything_usable(device):
    """Each case raises TypeError/ValueError naming its entry point, changes no array of the model, the
    states or the control, and both solvers then still step to finite poses (``misuse_cases.run_case``)."""
    count, names, failures = run_misuse_cases(device)
    print(f"misuse fuzzer: {count} cases, {count - len(failures)} passed, {len(failures)} failed")
    assert count >= 150, count
    assert len(names) == count, f"only {len(names)} of {count} cases ran"
    report = "\n".join(f"  [{i}] {names.get(i, '?')}: {why}" for i, why in sorted(failures.items()))
    assert not failures, f"{len(failures)} of {count} misuse cases failed:\n{report}"
