"""Snapshot of the public API: the import paths and names that users may rely on.

``tests/tools/test_public_api.py`` checks the snapshot file (``tests/data/public_api.json``) against
the code: every module path in it still imports, every name it lists is still an attribute of that
module, and a name it lists under ``__all__`` is still in that module's ``__all__``. Names and
modules may be added freely; removing or moving one breaks the test, so a restructuring must keep
the old path working (a re-export) or say in the CHANGELOG that the API changed and rewrite the
snapshot.

What the snapshot holds, per public module (a module of the package none of whose dotted parts
starts with ``_``):

* ``all``: the module's ``__all__`` (absent where the module defines none);
* ``documented``: the names that docs/*.md and README.md use through that module
  (``from newton_tendon.X import a, b`` or ``newton_tendon.X.a``) that are not already in ``all``.

    python tools/public_api.py            # print the snapshot of the current code
    python tools/public_api.py --write    # rewrite tests/data/public_api.json from the current code
    python tools/public_api.py --check    # exit 1 if a snapshotted module or name is gone
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
"""The repository root."""
SNAPSHOT = ROOT / "tests" / "data" / "public_api.json"
"""The frozen snapshot that the test reads."""
PACKAGE = "newton_tendon"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # this checkout's package, not an installed one

_FROM_IMPORT = re.compile(r"from\s+(newton_tendon(?:\.\w+)*)\s+import\s+\(?\s*([\w\s,]+)")
_DOTTED = re.compile(r"\bnewton_tendon(?:\.\w+)+")


def public_modules() -> list[str]:
    """Every importable module of the package whose dotted path has no part starting with ``_``."""
    package = importlib.import_module(PACKAGE)
    names = [PACKAGE]
    for info in pkgutil.walk_packages(package.__path__, PACKAGE + "."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return sorted(names)


def documented_names(modules: list[str]) -> dict[str, set[str]]:
    """Public names that the docs and the README use through a module of ``modules``."""
    found: dict[str, set[str]] = {}
    texts = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md"))]
    texts.append((ROOT / "README.md").read_text(encoding="utf-8"))
    for text in texts:
        for module, names in _FROM_IMPORT.findall(text):
            for name in re.split(r"[\s,]+", names.strip()):
                if name:
                    found.setdefault(module, set()).add(name)
        for dotted in _DOTTED.findall(text):
            parts = dotted.split(".")
            # The longest prefix that is a public module; the next part is a name in it.
            for cut in range(len(parts) - 1, 0, -1):
                module = ".".join(parts[:cut])
                if module in modules:
                    found.setdefault(module, set()).add(parts[cut])
                    break
    result: dict[str, set[str]] = {}
    for module, names in found.items():
        if module not in modules:
            continue
        mod = importlib.import_module(module)
        keep = set()
        for name in names:
            if name.startswith("_") or f"{module}.{name}" in modules:
                continue  # private names and submodules (those are entries of their own)
            if hasattr(mod, name):
                keep.add(name)
        if keep:
            result[module] = keep
    return result


def snapshot() -> dict[str, dict[str, list[str]]]:
    """The public API of the current code, in the snapshot's format."""
    modules = public_modules()
    documented = documented_names(modules)
    result: dict[str, dict[str, list[str]]] = {}
    for module in modules:
        mod = importlib.import_module(module)
        entry: dict[str, list[str]] = {}
        exported = getattr(mod, "__all__", None)
        if exported is not None:
            entry["all"] = sorted(exported)
        extra = documented.get(module, set()) - set(exported or ())
        if extra:
            entry["documented"] = sorted(extra)
        result[module] = entry
    return result


def _optional_dependency_missing(exc: ImportError) -> bool:
    """Whether an import failed because a third-party package is not installed (the modules that
    adapt optional dependencies re-raise that with an install hint, chained)."""
    while exc is not None:
        if isinstance(exc, ModuleNotFoundError) and exc.name and exc.name.split(".")[0] != PACKAGE:
            return True
        exc = exc.__cause__
    return False


def missing(frozen: dict[str, dict[str, list[str]]]) -> list[str]:
    """What of ``frozen`` the current code no longer provides, one line per module or name."""
    problems = []
    for module, entry in frozen.items():
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:
            if _optional_dependency_missing(exc):
                continue  # e.g. the rl adapters without the rl extra: nothing of ours is gone
            problems.append(f"{module}: no longer importable ({exc})")
            continue
        exported = getattr(mod, "__all__", None)
        for name in entry.get("all", []):
            if not hasattr(mod, name):
                problems.append(f"{module}.{name}: gone")
            elif exported is None or name not in exported:
                problems.append(f"{module}.{name}: no longer in {module}.__all__")
        for name in entry.get("documented", []):
            if not hasattr(mod, name):
                problems.append(f"{module}.{name}: gone (documented in docs/ or README.md)")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help=f"rewrite {SNAPSHOT.relative_to(ROOT)}")
    group.add_argument("--check", action="store_true", help="exit 1 if the code lost a snapshotted name")
    args = parser.parse_args(argv)
    if args.check:
        problems = missing(json.loads(SNAPSHOT.read_text(encoding="utf-8")))
        for line in problems:
            print(line)
        return 1 if problems else 0
    text = json.dumps(snapshot(), indent=1, sort_keys=True) + "\n"
    if args.write:
        SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
        SNAPSHOT.write_text(text, encoding="utf-8")
        print(f"wrote {SNAPSHOT.relative_to(ROOT)}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
