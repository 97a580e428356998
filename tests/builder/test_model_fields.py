"""Every field of Model, State, Control and Contacts has a docstring; array fields state their shape."""

from __future__ import annotations

import ast
import inspect

import warp as wp

import newton_tendon
from newton_tendon import collision as collision_module
from newton_tendon import model as model_module
from newton_tendon import state as state_module

from .builder_common import base


# ---------------------------------------------------------------------------------------------------------------
# Model / State / Control / Contacts field docs
# ---------------------------------------------------------------------------------------------------------------

DOC_CLASSES = [
    (model_module, "Model"),
    (state_module, "State"),
    (state_module, "Control"),
    (collision_module, "Contacts"),
]


def init_field_docs(module, cls_name: str) -> dict[str, str | None]:
    """Map each ``self.x = ...`` in ``cls.__init__`` to the string literal right after it (None if missing)."""
    tree = ast.parse(inspect.getsource(module))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls_name)
    init = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    docs: dict[str, str | None] = {}

    def walk(stmts):
        for i, st in enumerate(stmts):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target] if isinstance(st, ast.AnnAssign) else []
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    nxt = stmts[i + 1] if i + 1 < len(stmts) else None
                    ok = (
                        isinstance(nxt, ast.Expr)
                        and isinstance(nxt.value, ast.Constant)
                        and isinstance(nxt.value.value, str)
                    )
                    docs[t.attr] = nxt.value.value if ok else None
            for field in ("body", "orelse", "finalbody"):
                walk(getattr(st, field, []) or [])

    walk(init.body)
    return docs


def test_every_init_attribute_has_a_docstring():
    """Every public self.x assignment in Model/State/Control/Contacts.__init__ is followed by a docstring."""
    offenders = []
    for module, cls in DOC_CLASSES:
        docs = init_field_docs(module, cls)
        assert docs, cls
        # Private attributes (leading underscore, e.g. Contacts._data) are implementation detail, not API.
        offenders += [f"{cls}.{name}" for name, doc in docs.items() if doc is None and not name.startswith("_")]
    assert offenders == []


def test_array_field_docstrings_state_shape(device):
    """The docstring of every Warp-array field of Model/State/Control/Contacts says its shape."""
    b = base()
    b.add_ground_plane()
    b.add_articulation()
    model = b.finalize(device=device)
    instances = {
        "Model": model,
        "State": model.state(),
        "Control": model.control(),
        "Contacts": newton_tendon.CollisionPipeline(model).contacts(),
    }
    offenders = []
    for module, cls in DOC_CLASSES:
        docs = init_field_docs(module, cls)
        obj = instances[cls]
        arrays = [n for n, v in vars(obj).items() if isinstance(v, wp.array) and not n.startswith("_")]
        assert arrays, cls
        offenders += [f"{cls}.{n}" for n in arrays if "shape" not in (docs.get(n) or "")]
    assert offenders == []
