"""The site's hand-written pages stay true where they carry generated figures: the performance table of
docs/concepts/proven-where.md matches bench/results (``python -m bench.report --write`` rewrites it)."""

from __future__ import annotations

import pytest

from bench.report import END, PAGE, START, render_table, updated_page


def test_performance_table_matches_committed_results() -> None:
    text = PAGE.read_text()
    assert updated_page(text, render_table()) == text, "run `python -m bench.report --write`"


def test_a_stale_or_missing_table_is_found() -> None:
    stale = f"intro\n{START}\n| old |\n{END}\nafter\n"
    assert updated_page(stale, "| new |\n") == f"intro\n{START}\n| new |\n{END}\nafter\n"
    with pytest.raises(SystemExit, match="lacks the"):
        updated_page("no markers", "| new |\n")


def test_every_registered_deprecation_is_on_the_upgrading_page() -> None:
    import cdk_triton.config.manifest  # noqa: F401  (importing declares their deprecations)
    import cdk_triton.constructs  # noqa: F401
    from cdk_triton._deprecation import DECLARED

    page = (PAGE.parents[1] / "upgrading.md").read_text()
    missing = [
        f"{old} -> {new} (removed in {removed})"
        for old, (new, removed) in DECLARED.items()
        if old.startswith("cdk_triton.")  # other tests declare deprecations of their own fake names
        and (
            f"`{old}`" not in page or not any(f"`{old}`" in ln and removed in ln for ln in page.splitlines())
        )
    ]
    assert DECLARED and not missing, f"docs/upgrading.md lacks: {missing}"


def test_every_code_the_troubleshooting_page_names_is_catalogued() -> None:
    import re

    from docs.error_tables import OWNED

    page = (PAGE.parents[1] / "troubleshooting.md").read_text()
    known = {code for codes in OWNED.values() for code in codes}
    named = set(re.findall(r"`([A-Z][A-Za-z]+)`", page)) - {"ML"}
    # CamelCase words in code spans that are no error code: constructs and props
    named -= {"TritonModel", "TritonEndpoint", "InferenceAmiVersion"}
    assert named and not named - known, f"not in any catalogue: {sorted(named - known)}"
