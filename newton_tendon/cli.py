"""The ``newton-tendon`` command line.

Commands (``newton-tendon COMMAND --help`` for each):

* ``demo`` (the default): both tendon models in many worlds; prints a table of measured versus
  expected numbers and world-steps per second, writes a summary, a USD recording and pictures.
* ``run EXAMPLE``: runs one module of ``newton_tendon.examples`` with ``--solver``, ``--worlds``, ``--frames``
  and ``--device``.
* ``list``: the examples with one line each.
* ``bench``: the throughput benchmarks of ``benchmarks/``.
* ``convert IN OUT``: reads an MJCF, URDF, USD or native scene and writes it in the native format
  (``newton_tendon.io.convert``).

Exit status: 0 on success, 1 when a run fails (a physics check, a bad input file), 2 for bad
arguments. Messages go to stderr and name the argument and the rule.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import importlib.util
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

PROG = "newton-tendon"
"""The command's name in messages."""
DEFAULT_OUT = "newton_tendon_out"
"""Default output folder (relative to the working directory)."""
SOLVERS = ("xpbd", "vbd")
"""``--solver`` choices: ``SolverXPBD`` and ``SolverVBD``."""
BENCH_SUITES = ("rigid", "cables", "transmission")
"""Benchmark scripts that ``bench --suite`` can run (``benchmarks/bench_<suite>.py``)."""


class CliError(Exception):
    """A failure to report as ``newton-tendon <command>: error: <message>`` with exit status 1."""


# ----------------------------------------------------------------------------------------------
# Argument types


def _positive_int(text: str) -> int:
    """An argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return value


def _positive_float(text: str) -> float:
    """An argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}") from None
    if not (value > 0.0 and value < float("inf")):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
    return value


def _int_list(text: str) -> str:
    """An argparse type: comma-separated integers >= 1 (kept as text for the benchmark scripts)."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts or not all(p.isdigit() and int(p) >= 1 for p in parts):
        raise argparse.ArgumentTypeError(f"must be comma-separated integers >= 1, got {text!r}")
    return ",".join(str(int(p)) for p in parts)


def _check_device(parser: argparse.ArgumentParser, device: str | None) -> None:
    """Exit with a usage error when Warp does not know ``device`` on this machine."""
    if device is None:
        return
    import warp as wp

    _quiet_warp()
    try:
        wp.get_device(device)
    except Exception:
        available = ", ".join(str(d) for d in wp.get_devices()) or "none"
        parser.error(f"argument --device: {device!r} is not a Warp device on this machine (available: {available})")


def _quiet_warp() -> None:
    """Silence Warp's start-up banner and module-load log lines."""
    import warp as wp

    wp.config.quiet = True  # Warp < 1.19
    wp.config.log_level = getattr(wp, "LOG_WARNING", 30)  # Warp >= 1.19


# ----------------------------------------------------------------------------------------------
# Progress


def progress_factory(enabled: bool | None, desc: str, unit: str = "frame") -> Callable | None:
    """A progress-bar factory ``make(total) -> advance(n)``, or ``None`` when disabled.

    Uses ``tqdm`` when it is installed and a small built-in bar on stderr otherwise; ``advance(n)``
    adds ``n`` units and ``advance(0)`` closes the bar. ``enabled=None`` means "when stderr is a
    terminal".
    """
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        return None

    def make(total: int | None) -> Callable[[int], None]:
        try:
            from tqdm import tqdm
        except ImportError:
            return SimpleProgress(total, desc, unit).advance
        bar = tqdm(total=total, desc=desc, unit=unit, leave=False, file=sys.stderr)

        def advance(n: int) -> None:
            if n:
                bar.update(n)
            else:
                bar.close()

        return advance

    return make


class SimpleProgress:
    """A dependency-free progress bar on a stream (stderr by default), redrawn at most 10 times a second.

    Args:
        total: units expected (``None`` when unknown: only the count is shown).
        desc: label before the bar.
        unit: name of one unit.
        stream: text stream to draw on.
    """

    def __init__(self, total: int | None, desc: str, unit: str = "frame", stream=None):
        self.total = total
        self.desc = desc
        self.unit = unit
        self.stream = sys.stderr if stream is None else stream
        self.done = 0
        self._start = time.perf_counter()
        self._drawn = 0.0

    def line(self) -> str:
        """The bar as one line of text, e.g. ``demo [#####-----] 45/90 frames 12.3 frames/s``."""
        elapsed = max(time.perf_counter() - self._start, 1.0e-9)
        rate = f"{self.done / elapsed:.1f} {self.unit}s/s"
        if self.total:
            width = 24
            fill = min(width, int(width * self.done / self.total))
            return f"{self.desc} [{'#' * fill}{'-' * (width - fill)}] {self.done}/{self.total} {self.unit}s {rate}"
        return f"{self.desc} {self.done} {self.unit}s {rate}"

    def advance(self, n: int) -> None:
        """Add ``n`` units and redraw; ``n = 0`` draws the final state and ends the line."""
        self.done += n
        now = time.perf_counter()
        if n and now - self._drawn < 0.1 and self.done != self.total:
            return
        self._drawn = now
        self.stream.write("\r" + self.line())
        if not n:
            self.stream.write("\n")
        self.stream.flush()


# ----------------------------------------------------------------------------------------------
# Finding the examples and benchmarks


def _checkout_root() -> Path:
    """The folder above the installed ``newton_tendon`` package (the repository root in a checkout)."""
    return Path(__file__).resolve().parents[1]


def examples_package():
    """Import and return ``newton_tendon.examples``, the examples that ship inside the package (as
    ``newton.examples`` does), so a plain install can run them with ``newton-tendon run NAME`` or
    ``python -m newton_tendon.examples.NAME``."""
    return importlib.import_module("newton_tendon.examples")


def example_names(package=None) -> list[str]:
    """Names of the runnable example modules (every ``newton_tendon/examples/*.py`` not starting with ``_``), sorted."""
    package = examples_package() if package is None else package
    names = set()
    for folder in getattr(package, "__path__", []):
        for path in Path(folder).glob("*.py"):
            if not path.name.startswith("_"):
                names.add(path.stem)
    return sorted(names)


def example_description(name: str, package=None) -> str:
    """The first line of an example module's docstring, read without importing it."""
    package = examples_package() if package is None else package
    for folder in getattr(package, "__path__", []):
        path = Path(folder) / f"{name}.py"
        if path.exists():
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
            return doc.strip().splitlines()[0] if doc.strip() else ""
    raise CliError(f"no example named {name!r}")


def example_doc(name: str, package=None) -> str:
    """The whole docstring of an example module, read without importing it."""
    package = examples_package() if package is None else package
    for folder in getattr(package, "__path__", []):
        path = Path(folder) / f"{name}.py"
        if path.exists():
            return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    raise CliError(f"no example named {name!r}")


def benchmarks_dir() -> Path:
    """The repository's ``benchmarks/`` folder (scripts, not an installed package).

    Raises:
        CliError: the folder is missing (an installation without the repository files).
    """
    for base in (Path.cwd(), _checkout_root()):
        folder = base / "benchmarks"
        if (folder / "_common.py").exists():
            return folder
    raise CliError(
        "cannot find the benchmarks: they ship in the repository's benchmarks/ folder, which this "
        "installation lacks; run from a checkout"
    )


def _load_script(path: Path):
    """Import a benchmark script by path under a private module name; returns the module."""
    name = f"_newton_tendon_bench_{path.stem}"
    if name in sys.modules:
        return sys.modules[name]
    folder = str(path.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # the scripts import their sibling _common
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


# ----------------------------------------------------------------------------------------------
# Commands


def _cmd_demo(args, parser) -> int:
    _quiet_warp()
    _check_device(parser, args.device)
    from .demo import format_summary, run_demo

    print("newton-tendon demo: routed cables (capstan, hanging load) and a transmission tendon")
    summary = run_demo(
        worlds=args.worlds,
        seconds=args.seconds,
        solver=args.solver,
        device=args.device,
        out_dir=args.out,
        usd=not args.no_usd,
        pictures=not args.no_pictures,
        progress=progress_factory(args.progress, "demo"),
    )
    print(format_summary(summary))
    print(f"Outputs in {args.out}/: {', '.join(summary['files'])}")
    for note in summary.get("notes", []):
        print(f"Note: {note}")
    return 0 if all(summary["checks"].values()) else 1


@contextlib.contextmanager
def _instrument(example_class, total: int | None, make_progress) -> Iterator[dict]:
    """Wrap ``example_class.step`` for the duration: count frames, time them, tick a progress bar.

    Yields a dictionary that receives ``example`` (the instance that stepped), ``frames`` and
    ``step_s`` (wall time inside ``step`` [s]).
    """
    stats: dict = {"example": None, "frames": 0, "step_s": 0.0}
    if example_class is None or not callable(getattr(example_class, "step", None)):
        yield stats
        return
    own = "step" in example_class.__dict__
    original = example_class.__dict__["step"] if own else None
    inherited = example_class.step
    advance = make_progress(total) if make_progress is not None else None

    def step(self, *a, **k):
        t0 = time.perf_counter()
        result = inherited(self, *a, **k)
        stats["step_s"] += time.perf_counter() - t0
        stats["example"] = self
        stats["frames"] += 1
        if advance is not None:
            advance(1)
        return result

    example_class.step = step
    try:
        yield stats
    finally:
        if own:
            example_class.step = original
        else:
            del example_class.step
        if advance is not None:
            advance(0)


def _resolve_example(name: str, names: list[str]) -> str | None:
    """Accept ``cable_capstan``, ``newton_tendon.examples.cable_capstan``, ``examples.cable_capstan``,
    ``cable_capstan.py`` and ``newton_tendon/examples/cable_capstan.py``."""
    candidate = name.replace("\\", "/").split("/")[-1]
    candidate = candidate.removesuffix(".py").removeprefix("newton_tendon.").removeprefix("examples.")
    return candidate if candidate in names else None


def scene_class(module):
    """The class an example module steps: ``Example`` (scene examples) or ``Env`` (RL environments), or None."""
    for attr in ("Example", "Env"):
        cls = getattr(module, attr, None)
        if isinstance(cls, type) and callable(getattr(cls, "step", None)):
            return cls
    return None


def example_options(module) -> set[str]:
    """The long options an example's ``main(argv)`` accepts, read from its ``--help`` text."""
    import contextlib
    import io as _io
    import re

    text = _io.StringIO()
    with contextlib.redirect_stdout(text), contextlib.redirect_stderr(_io.StringIO()):
        try:
            module.main(["--help"])
        except SystemExit:
            pass
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", text.getvalue())) - {"--help"}


def _cmd_run(args, parser) -> int:
    package = examples_package()
    names = example_names(package)
    name = _resolve_example(args.example, names)
    if name is None:
        parser.error(f"unknown example {args.example!r}; choose from: {', '.join(names)} (see: {PROG} list)")
    _check_device(parser, args.device)
    _quiet_warp()
    module = importlib.import_module(f"{package.__name__}.{name}")
    main = getattr(module, "main", None)
    if not callable(main):
        raise CliError(f"example {name!r} has no main(argv) function")
    accepted = example_options(module)
    argv: list[str] = []
    # --frames means the example's unit of progress: frames, or env steps for the RL environments.
    frames_option = "--frames" if "--frames" in accepted else "--steps" if "--steps" in accepted else None
    for option, target in (
        ("frames", frames_option),
        ("worlds", "--worlds"),
        ("solver", "--solver"),
        ("device", "--device"),
    ):
        value = getattr(args, option)
        if value is None:
            continue
        if target is None or target not in accepted:
            parser.error(
                f"argument --{option}: example {name!r} does not take it (it takes: {' '.join(sorted(accepted))})"
            )
        argv += [target, str(value)]
    if "--out" in accepted:
        argv += ["--out", str(Path(args.out) / name)]
    print(f"{PROG} run {name} {' '.join(argv)}".rstrip())
    cls = scene_class(module)
    with _instrument(cls, args.frames, progress_factory(args.progress, name)) as stats:
        try:
            main(argv)
        except SystemExit as exc:  # the example's own argument parser said no
            code = exc.code if isinstance(exc.code, int) else 1
            if code:
                return code
        except AssertionError as exc:
            print(f"{PROG} run: error: {name}: test_final failed: {exc}", file=sys.stderr)
            return 1
    example = stats["example"]
    if example is not None and stats["frames"] and stats["step_s"] > 0.0:
        worlds = getattr(example, "world_count", 1)
        substeps = getattr(example, "substeps", 1)
        rate = worlds * substeps * stats["frames"] / stats["step_s"]
        print(
            f"{name}: {stats['frames']} frames x {substeps} steps in {stats['step_s']:.2f} s on "
            f"{worlds} world(s): {rate:,.0f} world-steps/s (first frame includes kernel loading)"
        )
    return 0


def _cmd_list(args, parser) -> int:
    package = examples_package()
    names = example_names(package)
    width = max(len(n) for n in names) if names else 0
    print(f"{len(names)} examples ({PROG} run NAME [--solver xpbd|vbd] [--worlds N] [--frames N] [--device D]):")
    for name in names:
        print(f"  {name:<{width}}  {example_description(name, package)}")
    return 0


def _cmd_bench(args, parser) -> int:
    _check_device(parser, args.device)
    folder = benchmarks_dir()
    _quiet_warp()
    common = ["--device", args.device or "cpu", "--solver", args.solver]
    for option in ("worlds", "steps", "iterations"):
        value = getattr(args, option)
        if value is not None:
            common += [f"--{option}", str(value)]
    run_all = folder / "run_all.py"
    if args.suite == "all" and run_all.exists() and not args.scripts:
        runs = [(run_all, _run_all_argv(args))]
    else:
        suites = list(BENCH_SUITES) if args.suite == "all" else [args.suite]
        runs = [(folder / f"bench_{suite}.py", []) for suite in suites]
    for path, extra in runs:
        if not path.exists():
            raise CliError(f"benchmark script {path} is missing")
        module = _load_script(path)
        argv = common + extra
        if path != run_all:
            if args.no_newton and _takes_option(module, "--no-newton"):
                argv.append("--no-newton")
            if args.scenes is not None and _takes_option(module, "--scenes"):
                argv += ["--scenes", args.scenes]
        print(f"== {path.name} {' '.join(argv)}", flush=True)
        try:
            module.main(argv)
        except SystemExit as exc:  # the script's own parser said no (message already printed)
            code = exc.code if isinstance(exc.code, int) else 1
            if code:
                return code
    return 0


def _run_all_argv(args) -> list[str]:
    """The options that only ``benchmarks/run_all.py`` takes."""
    argv = ["--out", str(Path(args.out) / "bench")]
    if args.scenes is not None:
        argv += ["--scenes", args.scenes]
    if args.repeats is not None:
        argv += ["--repeats", str(args.repeats)]
    if args.no_newton:
        argv.append("--no-newton")
    if args.quick:
        argv += ["--no-cold", "--no-profile"]
    return argv


def _takes_option(module, option: str) -> bool:
    """Whether a script's source mentions ``option`` (its parser then accepts it)."""
    try:
        return option in Path(module.__file__).read_text(encoding="utf-8")
    except OSError:
        return False


def _cmd_convert(args, parser) -> int:
    src = Path(args.input)
    if not src.is_file():
        parser.error(f"argument IN: {args.input!r} is not a file")
    dst = Path(args.output)
    if dst.resolve() == src.resolve():
        parser.error("arguments IN and OUT name the same file")
    if dst.parent and not dst.parent.exists():
        parser.error(f"argument OUT: folder {str(dst.parent)!r} does not exist")
    try:
        from . import io as nt_io
    except ImportError as exc:
        raise CliError(f"convert needs newton_tendon.io, which this installation lacks ({exc})") from None
    _quiet_warp()
    try:
        builder = nt_io.convert(str(src), str(dst))
    except (ValueError, TypeError, OSError, RuntimeError) as exc:
        raise CliError(f"cannot convert {str(src)!r} to {str(dst)!r}: {exc}") from None
    counts = [
        f"{getattr(builder, attr)} {what}"
        for attr, what in (
            ("body_count", "bodies"),
            ("joint_count", "joints"),
            ("tendon_count", "routed tendons"),
            ("transmission_count", "transmission tendons"),
        )
        if isinstance(getattr(builder, attr, None), int)
    ]
    print(f"converted {src} -> {dst}" + (f" ({', '.join(counts)})" if counts else ""))
    return 0


# ----------------------------------------------------------------------------------------------
# Parser


def _add_progress(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="show a progress bar on stderr (tqdm if installed; default: when stderr is a terminal)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The ``newton-tendon`` argument parser with its subcommands."""
    from . import __version__

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="GPU-batched rigid bodies driven by tendons (routed cables and transmission tendons) on "
        "NVIDIA Warp. Without a command, runs the demo.",
        epilog=f"'{PROG} COMMAND --help' describes each command.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser(
        "demo",
        help="the demo (default): capstan, hanging load and transmission tendon in many worlds",
        description="Steps a capstan machine and a hanging load on routed cables and a load on a transmission "
        "tendon in many worlds; prints measured versus expected numbers and world-steps per second; writes "
        "summary.json, history.npz, demo.usda and PNG pictures into --out.",
    )
    demo.add_argument("--worlds", type=_positive_int, default=16, help="number of worlds (default: %(default)s)")
    demo.add_argument("--seconds", type=_positive_float, default=1.5, help="simulated time [s] (default: %(default)s)")
    demo.add_argument("--solver", choices=SOLVERS, default="xpbd", help="solver (default: %(default)s)")
    demo.add_argument("--device", default=None, help="Warp device, e.g. cpu or cuda:0 (default: Warp's default)")
    demo.add_argument("--out", default=DEFAULT_OUT, help="output folder (default: %(default)s)")
    demo.add_argument("--no-usd", action="store_true", help="do not write the USD recording")
    demo.add_argument("--no-pictures", action="store_true", help="do not write the PNG plots and snapshot")
    _add_progress(demo)
    demo.set_defaults(handler=_cmd_demo, parser_=demo)

    run = sub.add_parser(
        "run",
        help="run one example from newton_tendon.examples",
        description="Runs an example module of newton_tendon/examples/ (see 'list'): it prints its own table and runs its "
        "physics check when the run is long enough. Options left out keep the example's defaults.",
    )
    run.add_argument("example", metavar="EXAMPLE", help="example name, e.g. cable_capstan (see 'list')")
    run.add_argument("--solver", choices=SOLVERS, default=None, help="solver (default: the example's, xpbd)")
    run.add_argument("--worlds", type=_positive_int, default=None, help="replicated worlds (default: 1)")
    run.add_argument("--frames", type=_positive_int, default=None, help="frames to run (default: the example's)")
    run.add_argument("--device", default=None, help="Warp device, e.g. cpu or cuda:0 (default: Warp's default)")
    run.add_argument(
        "--out",
        default=DEFAULT_OUT,
        help="folder under which examples that write outputs get a folder of their own (default: %(default)s)",
    )
    _add_progress(run)
    run.set_defaults(handler=_cmd_run, parser_=run)

    lst = sub.add_parser("list", help="list the examples", description="Lists the examples with one line each.")
    lst.set_defaults(handler=_cmd_list, parser_=lst)

    bench = sub.add_parser(
        "bench",
        help="run the throughput benchmarks",
        description="Runs benchmarks/ (world-steps per second): all suites (benchmarks/run_all.py when present) "
        "or one of " + ", ".join(BENCH_SUITES) + ". Needs a checkout (benchmarks/ is not installed).",
    )
    bench.add_argument(
        "--suite", choices=("all", *BENCH_SUITES), default="all", help="which benchmark (default: %(default)s)"
    )
    bench.add_argument("--worlds", type=_int_list, default=None, help="comma-separated world counts, e.g. 1,64,1024")
    bench.add_argument("--steps", type=_positive_int, default=None, help="timed steps per row")
    bench.add_argument("--iterations", type=_positive_int, default=None, help="solver iterations per step")
    bench.add_argument(
        "--solver", choices=(*SOLVERS, "both"), default="both", help="solver(s) to time (default: %(default)s)"
    )
    bench.add_argument("--device", default=None, help="Warp device, e.g. cpu or cuda:0 (default: cpu)")
    bench.add_argument("--scenes", default=None, help="comma-separated scene names of the chosen script")
    bench.add_argument(
        "--repeats", type=_positive_int, default=None, help="run_all.py: timed chunks per row, the fastest counts"
    )
    bench.add_argument(
        "--quick",
        action="store_true",
        help="run_all.py: skip the cold-kernel-cache start (minutes: it recompiles every kernel) and the "
        "launch/byte profile",
    )
    bench.add_argument(
        "--no-newton", action="store_true", help="skip the side-by-side with newton even when it is installed"
    )
    bench.add_argument(
        "--scripts", action="store_true", help="run the bench_*.py scripts one by one even if run_all.py exists"
    )
    bench.add_argument(
        "--out", default=DEFAULT_OUT, help="run_all.py writes results.json and results.md into OUT/bench"
    )
    bench.set_defaults(handler=_cmd_bench, parser_=bench)

    convert = sub.add_parser(
        "convert",
        help="read an MJCF, URDF, USD or native scene and write it in the native format (.json)",
        description=(
            "Reads IN (its format from the extension: .xml/.mjcf MJCF, .urdf URDF with the urdf extra, "
            ".usd/.usda/.usdc/.usdz USD, .json native) and writes it to OUT in the native JSON format "
            "(OUT must end in .json; no other output format is written). Nothing is written if IN "
            "cannot be read (newton_tendon.io.convert)."
        ),
    )
    convert.add_argument("input", metavar="IN", help="input file: .xml/.mjcf, .urdf, .usd/.usda/.usdc/.usdz or .json")
    convert.add_argument("output", metavar="OUT", help="output file, native format: must end in .json")
    convert.set_defaults(handler=_cmd_convert, parser_=convert)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run ``newton-tendon`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status.

    The demo is the default: no arguments, or options only, run ``demo``.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version")):
        argv = ["demo", *argv]
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version or a usage error (already printed)
        return exc.code if isinstance(exc.code, int) else 1
    try:
        return args.handler(args, args.parser_)
    except SystemExit as exc:  # a usage error found after parsing (already printed)
        return exc.code if isinstance(exc.code, int) else 1
    except CliError as exc:
        print(f"{PROG} {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except (ValueError, TypeError) as exc:  # the library's validation names the object and the rule
        print(f"{PROG} {args.command}: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG} {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
