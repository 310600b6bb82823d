"""`cdk-triton` command line: parse, call the layers, map errors to exit codes. No logic of its own.

Exit codes: 0 success, 1 a failure while running (build, server), 2 bad input.
Each layer registers its own subcommands (``register(subparsers)``), imported lazily so
``cdk-triton --help`` stays fast and the base install (constructs only) still works.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from cdk_triton.errors import BuildError, CdkTritonError, TritonValidationError, TritonValidationErrors

# subcommand modules; each defines register(subparsers) and sets func=callable(args)->int
_COMMAND_MODULES = (
    "cdk_triton.builder.commands",
    "cdk_triton.local.commands",
    "cdk_triton.tune.commands",
    "cdk_triton.capacity.commands",
    "cdk_triton.demo.commands",
    "cdk_triton.registry.commands",
    "cdk_triton.scaffold.commands",
)

#: subcommands parsed with their own module alone: `cdk-triton build` never imports the other layers
#: (the local endpoint's client pulls in numpy), so a no-op build stays light
_OWN_MODULE = {"build": "cdk_triton.builder.commands"}


def build_parser(modules: Sequence[str] = _COMMAND_MODULES) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cdk-triton",
        description="Build, serve and invoke NVIDIA Triton model repositories for SageMaker.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("cdk_triton"):
                continue  # that layer is not part of this version
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    own = _OWN_MODULE.get(words[0]) if words else None
    parser = build_parser((own,) if own else _COMMAND_MODULES)
    args = parser.parse_args(words)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except TritonValidationError as exc:
        if exc.path is None and not isinstance(exc, TritonValidationErrors):
            exc = exc.at(f"cdk-triton {words[0]}")  # a flag's error: the command line is where it is
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BuildError as exc:
        print(f"build failed: {exc}", file=sys.stderr)
        return 1
    except CdkTritonError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
