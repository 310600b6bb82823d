"""``cdk-triton init``: parse, call :func:`~cdk_triton.scaffold.project.init_project`, name what was written."""

from __future__ import annotations

import argparse
from typing import Any

from cdk_triton.config import modes
from cdk_triton.scaffold.project import DEFAULT_MODE, init_project


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


def cmd_init(args: argparse.Namespace) -> int:
    result = init_project(args.directory, mode=args.mode, force=args.force)
    print(f"wrote a {modes.get(result.mode).label} cdk-triton project in {result.directory}:")
    for name in result.files:
        print(f"  {name}")
    print(f"next: cd {result.directory} && make demo")
    return 0
