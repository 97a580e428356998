"""The package's layers (docs/architecture.md), read from the source with ``ast``, nothing imported.

kernels <- host data (model, state, builder) <- launchers (solvers) <- io <- rl, viewer, cli, examples.
These tests check the import rules that picture states: the device side imports only Warp, the
standard library and itself; no module-level import goes up a layer; there is no module-level import
cycle. Imports inside functions are the documented way down-to-up calls are made
(``ModelBuilder.add_usd`` imports the USD importer when called), so only module-level imports count.
The step diagram (docs/architecture/step.dot) is checked against the files it names.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "newton_tendon"
DIAGRAM = ROOT / "docs" / "architecture" / "step.dot"
DIAGRAM_SVG = DIAGRAM.with_suffix(".svg")

LAYERS = {
    # 0: the device side.
    "kernels": 0,
    # 1: host data: what a scene is (builder lists, finalized Model, State and Control).
    "_float32": 1,
    "axis": 1,
    "exceptions": 1,
    "_hostmath": 1,
    "inertia": 1,
    "layout": 1,
    "tendon": 1,
    "transmission": 1,
    "state": 1,
    "model": 1,
    "_transmission_model": 1,
    "finalize": 1,
    "builder": 1,
    "_transmission_builder": 1,
    # 2: launchers: host code that launches kernels on a Model and a State.
    "collision": 2,
    "kinematics": 2,
    "solvers": 2,
    # 3: input and output (and the old import paths of the importers).
    "io": 3,
    "_usd_plugin": 3,
    "mjcf": 3,
    "usd": 3,
    "usd_tendons": 3,
    # 4: users of the library inside the package.
    "rl": 4,
    "viewer": 4,
    "demo": 4,
    "cli": 4,
    "__main__": 4,
    "examples": 4,
    "": 4,  # newton_tendon/__init__.py: imports everything it re-exports
}
"""Layer of each top-level module or package of ``newton_tendon`` (a module imports only from its
own layer or below, at module level). A new top-level module gets a line here."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _module_level_imports(body: list[ast.stmt]):
    """Import statements that run when the module is imported (not in functions, not under
    ``if TYPE_CHECKING:``)."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _module_level_imports(node.body)
            yield from _module_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            yield from _module_level_imports(node.body)
            for handler in node.handlers:
                yield from _module_level_imports(handler.body)
            yield from _module_level_imports(node.orelse)
            yield from _module_level_imports(node.finalbody)
        elif isinstance(node, (ast.With, ast.ClassDef)):
            yield from _module_level_imports(node.body)


def _imported(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
    """Absolute names an import statement of ``module`` refers to: for ``from X import Y`` the module
    ``X.Y`` when it is one, else ``X``."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
        parts = package.split(".")
        parts = parts[: len(parts) - (node.level - 1)]
        source = ".".join(parts + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    return [f"{source}.{a.name}" if f"{source}.{a.name}" in MODULES else source for a in node.names]


def _all_imports(module: str, module_level_only: bool) -> list[tuple[str, int]]:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    nodes = (
        _module_level_imports(tree.body)
        if module_level_only
        else (n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)))
    )
    return [(name, node.lineno) for node in nodes for name in _imported(module, node)]


def _graph() -> dict[str, set[str]]:
    """Module-level import edges between the package's own modules."""
    graph = {}
    for module in MODULES:
        targets = {name for name, _ in _all_imports(module, True) if name.split(".")[0] == "newton_tendon"}
        graph[module] = targets - {module}
    return graph


def _layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS[parts[1] if len(parts) > 1 else ""]


def test_every_internal_import_resolves():
    """The walk understands every import of the package (so the checks below see every edge)."""
    unresolved = [
        f"{module}: {name}"
        for module in MODULES
        for name, _ in _all_imports(module, False)
        if name.split(".")[0] == "newton_tendon" and name not in MODULES
    ]
    assert not unresolved, unresolved


def test_kernels_import_only_warp_stdlib_and_kernels():
    """Device side: a module of newton_tendon.kernels imports nothing of the host package, at any
    level (functions included), and no third-party package but warp."""
    bad = []
    for module in MODULES:
        if not module.startswith("newton_tendon.kernels"):
            continue
        for name, line in _all_imports(module, False):
            top = name.split(".")[0]
            if top == "newton_tendon":
                ok = name == "newton_tendon.kernels" or name.startswith("newton_tendon.kernels.")
            else:
                ok = top == "warp" or top in sys.stdlib_module_names
            if not ok:
                bad.append(f"{module}:{line} imports {name}")
    assert not bad, bad


def test_every_module_has_a_layer():
    """Every top-level module of the package is placed in LAYERS (a new one must be placed)."""
    missing = sorted({m.split(".")[1] for m in MODULES if "." in m} - set(LAYERS))
    assert not missing, f"add these to LAYERS in tests/tools/test_layers.py: {missing}"


def test_module_level_imports_go_down_the_layers():
    """No module-level import reaches a higher layer (kernels <- data <- solvers <- io <- users)."""
    graph = _graph()
    upward = [
        f"{module} (layer {_layer(module)}) -> {target} (layer {_layer(target)})"
        for module, targets in sorted(graph.items())
        for target in sorted(targets)
        if _layer(target) > _layer(module)
    ]
    assert not upward, upward


def test_no_module_level_import_cycle():
    """No circle of module-level imports inside newton_tendon (a circle works only in one import order)."""
    graph = _graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []
    cycles = []

    def visit(module: str):
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycles.append(path[path.index(target) :] + [target])
            elif target not in state:
                visit(target)
        path.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)
    assert not cycles, [" -> ".join(c) for c in cycles]


def _defined_names(path: Path) -> set[str]:
    """Functions, methods, classes and assigned names anywhere in a file."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                # ``a = ...`` and ``a, b = ...`` (a factory returning several kernels)
                elts = t.elts if isinstance(t, ast.Tuple) else [t]
                names.update(e.id for e in elts if isinstance(e, ast.Name))
    return names


def test_step_diagram_names_real_files_and_kernels():
    """Each ``file.py:name`` in the step diagram's labels is a file of the package that defines
    ``name`` (a launcher method or a kernel), and the committed SVG was rendered from this DOT."""
    dot = DIAGRAM.read_text(encoding="utf-8")
    # Label lines end in DOT's escapes \l (left-justified) or \n; split on them before matching.
    labels = [re.sub(r"\\[lnr]", "\n", s) for s in re.findall(r'label="((?:[^"\\]|\\.)*)"', dot)]
    refs = sorted({m for label in labels for m in re.findall(r"([A-Za-z_][\w/]*\.py):(\w+)", label)})
    assert len(refs) > 30, "the diagram names too few kernels; did the label format change?"
    files = {p for p, _ in refs} | set(re.findall(r"([A-Za-z_][\w/]*\.py)", " ".join(labels)))
    missing_files = sorted(f for f in files if not (PACKAGE / f).is_file())
    assert not missing_files, f"step.dot names files that do not exist under newton_tendon/: {missing_files}"
    undefined = [f"{p}:{n}" for p, n in refs if n not in _defined_names(PACKAGE / p)]
    assert not undefined, f"step.dot names what these files do not define: {undefined}"
    svg = DIAGRAM_SVG.read_text(encoding="utf-8")
    stale = [f"{p}:{n}" for p, n in refs if f"{p}:{n}" not in svg]
    assert not stale, f"step.svg lacks {stale}: run dot -Tsvg docs/architecture/step.dot -o docs/architecture/step.svg"
    page = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert "](architecture/step.svg)" in page
