"""Regenerate the examples gallery: one picture per example, the demo's pictures and ``docs/gallery.md``.

Every module of ``newton_tendon/examples/`` (``newton-tendon list``) that defines a scene is built with one copy
of its world, stepped for a short while on the CPU, and drawn with
``newton_tendon.viewer.render_png`` at 480 x 360 pixels into ``docs/images/<example>.png``. The
demo's snapshot and plots go to ``docs/images/demo*.png``. The page ``docs/gallery.md`` then shows
each picture with the example's description, taken from its module docstring.

Usage (from the repository root; the renderer needs only NumPy, the demo's plots matplotlib):

    python tools/gen_gallery.py                      # every example and the demo
    python tools/gen_gallery.py --only cable_capstan  # some examples; the page still lists all
    python tools/gen_gallery.py --check               # exit 1 if the page or a picture is missing
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run as a script from a checkout

WIDTH, HEIGHT = 480, 360
"""Picture size [pixels]."""
DEFAULT_SECONDS = 0.5
"""Simulated time [s] before the picture, unless SECONDS names the example."""
SECONDS = {
    "cable_dynamic_roller": 1.0,  # the roller has pushed into the cable by then
    "cable_hanging": 0.3,
    "transmission_suspended_load": 1.0,
    "transmission_length_servo": 1.0,
}
"""Per-example simulated time [s] before the picture, where the default shows little."""
IMAGES = "images"
"""Folder of the pictures, relative to the docs folder."""


def example_text(doc: str) -> tuple[str, str]:
    """``(title line, what-it-shows paragraph)`` from an example's module docstring.

    The paragraph is the one that starts with "What it shows:" (without that prefix), or the
    second paragraph, or empty.
    """
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", doc.strip()) if p.strip()]
    title = paragraphs[0] if paragraphs else ""
    body = ""
    for p in paragraphs[1:]:
        if p.lower().startswith("what it shows:"):
            body = p[len("what it shows:") :].strip()
            break
    else:
        if len(paragraphs) > 1 and not paragraphs[1].lower().startswith(("run:", "physics checked")):
            body = paragraphs[1]
    if body:
        body = body[0].upper() + body[1:]
    return title, body


def _scene_module(name: str):
    import importlib

    from newton_tendon.cli import examples_package, scene_class

    module = importlib.import_module(f"{examples_package().__name__}.{name}")
    return module, scene_class(module)


def has_scene(name: str) -> bool:
    """Whether example ``name`` defines a scene to draw (an ``Example`` or ``Env`` class)."""
    return _scene_module(name)[1] is not None


def picture_time(name: str) -> tuple[int, float]:
    """``(frames, seconds)`` example ``name`` runs before its picture: whole frames of the example's frame time."""
    _, cls = _scene_module(name)
    frame_dt = 1.0 / cls.fps if hasattr(cls, "fps") else float(cls.frame_dt)
    frames = max(1, round(SECONDS.get(name, DEFAULT_SECONDS) / frame_dt))
    return frames, frames * frame_dt


def render_example(name: str, path: Path, device: str = "cpu") -> dict:
    """Build example ``name`` with one copy of its world, step it and draw it into ``path``.

    Scene examples (``Example``) step frames; RL environments (``Env``) step random actions.

    Returns:
        ``frames`` stepped, simulated ``seconds``, ``worlds`` drawn and ``wall_s``.
    """
    import numpy as np

    from newton_tendon.viewer import render_png

    _, cls = _scene_module(name)
    start = time.perf_counter()
    frames, seconds = picture_time(name)
    if hasattr(cls, "action_dim"):  # an RL environment
        sim = cls(1, device)
        sim.reset()
        rng = np.random.default_rng(0)
        for _ in range(frames):
            sim.step(sim.random_actions(rng))
    else:
        sim = cls(device=device, world_count=1)
        for _ in range(frames):
            sim.step()
    path.parent.mkdir(parents=True, exist_ok=True)
    render_png(sim.model, sim.state_0, str(path), solver=sim.solver, width=WIDTH, height=HEIGHT)
    return {
        "frames": frames,
        "seconds": seconds,
        "worlds": sim.model.world_count,
        "wall_s": time.perf_counter() - start,
    }


def render_demo(images: Path, device: str = "cpu") -> list[str]:
    """Run the demo (4 worlds, 1.5 s) and copy its snapshot and plots into ``images`` as ``demo*.png``."""
    import shutil
    import tempfile

    from newton_tendon.demo import run_demo

    written = []
    with tempfile.TemporaryDirectory() as tmp:
        summary = run_demo(worlds=4, seconds=1.5, device=device, out_dir=tmp, usd=False)
        for src, dst in (
            ("snapshot.png", "demo.png"),
            ("capstan.png", "demo_capstan.png"),
            ("loads.png", "demo_loads.png"),
        ):
            if src in summary["files"]:
                images.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(Path(tmp) / src, images / dst)
                written.append(dst)
    return written


def gallery_markdown(names: list[str], docs: dict[str, str], seconds: dict[str, float]) -> str:
    """The text of ``docs/gallery.md`` for the examples ``names`` (docstrings in ``docs``).

    ``seconds`` holds the picture time [s] of every example with a picture; the others are listed
    as scripts.
    """
    lines = [
        "# Examples gallery",
        "",
        "Every example in `newton_tendon/examples/`, drawn by `newton_tendon.viewer.render_png` after a short run of one copy",
        "of its world. `tools/gen_gallery.py` makes these pictures and this page; run it again after changing",
        "an example. Each example also runs from the command line, prints a table of measured against expected",
        "numbers and checks its physics when it runs long enough:",
        "",
        "```bash",
        "newton-tendon list                                   # the examples, one line each",
        "newton-tendon run cable_capstan --solver vbd --worlds 64",
        "python -m newton_tendon.examples.cable_capstan --frames 40         # the same, from a checkout",
        "```",
        "",
    ]
    scripts = []
    for name in names:
        title, body = example_text(docs[name])
        if name not in seconds:  # a script without a scene of its own
            scripts.append((name, title))
            continue
        lines += [f"## {name}", "", title, ""]
        if body:
            lines += [body, ""]
        lines += [
            f"![{name} after {seconds[name]:g} s]({IMAGES}/{name}.png)",
            "",
            f"`newton-tendon run {name}` (picture: {seconds[name]:g} s simulated)",
            "",
        ]
    if scripts:
        lines += ["## Scripts", "", "Examples without a scene of their own:", ""]
        lines += [f"- `{name}`: {title}" for name, title in scripts]
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate docs/images/<example>.png and docs/gallery.md.")
    parser.add_argument("--docs", default=str(ROOT / "docs"), help="docs folder (default: %(default)s)")
    parser.add_argument("--only", default=None, help="comma-separated examples to redraw (default: all)")
    parser.add_argument("--device", default="cpu", help="Warp device (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="only check that the page and every picture exist")
    args = parser.parse_args(argv)

    import warp as wp

    wp.config.quiet = True
    wp.config.log_level = getattr(wp, "LOG_WARNING", 30)
    from newton_tendon.cli import example_doc, example_names

    names = example_names()
    docs_dir = Path(args.docs)
    only = names if args.only is None else [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = sorted(set(only) - set(names))
    if unknown:
        parser.error(f"--only: unknown example(s) {', '.join(unknown)}; choose from {', '.join(names)}")
    seconds = {name: picture_time(name)[1] for name in names if has_scene(name)}
    if args.check:
        page = docs_dir / "gallery.md"
        pictures = [docs_dir / IMAGES / f"{n}.png" for n in seconds]
        missing = [str(p) for p in pictures if not p.exists()]
        if not page.exists():
            missing.append(str(page))
        if missing:
            print("missing: " + ", ".join(missing), file=sys.stderr)
            return 1
        print(f"gallery complete: {len(names)} examples")
        return 0
    for name in only:
        if name not in seconds:
            print(f"{name:<30} no scene to draw (listed under Scripts)")
            continue
        info = render_example(name, docs_dir / IMAGES / f"{name}.png", device=args.device)
        seconds[name] = info["seconds"]
        print(
            f"{name:<30} {info['frames']:>4} frames ({info['seconds']:.2f} s), {info['worlds']} world(s), "
            f"{info['wall_s']:.1f} s -> {IMAGES}/{name}.png",
            flush=True,
        )
    if args.only is None:
        written = render_demo(docs_dir / IMAGES, device=args.device)
        print(f"demo pictures -> {', '.join(f'{IMAGES}/{w}' for w in written)}")
    text = gallery_markdown(names, {n: example_doc(n) for n in names}, seconds)
    (docs_dir / "gallery.md").write_text(text, encoding="utf-8")
    print(f"wrote {docs_dir / 'gallery.md'} ({len(names)} examples)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
