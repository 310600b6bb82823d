"""mkdocs hooks: the pages generated from the code, so they cannot drift from it.

- ``reference/cli.md``: every ``cdk-triton`` subcommand's ``--help``, from the argparse parser itself.
- ``reference/errors.md``: every layer's error-code catalogue (the tables the package READMEs carry,
  from ``docs/error_tables.py``'s generators).

Every other page is a file under ``docs/`` with a stable address (never cut from headings); the build
imports nothing from ``tests/``.
- ``reference/declaration.md``: each declaration dataclass's YAML keys (its fields), then its API.
"""

from __future__ import annotations

import dataclasses
import io
import re
import sys
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def cli_page() -> str:
    from cdk_triton.cli import build_parser

    parser = build_parser()
    out = [
        "# Command line\n",
        "Generated from the `cdk-triton` argparse parser (`cdk_triton.cli.build_parser`).\n",
    ]
    out.append(f"```text\n{parser.format_help()}```\n")
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, p in sorted(sub.choices.items()):  # type: ignore[attr-defined]
        out.append(f"## cdk-triton {name}\n\n```text\n{p.format_help()}```\n")
    return "\n".join(out)


def errors_page() -> str:
    from docs import error_tables

    out = [
        "# Error codes\n",
        "Every error carries a stable code in brackets (`[Code]`), the prop, the value, what is allowed, the fix "
        "and where. One catalogue per layer (`errors.py`), generated here as in the package READMEs.\n",
    ]
    for package in error_tables.OWNED:
        out.append(f"## cdk_triton.{package}\n\n{_literal_brackets(error_tables.package_table(package))}\n")
    return "\n".join(out)


def _literal_brackets(markdown: str) -> str:
    """Escape ``[`` outside code spans: a catalogue text is prose, never a link (a regex such as
    ``[a-z]([-a-z]*)`` would otherwise read as one)."""
    parts = re.split(r"(`[^`]*`)", markdown)
    return "".join(p if p.startswith("`") else p.replace("[", "\\[") for p in parts)


def declaration_page() -> str:
    import cdk_triton.config.declaration as decl

    out = [
        "# Declaration (`models.yaml`)\n",
        "Every key of `models.yaml` maps one to one onto a field of these dataclasses (`BuildSpec` is the file; "
        "`models:` holds `ModelSpec`s, `endpoints:` `EndpointSpec`s). Generated from the dataclasses.\n",
        "## YAML keys\n",
    ]
    for name in decl.__all__:
        obj: Any = getattr(decl, name)
        if not (isinstance(obj, type) and dataclasses.is_dataclass(obj)):
            continue
        rows = [
            f"| `{f.name}` | `{f.type}` | {'required' if _required(f) else 'optional'} |"
            for f in dataclasses.fields(obj)
        ]
        out.append(f"### `{name}` keys\n\n| key | type | |\n|---|---|---|\n" + "\n".join(rows) + "\n")
    out.append("## API\n\n::: cdk_triton.config.declaration\n")
    return "\n".join(out)


def _required(f: dataclasses.Field[Any]) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def on_files(files: Files, config: Any) -> Files:
    with redirect_stdout(io.StringIO()):
        generated = {
            "reference/cli.md": cli_page(),
            "reference/errors.md": errors_page(),
            "reference/declaration.md": declaration_page(),
        }
    for path, text in generated.items():
        files.append(File.generated(config, path, content=text))
    return files
