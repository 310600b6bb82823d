"""mkdocs hooks: the pages generated from the code, so they cannot drift from it.

- ``guide/*.md``: the README's use cases (``## Use cases``, one page per ``###``), with links into the
  reference; links to files outside the site become code spans.
- ``reference/cli.md``: every ``cdk-triton`` subcommand's ``--help``, from the argparse parser itself.
- ``reference/errors.md``: every layer's error-code catalogue (the tables the package READMEs carry,
  from tests/unit/test_error_catalogues.py's generators).
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

#: words of a use case's text -> the reference page it links to
LINKS = {
    "cdk-triton build": "../reference/cli.md#cdk-triton-build",
    "TritonEndpoint": "../reference/constructs.md#cdk_triton.constructs.TritonEndpoint",
    "models.yaml": "../reference/declaration.md",
    "cdk-triton serve": "../reference/cli.md#cdk-triton-serve",
}


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60]


def use_cases() -> list[tuple[str, str, str]]:
    """(file name, title, markdown) of each README use case."""
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("\n## Use cases\n") :]
    section = section[: section.index("\n## ", 5)]
    pages = []
    for chunk in re.split(r"\n(?=### )", section)[1:]:
        title = chunk.splitlines()[0][4:].strip()
        body = _local_links(chunk.split("\n", 1)[1])
        see = " · ".join(f"[{w}]({target})" for w, target in LINKS.items() if w in body)
        text = f"# {title}\n\n{body}\n\n---\nReference: {see or '[API reference](../reference/index.md)'}\n"
        pages.append((f"guide/{_slug(title)}.md", title, text))
    return pages


def _local_links(text: str) -> str:
    """README links to repository files (not pages of this site) become code spans."""
    return re.sub(r"\[([^\]]+)\]\((?!https?://|#)([^)]+)\)", lambda m: f"{m.group(1)} (`{m.group(2)}`)", text)


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
    from tests.unit import test_error_catalogues as cat

    out = [
        "# Error codes\n",
        "Every error carries a stable code in brackets (`[Code]`), the prop, the value, what is allowed, the fix "
        "and where. One catalogue per layer (`errors.py`), generated here as in the package READMEs.\n",
    ]
    tables = {Path(readme).parent.name: fn for readme, (_, fn) in cat.TABLES.items()}
    for package, codes in cat.OWNED.items():
        table = tables[package]() if package in tables else cat.config_errors.code_table(dict(codes))
        out.append(f"## cdk_triton.{package}\n\n{table}\n")
    return "\n".join(out)


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


def on_config(config: Any) -> Any:
    for entry in config.nav or []:
        if isinstance(entry, dict) and entry.get("Use cases") == "guide/":
            entry["Use cases"] = [{title: path} for path, title, _ in use_cases()]
    return config


def on_files(files: Files, config: Any) -> Files:
    generated = {path: text for path, _, text in use_cases()}
    with redirect_stdout(io.StringIO()):
        generated |= {
            "reference/cli.md": cli_page(),
            "reference/errors.md": errors_page(),
            "reference/declaration.md": declaration_page(),
        }
    for path, text in generated.items():
        files.append(File.generated(config, path, content=text))
    return files
