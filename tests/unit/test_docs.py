"""The site is checked as readers get it: `make docs` exactly (``mkdocs build --strict``, no ``-q``), every
warning fails, every internal link and anchor is validated, and the build imports nothing from ``tests/``.

Skipped only when the docs tools are missing (requirements.txt installs them: CI has them).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.unit import docs_site

ROOT = docs_site.ROOT
pytestmark = pytest.mark.skipif(
    bool(docs_site.missing_tools()),
    reason=f"docs tools missing ({', '.join(docs_site.missing_tools())}): pip install -r requirements.txt",
)


def test_make_docs_is_a_strict_build_that_shows_its_warnings() -> None:
    env, argv = docs_site.docs_recipe()
    assert argv[1:] == ["-m", "mkdocs", "build", "--strict"], argv
    assert not {"-q", "--quiet"} & set(argv)
    # the decision of docs/contributing/docs-stack.md: Material's end-of-life banner is silenced, in the
    # Makefile (what readers run) and so here
    assert env.get("NO_MKDOCS_2_WARNING") == "1"
    assert "NO_MKDOCS_2_WARNING" in (ROOT / "docs" / "contributing" / "docs-stack.md").read_text()


def test_the_recipe_reader_takes_prefixes_and_exports() -> None:
    env, argv = docs_site.docs_recipe(
        "export A := 1\nexport P := $(X)\ndocs: install\n\tB=2 $(PY) -m mkdocs build\n"
    )
    assert env == {"A": "1", "B": "2"} and argv == [sys.executable, "-m", "mkdocs", "build"]
    with pytest.raises(AssertionError, match="one command"):
        docs_site.docs_recipe("docs:\n\techo a\n\techo b\n")


def test_the_site_builds_without_a_warning_and_covers_every_page() -> None:
    built = docs_site.site()
    assert built.returncode == 0, built.output[-6000:]
    noisy = [ln for ln in built.output.splitlines() if re.match(r"\s*(WARNING|ERROR)\b", ln)]
    assert not noisy, noisy
    assert "unrecognized relative link" not in built.output
    assert "reaches end of life" not in built.output  # silenced on purpose (docs-stack.md)
    site = built.site
    constructs = (site / "reference" / "constructs" / "index.html").read_text()
    assert 'id="cdk_triton.constructs.TritonEndpoint"' in constructs
    assert "cdk-triton init" in (site / "reference" / "cli" / "index.html").read_text()
    assert "ScaffoldDirectoryNotEmpty" in (site / "reference" / "errors" / "index.html").read_text()
    assert not (site / "guide").exists(), "pages are files under docs/, never cut from the README"
    for page in ROOT.joinpath("docs").rglob("*.md"):
        rel = page.relative_to(ROOT / "docs").with_suffix("")
        html = site / (rel.parent if rel.name == "index" else rel) / "index.html"
        assert html.exists(), f"{page.relative_to(ROOT)} was not rendered"


def _validation_block() -> str:
    text = (ROOT / "mkdocs.yml").read_text()
    block = re.search(r"^validation:\n(?:  .*\n)+", text, re.M)
    assert block, "mkdocs.yml has no validation: block"
    assert "anchors: warn" in block.group(0) and re.search(r"^strict: true$", text, re.M)
    return block.group(0)


def _tiny_site(tmp: Path, link: str) -> docs_site.Build:
    """A two-page site with the repository's strictness and validation settings, one link on its home."""
    (tmp / "docs").mkdir()
    (tmp / "docs" / "index.md").write_text(f"# Home\n\nSee [the other page]({link}).\n")
    (tmp / "docs" / "other.md").write_text("# Other\n\n## A section\n\ntext\n")
    (tmp / "mkdocs.yml").write_text(
        "site_name: t\nstrict: true\n"
        + _validation_block()
        + "nav:\n  - Home: index.md\n  - Other: other.md\n"
    )
    return docs_site.build(config_dir=tmp, site=tmp / "site")


@pytest.mark.parametrize(
    ("link", "finding"),
    [
        ("other.md#no-such-section", "no-such-section"),
        ("gone.md", "gone.md"),
        ("other.md#a-section", None),
    ],
)
def test_a_broken_link_or_anchor_fails_the_build(tmp_path: Path, link: str, finding: str | None) -> None:
    built = _tiny_site(tmp_path, link)
    if finding is None:
        assert built.returncode == 0, built.output
    else:
        assert built.returncode != 0, f"a broken link ({link}) passed the strict build"
        warning = [ln for ln in built.output.splitlines() if ln.startswith("WARNING") and finding in ln]
        assert warning, built.output


def test_the_docs_build_imports_nothing_from_tests() -> None:
    for path in sorted((ROOT / "docs").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            assert not [n for n in names if n == "tests" or n.startswith("tests.")], path
    probe = (
        "import sys; import docs.hooks as h; h.errors_page(); h.cli_page(); h.declaration_page(); "
        "bad = sorted(m for m in sys.modules if m == 'tests' or m.startswith('tests.')); "
        "sys.exit(f'imported {bad}' if bad else 0)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_no_page_links_outside_the_site() -> None:
    """Repository files that are not pages (package READMEs, code) are named as code, not linked: a link
    would leave the site (and break on a published copy)."""
    bad = []
    for page in (ROOT / "docs").rglob("*.md"):
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if target.startswith(("http://", "https://", "#", "mailto:")):
                continue
            path = target.split("#", 1)[0]
            if path and not path.endswith((".md", ".png", ".csv", ".svg")):
                bad.append(f"{page.relative_to(ROOT)}: {target}")
    assert not bad, bad
