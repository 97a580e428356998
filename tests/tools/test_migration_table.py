"""docs/migration.md's table (newton 1.8 name -> newton_tendon -> note) is checked against the code.

Every name the ``newton_tendon`` column gives in backticks must exist here: a module-level name, a
class, method or attribute of the builder, model, state, control, solvers, guides or dof configs
(instance attributes are read from a small built scene), or, written ``name=``, a keyword of one of
their callables. A row that promises a name we do not have fails this test, so the page cannot
drift from the package as newton's names are added (issue 26).
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import newton_tendon as nt
from newton_tendon import solvers, viewer
from newton_tendon.builder.joints import JointDofConfig

PAGE = Path(__file__).resolve().parents[2] / "docs" / "migration.md"


def _rows() -> list[tuple[str, str]]:
    """(newton column, ours column) of every row of the page's tables (header and rule skipped)."""
    rows = []
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if not line.startswith("| ") or line.startswith("| ---") or line.startswith("| newton 1.8 |"):
            continue
        # Split on column bars outside backticks (a cell may hold `a | b` in code).
        cells, depth, cur = [], False, ""
        for ch in line.strip().strip("|"):
            if ch == "`":
                depth = not depth
            if ch == "|" and not depth:
                cells.append(cur.strip())
                cur = ""
            else:
                cur += ch
        cells.append(cur.strip())
        if len(cells) >= 2:
            rows.append((cells[0], cells[1]))
    return rows


def _scene():
    b = nt.ModelBuilder()
    body = b.add_body(xform=(0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), mass=1.0)
    b.add_shape_sphere(body, radius=0.1)
    b.add_tendon([nt.TendonGuide(body=-1, offset=(0.0, 0.0, 2.0)), nt.TendonGuide(body=body)])
    b.color()
    model = b.finalize("cpu")
    return b, model


def _namespaces():
    """Objects a name may start from (by its first part) and every keyword of their callables."""
    from newton_tendon.kernels import types  # noqa: PLC0415

    b, model = _scene()
    xpbd, vbd = solvers.SolverXPBD(model), solvers.SolverVBD(model)
    named = {
        "ModelBuilder": b,
        "builder": b,
        "Model": model,
        "model": model,
        "State": model.state(),
        "state": model.state(),
        "Control": model.control(),
        "control": model.control(),
        "SolverXPBD": xpbd,
        "SolverVBD": vbd,
        "solver": xpbd,
        "TendonGuide": nt.TendonGuide(body=-1),
        "JointDofConfig": JointDofConfig(),
        "pipeline": nt.CollisionPipeline(model),
    }
    roots = [nt, solvers, viewer, nt.exceptions, types, *named.values()]
    keywords = set()
    for obj in roots:
        for name in dir(obj):
            if name.startswith("__"):
                continue
            try:
                member = getattr(obj, name)
            except Exception:  # noqa: BLE001 (a property that needs more state)
                continue
            if callable(member):
                try:
                    keywords |= set(inspect.signature(member).parameters)
                except (TypeError, ValueError):
                    pass
    for cls in (nt.ModelBuilder, solvers.SolverXPBD, solvers.SolverVBD, nt.TendonGuide, JointDofConfig):
        keywords |= set(inspect.signature(cls).parameters)
    return (named, roots), keywords


def _walk(obj, parts) -> bool:
    for part in parts:
        if not hasattr(obj, part):
            return False
        obj = getattr(obj, part)
    return True


def _resolves(path: str, spaces) -> bool:
    """``path`` starting at the object its first part names (``Model.x``: a built model's ``x``), at
    the package (``newton_tendon.x``), or at any root."""
    named, roots = spaces
    parts = path.split(".")
    if parts[0] in ("newton_tendon", "nt"):
        return _walk(nt, parts[1:])
    if parts[0] in named and _walk(named[parts[0]], parts[1:]):
        return True
    return any(_walk(obj, parts) for obj in roots)


_TOKEN = re.compile(r"`([^`]+)`")
_NAME = re.compile(r"^([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)*)(\(|=|$)")


def test_every_name_the_table_promises_exists():
    spaces, keywords = _namespaces()
    # The resolver itself: a real name passes, an invented one does not.
    assert _resolves("Model.joint_dof_dim", spaces) and _resolves("newton_tendon.JointTargetMode.EFFORT", spaces)
    assert not _resolves("Model.no_such_array", spaces) and not _resolves("newton_tendon.NoSuchName", spaces)
    rows = _rows()
    assert len(rows) >= 30, "the migration table lost its rows"
    missing = []
    for theirs, ours in rows:
        for token in _TOKEN.findall(ours):
            for part in re.split(r",\s*|\s+", token.strip()):
                m = _NAME.match(part.strip())
                if not m or part.strip() in ("None", "True", "False") or part.startswith("_"):
                    continue
                name, tail = m.group(1), m.group(2)
                if tail == "=":
                    ok = name.split(".")[-1] in keywords
                else:
                    ok = _resolves(name, spaces) or name.split(".")[-1] in keywords
                if not ok:
                    missing.append(f"{name!r} (row: {theirs[:60]})")
    assert not missing, "docs/migration.md names what newton_tendon does not have:\n" + "\n".join(missing)
