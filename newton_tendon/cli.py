"""The ``newton-tendon`` command line."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="newton-tendon", description="newton_tendon command line")
    sub = parser.add_subparsers(dest="command")
    demo = sub.add_parser("demo", help="run the demo scene, print a summary and write outputs (default)")
    demo.add_argument("--worlds", type=int, default=4, help="number of worlds (default 4)")
    demo.add_argument("--seconds", type=float, default=2.0, help="simulated time [s] (default 2)")
    demo.add_argument("--dt", type=float, default=1.0 / 240.0, help="time step [s]")
    demo.add_argument("--device", default=None, help="Warp device, e.g. cpu or cuda:0 (default: Warp's default)")
    demo.add_argument("--out", default="demo_output", help="output folder (default demo_output)")
    argv = list(sys.argv[1:] if argv is None else argv)
    # The demo is the default command: options alone go to it.
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv = ["demo", *argv]
    args = parser.parse_args(argv)
    if args.worlds < 1 or args.seconds <= 0.0 or args.dt <= 0.0:
        parser.error("--worlds must be >= 1, --seconds and --dt > 0")

    import warp as wp

    wp.config.quiet = True
    from .demo import format_summary, run_demo

    summary = run_demo(worlds=args.worlds, seconds=args.seconds, dt=args.dt, device=args.device, out_dir=args.out)
    print("newton-tendon demo: pendulum chains swinging onto the ground")
    print(format_summary(summary))
    print(f"outputs written to {args.out}/ (summary.json, trajectory.npz)")
    return 0 if summary["finite"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
