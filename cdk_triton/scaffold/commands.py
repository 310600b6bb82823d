"""``cdk-triton init`` (parse, call :func:`~cdk_triton.scaffold.project.init_project`, name what was written)
and ``cdk-triton advisories`` (a release's NVIDIA advisories with their sources: the detail every short
advisory warning of build and synth points to)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from cdk_triton.config import default_release, modes, tables
from cdk_triton.scaffold.project import DEFAULT_MODE, check_release_string, init_project


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "init",
        help="scaffold a new project: models.yaml and a model, the CDK app, make demo / make test",
        description="Write a new cdk-triton project (refuses a non-empty directory unless --force).",
    )
    p.add_argument(
        "directory", nargs="?", default=".", help="where to write (default: the current directory)"
    )
    p.add_argument(
        "--mode",
        default=DEFAULT_MODE,
        help="the hosting mode, a word of the mode registry: single (SingleModel): one ONNX model behind a "
        "single-model endpoint; multi (MultiModel): ONNX and TorchScript behind a multi-model endpoint "
        f"(default: {DEFAULT_MODE})",
    )
    p.add_argument(
        "--force", action="store_true", help="write into a non-empty directory, replacing same-named files"
    )
    p.set_defaults(func=cmd_init)
    register_advisories(subparsers)


def register_advisories(subparsers: Any) -> None:
    """Add the ``advisories`` subcommand."""
    p = subparsers.add_parser(
        "advisories",
        help="list a Triton release's NVIDIA advisories with their fixes and sources (what build and synth "
        "warnings count)",
        description="List the NVIDIA security advisories affecting a Triton release, by severity, each with "
        "the release that fixes it, the first SageMaker image with the fix, whether a SageMaker deployment "
        "reaches it, and its source and the date it was read; then what cdk-triton acknowledges for its "
        "default release and the release `cdk-triton init` declares.",
    )
    p.add_argument(
        "--release",
        default=tables.DEFAULT_TRITON_VERSION,
        metavar="R",
        help=f"the Triton release, YY.MM (default: cdk-triton's default release, {tables.DEFAULT_TRITON_VERSION})",
    )
    p.add_argument(
        "--region",
        default=None,
        help="the AWS region whose SageMaker images count as fixed (default: any region)",
    )
    p.add_argument("--json", action="store_true", help="print the listing as JSON")
    p.set_defaults(func=cmd_advisories)


def cmd_init(args: argparse.Namespace) -> int:
    result = init_project(args.directory, mode=args.mode, force=args.force)
    print(f"wrote a {modes.get(result.mode).label} cdk-triton project in {result.directory}:")
    for name in result.files:
        print(f"  {name}")
    print(f"next: cd {result.directory} && make demo")
    return 0


def cmd_advisories(args: argparse.Namespace) -> int:
    check_release_string(args.release)
    data = default_release.listing(args.release, args.region)
    print(
        json.dumps(data, indent=2) if args.json else default_release.render_listing(data),
        end="\n" if args.json else "",
    )
    return 0
