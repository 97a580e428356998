"""The public API keeps its import paths: every module and name of the frozen snapshot is still there.

The snapshot (``tests/data/public_api.json``, written by ``tools/public_api.py --write``) lists every
public module of the package (no dotted part starting with ``_``) with its ``__all__`` and the
names that docs/ and README.md use through it. Names and modules may be added; a restructuring that
moves one must keep the old path working (a re-export), so none may disappear. Rewriting the
snapshot to drop a name is an API change and belongs in the CHANGELOG.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "public_api.json"
FROZEN: dict[str, dict[str, list[str]]] = json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def test_snapshot_covers_the_package():
    """The snapshot is not empty and starts from the package itself and its top-level ``__all__``."""
    assert "newton_tendon" in FROZEN
    assert "ModelBuilder" in FROZEN["newton_tendon"]["all"]
    assert "newton_tendon.solvers" in FROZEN and "SolverXPBD" in FROZEN["newton_tendon.solvers"]["all"]


@pytest.mark.parametrize("module", sorted(FROZEN))
def test_public_names_stay_importable(module):
    """The module imports at its snapshotted path; every name of its snapshotted ``__all__`` is an
    attribute and still in ``__all__`` (so ``from module import *`` still gives it); every documented
    name is an attribute."""
    mod = importlib.import_module(module)
    entry = FROZEN[module]
    exported = getattr(mod, "__all__", None)
    if entry.get("all"):
        assert exported is not None, f"{module} no longer defines __all__"
        lost = [n for n in entry["all"] if n not in exported]
        assert lost == [], f"{module}.__all__ lost {lost}"
        gone = [n for n in entry["all"] if not hasattr(mod, n)]
        assert gone == [], f"{module}.__all__ names {gone} but the module has no such attribute"
    gone = [n for n in entry.get("documented", []) if not hasattr(mod, n)]
    assert gone == [], f"{module} lost the documented names {gone}"
