"""``cdk-triton demo``: parse, run the stages (``stages.run_demo``), print one line per stage."""

from __future__ import annotations

import argparse
from pathlib import Path

from cdk_triton.demo.stages import DemoReport, run_demo


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("demo", help="build, synthesize, check, serve and invoke the example app offline")
    p.add_argument("--root", default=".", help="repository root holding app.py and build/ (default: .)")
    p.add_argument("--skip-serve", action="store_true", help="stop after synth and checks")
    p.add_argument(
        "--verbose",
        action="store_true",
        help="the builds print each warning's full detail (e.g. an advisory warning's CVE list) under its line",
    )
    p.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    report = run_demo(Path(args.root), skip_serve=args.skip_serve, verbose=args.verbose)
    _print_report(report)
    return 1 if report.failed else 0


def _print_report(report: DemoReport) -> None:
    print("\n== cdk-triton demo ==")
    for s in report.stages:
        print(f"[{s.status:>7}] {s.name} ({s.seconds:.1f} s)")
        for line in s.detail:
            print(f"          {line}")
    if report.missing:
        print(f"not yet available in this version: {', '.join(report.missing)}")
