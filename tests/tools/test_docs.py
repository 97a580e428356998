"""The documentation: the site builds in strict mode (warnings are errors) when the docs tools are
installed; without them, the pages the site needs exist, their links resolve, the gallery covers every
example and the index's code runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
MKDOCS_YML = ROOT / "mkdocs.yml"


def nav_pages() -> list[str]:
    """The ``.md`` files named in ``mkdocs.yml``'s nav (read without a YAML parser)."""
    text = MKDOCS_YML.read_text(encoding="utf-8")
    nav = text[text.index("\nnav:") : text.index("\nvalidation:")]
    return re.findall(r":\s*([\w/.-]+\.md)\s*$", nav, re.M)


def test_docs_build_strict(tmp_path):
    """`mkdocs build --strict` succeeds: no broken link or anchor, no docstring the API page cannot render."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    pytest.importorskip("mkdocstrings_handlers.python")
    site = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(MKDOCS_YML), "-d", str(site)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (site / "index.html").exists()
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    import newton_tendon

    # Every public name has a rendered entry; modules get a section of their own from the hook.
    for name in newton_tendon.__all__:
        assert f'id="newton_tendon.{name}"' in api, f"{name} missing from the API reference"
    assert 'id="newton_tendon.solvers.SolverXPBD.step"' in api
    assert 'id="newton_tendon.solvers.SolverVBD.reset"' in api  # inherited from SolverBase
    gallery = (site / "gallery" / "index.html").read_text(encoding="utf-8")
    assert gallery.count("<img") == (DOCS / "gallery.md").read_text(encoding="utf-8").count("](images/")


def test_nav_pages_exist():
    """Every page in the nav exists, and the pages this site promises are in the nav."""
    pages = nav_pages()
    assert pages, "no nav in mkdocs.yml"
    for page in pages:
        assert (DOCS / page).is_file(), f"mkdocs.yml names {page}, which does not exist"
    for page in ("index.md", "api.md", "migration.md", "limitations.md", "gallery.md", "concepts.md"):
        assert page in pages, f"{page} is not in the nav"


def test_relative_links_resolve():
    """Relative links between pages and to pictures point at files that exist (what strict mode checks)."""
    broken = []
    for page in DOCS.glob("*.md"):
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = target.split("#")[0]
            if not (DOCS / path).exists():
                broken.append(f"{page.name}: {target}")
    assert not broken, broken


def test_api_page_renders_the_public_names():
    """The API page renders the package (its ``__all__``) and the hook adds every module of ``__all__``."""
    import newton_tendon

    text = (DOCS / "api.md").read_text(encoding="utf-8")
    assert re.search(r"^::: newton_tendon\s*$", text, re.M)
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import docs_api
    finally:
        sys.path.remove(str(ROOT / "tools"))
    assert docs_api.MARKER in text
    assert "hooks:" in MKDOCS_YML.read_text(encoding="utf-8") and "tools/docs_api.py" in MKDOCS_YML.read_text()
    modules = docs_api.public_modules()
    expected = [n for n in newton_tendon.__all__ if type(getattr(newton_tendon, n)).__name__ == "module"]
    assert modules == expected and "solvers" in modules
    sections = docs_api.module_sections(modules)
    for name in modules:
        assert f"::: newton_tendon.{name}\n" in sections


def test_gallery_covers_every_example():
    """docs/gallery.md has a section and a picture for every example with a scene, and lists the rest."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import gen_gallery
    finally:
        sys.path.remove(str(ROOT / "tools"))
    from newton_tendon.cli import example_names

    text = (DOCS / "gallery.md").read_text(encoding="utf-8")
    for name in example_names():
        if gen_gallery.has_scene(name):
            assert f"## {name}\n" in text, f"{name} has no gallery section; run python tools/gen_gallery.py"
            picture = DOCS / "images" / f"{name}.png"
            assert f"(images/{name}.png)" in text and picture.is_file(), f"{name} has no picture"
            assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        else:
            assert f"- `{name}`:" in text, f"{name} is not listed in the gallery"
    assert gen_gallery.main(["--check"]) == 0


def test_gallery_text_comes_from_the_docstrings():
    """The gallery page is what the generator writes from the examples' docstrings (not edited by hand)."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import gen_gallery
    finally:
        sys.path.remove(str(ROOT / "tools"))
    from newton_tendon.cli import example_doc, example_names

    names = example_names()
    seconds = {n: gen_gallery.picture_time(n)[1] for n in names if gen_gallery.has_scene(n)}
    expected = gen_gallery.gallery_markdown(names, {n: example_doc(n) for n in names}, seconds)
    assert (DOCS / "gallery.md").read_text(encoding="utf-8") == expected


def test_index_code_runs():
    """The index page's Python blocks run as written and print what their comments say."""
    text = (DOCS / "index.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 2
    first, second = {}, {}
    exec(compile(blocks[0], "docs/index.md[0]", "exec"), first)
    heights = first["state_0"].body_q.numpy()[:, 2]
    assert heights.shape == (16,)
    assert all(abs(h - 0.1) < 0.01 for h in heights)  # resting on the ground: z = radius
    exec(compile(blocks[1], "docs/index.md[1]", "exec"), second)
    tension = float(second["solver"].tendon_segment_material_tension.numpy()[0])
    length = float(second["solver"].transmission_length.numpy()[0])
    assert abs(tension - 2.0 * 9.81) < 0.2  # m g on the cable span, within 1 %
    assert abs(length - (1.0 + (9.81 - 2.0) / 500.0)) < 1e-3  # the spring's static balance
