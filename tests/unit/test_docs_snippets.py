"""Every code block of the site marked runnable runs, against a built copy of the repository's example.

The convention (docs/contributing/index.md, "Runnable snippets"): the HTML comment ``<!-- runnable -->``
alone on the line before a fenced ``python`` or ``bash`` block. Sybil parses the pages with the parser
below; each block is one test, named by its page and line. Blocks inside another fence (a page showing the
convention itself) are not runnable.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
MARKER = "<!-- runnable -->"
LANGUAGES = ("python", "bash")
#: what a copy of the example needs: the declaration and its factories, the apps and the CDK settings
EXAMPLE_FILES = ("build", "app.py", "cdk.json", "pipeline_app.py", "promotion_app.py", "package.json")
IGNORED = shutil.ignore_patterns("out", "__pycache__", ".noop-stamp", "cdk.out*")

sybil = pytest.importorskip("sybil", reason="sybil missing: pip install -r requirements.txt")


@dataclass(frozen=True)
class Snippet:
    language: str
    code: str


def runnable_blocks(text: str) -> Iterator[tuple[int, int, Snippet]]:
    """(start, end, snippet) of each runnable block: the marker, then a fence opened on the next line."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln))
    fence: str | None = None
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        opener = re.match(r"^(`{3,}|~{3,})(.*)$", stripped)
        if fence is None and stripped == MARKER and i + 1 < len(lines):
            m = re.match(r"^(`{3,})\s*(\w+)\s*$", lines[i + 1].strip())
            if m and m.group(2) in LANGUAGES:
                close = next((j for j in range(i + 2, len(lines)) if lines[j].strip() == m.group(1)), None)
                if close is None:
                    raise ValueError(f"a runnable block at line {i + 2} is never closed")
                yield offsets[i], offsets[close + 1], Snippet(m.group(2), "".join(lines[i + 2 : close]))
                i = close + 1
                continue
        if opener:
            if fence is None:
                fence = opener.group(1)
            elif stripped == fence:
                fence = None
        i += 1


def parse(document: sybil.Document) -> Iterator[sybil.Region]:
    for start, end, snippet in runnable_blocks(document.text):
        yield sybil.Region(start, end, snippet, _evaluate)


def _evaluate(example: sybil.Example) -> str | None:
    snippet: Snippet = example.parsed
    project: Path = example.namespace["project"]
    where = f"{example.path}:{example.line}"
    if snippet.language == "python":
        return _run_python(snippet.code, project, where)
    proc = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", snippet.code],
        cwd=project,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=240,
    )
    if proc.returncode != 0:
        return (
            f"{where}: the bash block exited {proc.returncode}\n"
            f"--- block\n{snippet.code}--- output\n{(proc.stdout + proc.stderr)[-4000:]}"
        )
    return None


def _run_python(code: str, project: Path, where: str) -> str | None:
    """In this process (the suite's jsii runtime and imports are shared: a fresh interpreter per block
    costs seconds), in the example's folder, as ``__main__``."""
    try:
        with contextlib.chdir(project), contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, where, "exec"), {"__name__": "__main__"})
    except Exception:
        return f"{where}: the python block raised\n--- block\n{code}--- traceback\n{traceback.format_exc()[-4000:]}"
    return None


def _env() -> dict[str, str]:
    bins = [str(Path(sys.executable).parent), str(ROOT / "node_modules" / ".bin")]
    return {
        **os.environ,
        "PATH": os.pathsep.join([*bins, os.environ.get("PATH", "")]),
        "PYTHONPATH": str(ROOT),
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
        "CDK_TRITON_WHEELHOUSE": os.environ.get("CDK_TRITON_WHEELHOUSE", str(ROOT / ".wheelhouse")),
    }


PAGES = sorted(p for p in DOCS.rglob("*.md"))
SYBIL = sybil.Sybil(parsers=[parse], path=str(DOCS), patterns=["**/*.md"])
EXAMPLES = [
    pytest.param(page, i, id=f"{page.relative_to(DOCS)}:{ex.line}")
    for page in PAGES
    for i, ex in enumerate(SYBIL.parse(page))
]


@pytest.fixture(scope="session")
def example_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the example, built once into ``build/out`` (where ``cdk-triton build --config
    build/models.yaml`` writes, so a block running it is the no-op rebuild)."""
    project = tmp_path_factory.mktemp("docs-example")
    for name in EXAMPLE_FILES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, project / name, ignore=IGNORED)
        elif src.exists():
            shutil.copy2(src, project / name)
    if (ROOT / "node_modules").exists():
        (project / "node_modules").symlink_to(ROOT / "node_modules")
    from cdk_triton.builder import run_build  # in process: the suite has torch imported already

    with contextlib.chdir(project):
        run_build(project / "build" / "models.yaml", out_dir=project / "build" / "out", progress=False)
    return project


@pytest.mark.skipif(not EXAMPLES, reason="no page has a runnable block")
@pytest.mark.parametrize(("page", "index"), EXAMPLES)
def test_runnable_block(page: Path, index: int, example_project: Path) -> None:
    document = SYBIL.parse(page)
    document.namespace["project"] = example_project
    example = list(document)[index]
    example.evaluate()


def test_the_parser_finds_marked_blocks_only() -> None:
    text = (
        "# Page\n\n```bash\nnot marked\n```\n\n<!-- runnable -->\n```bash\necho one\n```\n\n"
        "<!-- runnable -->\n```python\nprint(2)\n```\n\n<!-- runnable -->\n```yaml\nkey: 3\n```\n\n"
        "````markdown\n<!-- runnable -->\n```bash\nshown, not run\n```\n````\n"
    )
    found = [s for _, _, s in runnable_blocks(text)]
    assert found == [Snippet("bash", "echo one\n"), Snippet("python", "print(2)\n")]


@pytest.mark.parametrize(
    ("block", "failure"),
    [
        ("```bash\necho before\nfalse\n```", r"page\.md:3: the bash block exited 1"),
        (
            "```python\nimport pathlib\nassert pathlib.Path('here.txt').exists()\n```",
            r"page\.md:3: the python block raised",
        ),
    ],
)
def test_a_failing_block_fails_with_its_page_and_line(tmp_path: Path, block: str, failure: str) -> None:
    page = tmp_path / "page.md"
    page.write_text(f"# P\n\n<!-- runnable -->\n{block}\n")
    document = sybil.Sybil(parsers=[parse], path=str(tmp_path)).parse(page)
    document.namespace["project"] = tmp_path
    (example,) = list(document)
    with pytest.raises(sybil.example.SybilFailure, match=failure):
        example.evaluate()
    (tmp_path / "here.txt").write_text("the python block runs in the project folder")
    if "python" in block:
        assert example.evaluate() is None
