"""``bench.report --write``: the performance table goes to every page holding the BENCH markers."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.report import END, PAGES, START, pages_with_table, write_pages


def test_the_docs_page_is_a_target_before_the_readme() -> None:
    assert [p.name for p in PAGES] == ["proven-where.md", "README.md"]
    assert PAGES[0].parent.name == "concepts"


def test_write_refreshes_only_the_pages_with_markers(tmp_path: Path) -> None:
    docs = tmp_path / "proven-where.md"
    readme = tmp_path / "README.md"
    docs.write_text(f"# Proven where\n{START}\nold table\n{END}\ntail\n")
    readme.write_text("# README without a table\n")
    assert write_pages("| new |\n", (docs, readme)) == [docs]
    assert docs.read_text() == f"# Proven where\n{START}\n| new |\n{END}\ntail\n"
    assert readme.read_text() == "# README without a table\n"


def test_no_page_with_markers_is_an_error_naming_the_pages(tmp_path: Path) -> None:
    missing = tmp_path / "proven-where.md"
    with pytest.raises(SystemExit, match="proven-where.md.*markers"):
        write_pages("| t |\n", (missing,))
    assert pages_with_table((missing,)) == []
