"""The site as `make docs` builds it, once per test session (tests/unit/test_docs*.py share it).

The command is read from the Makefile's ``docs`` recipe, with the variables the Makefile exports, so the
tests run exactly what a reader runs; only the output folder differs (``-d``, a temp folder).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS_TOOLS = ("mkdocs", "material", "mkdocstrings_handlers.python")


@dataclass(frozen=True)
class Build:
    site: Path
    returncode: int
    output: str  # stdout + stderr, as the reader sees them


def missing_tools() -> list[str]:
    out = []
    for module in DOCS_TOOLS:
        try:
            if importlib.util.find_spec(module) is None:
                out.append(module)
        except ModuleNotFoundError:
            out.append(module)
    return out


def docs_recipe(makefile: str | None = None) -> tuple[dict[str, str], list[str]]:
    """(environment, argv) of the Makefile's ``docs`` recipe: its ``NAME=value`` prefixes and the
    Makefile's plain ``export NAME := value`` lines; ``$(PY)`` is this interpreter."""
    text = makefile if makefile is not None else (ROOT / "Makefile").read_text()
    env = {
        m.group(1): m.group(2).strip()
        for m in re.finditer(r"^export (\w+) :?= ([^$\n]*)$", text, re.M)
        if m.group(2).strip()
    }
    rule = re.search(r"^docs:.*\n((?:\t.*\n)+)", text, re.M)
    if rule is None:
        raise AssertionError("the Makefile has no docs recipe")
    lines = [ln.strip() for ln in rule.group(1).splitlines() if ln.strip()]
    if len(lines) != 1:
        raise AssertionError(f"the docs recipe should be one command, not {lines}")
    words = shlex.split(lines[0])
    while words and re.fullmatch(r"\w+=.*", words[0]):
        name, value = words.pop(0).split("=", 1)
        env[name] = value
    argv = [sys.executable if w == "$(PY)" else w for w in words]
    return env, argv


def build(config_dir: Path = ROOT, site: Path | None = None) -> Build:
    """Run the docs recipe in ``config_dir`` into ``site`` (a new temp folder by default)."""
    env, argv = docs_recipe()
    site = site or Path(tempfile.mkdtemp(prefix="cdk-triton-site-"))
    proc = subprocess.run(
        [*argv, "-d", str(site)],
        cwd=config_dir,
        capture_output=True,
        text=True,
        env={**os.environ, **env, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    return Build(site, proc.returncode, proc.stdout + proc.stderr)


@functools.cache
def site() -> Build:
    """The repository's site, built once per session."""
    return build()


def guide_pages(site_dir: Path) -> list[Path]:
    return sorted((site_dir / "guides").glob("*/index.html"))
