"""MkDocs hook (``hooks:`` in ``mkdocs.yml``): completes ``docs/api.md`` from ``newton_tendon.__all__``.

The API page renders the package itself (``::: newton_tendon``), which lists every class and
function named in ``__all__``. Modules named in ``__all__`` (``solvers``, ``io``, ...) are not
members that mkdocstrings renders inline, so this hook replaces the marker line
``<!-- modules from __all__ -->`` with one section per such module, in ``__all__`` order. A module
added to ``__all__`` therefore appears in the reference without editing the page.

``__all__`` and the module imports are read from ``newton_tendon/__init__.py`` with ``ast``, so the
docs build does not import the package (nor Warp).
"""

from __future__ import annotations

import ast
from pathlib import Path

MARKER = "<!-- modules from __all__ -->"
"""The line of ``docs/api.md`` that the module sections replace."""
PACKAGE_INIT = Path(__file__).resolve().parents[1] / "newton_tendon" / "__init__.py"
"""The package's ``__init__.py``, read for ``__all__``."""


def public_modules(init_path: Path = PACKAGE_INIT) -> list[str]:
    """Names in ``__all__`` of ``init_path`` that the package imports as submodules (``from . import x``)."""
    tree = ast.parse(init_path.read_text(encoding="utf-8"))
    modules: set[str] = set()
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module is None:
            modules.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            names = [ast.literal_eval(elt) for elt in node.value.elts]
    return [n for n in names if n in modules]


def module_sections(modules: list[str]) -> str:
    """Markdown with one mkdocstrings section per module of the package."""
    parts = []
    for name in modules:
        parts.append(
            f"## newton_tendon.{name}\n\n"
            f"::: newton_tendon.{name}\n"
            "    options:\n"
            "      show_root_heading: false\n"
            "      heading_level: 3\n"
            "      inherited_members: true\n"
        )
    return "\n".join(parts)


def on_page_markdown(markdown: str, page, config, files) -> str:
    """MkDocs event: fill the marker of the API page."""
    if page.file.src_uri != "api.md" or MARKER not in markdown:
        return markdown
    return markdown.replace(MARKER, module_sections(public_modules()))
