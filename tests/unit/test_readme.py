"""The README stays true: the two commands, and the performance table matches bench/results."""

from __future__ import annotations

from pathlib import Path

from bench.report import README, render_table, updated_readme

ROOT = Path(__file__).resolve().parents[2]


def test_performance_table_matches_committed_results() -> None:
    text = README.read_text()
    assert updated_readme(text, render_table()) == text, "run `python -m bench.report --write`"


def test_readme_names_the_two_commands_and_ci_runs_the_test_command() -> None:
    text = README.read_text()
    assert "make demo" in text and "make test" in text
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci
