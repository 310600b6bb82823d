"""The vendored advisory table and the rule build and synth share (``config.advisories``)."""

from __future__ import annotations

import re

import pytest

from cdk_triton.config import advisories, tables


def test_every_row_has_its_source_date_and_confirmation() -> None:
    data = tables.advisory_table()
    for cve, row in data["advisories"].items():
        assert re.fullmatch(r"CVE-\d{4}-\d{4,}", cve)
        assert row["bulletin"] in data["bulletins"], cve
        assert row["source"].startswith(
            "https://nvidia.custhelp.com/app/answers/detail/a_id/" + row["bulletin"]
        )
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["date_read"]) and isinstance(row["confirmed"], bool)
        assert row["reachability"]["value"] in advisories.REACHABILITY and row["reachability"]["source"], cve
        assert tables.is_valid_version_string(row["fixed_in"]) and 0 < row["cvss"] <= 10
    assert data["aws_backports"]["stated"] is False and data["aws_backports"]["source"]


@pytest.mark.parametrize(
    ("version", "critical"),
    [
        ("24.09", {"CVE-2025-23310", "CVE-2025-23311", "CVE-2025-23316", "CVE-2025-23317", "CVE-2026-24207"}),
        ("25.09", {"CVE-2026-24207"}),
        ("26.05", set()),
    ],
)
def test_critical_advisories_per_release(version: str, critical: set[str]) -> None:
    found = advisories.check_release(version, region="us-east-1")
    named = set(re.findall(r"CVE-\d{4}-\d+", str(found.errors[0]))) if found.errors else set()
    assert {c for c in named if advisories.advisories()[c].band == "critical"} == critical


def test_the_fix_is_the_first_sagemaker_release_in_the_region() -> None:
    assert advisories.first_sagemaker_release("25.07", "us-east-1") == "25.09"
    assert advisories.first_sagemaker_release("26.07", "us-east-1") is None  # no SageMaker image has it yet
    err = advisories.check_release("24.09", region="us-east-1", path="models.yaml: triton_version").errors[0]
    assert err.code == "CriticalAdvisory" and err.path == "models.yaml: triton_version"
    assert "Triton 26.05, the first SageMaker Triton image in us-east-1 with every fix" in err.allowed


def test_acknowledged_advisories_are_recorded_and_silence_nothing_else() -> None:
    acks = {"CVE-2025-23310": "why", "CVE-2026-16497": "not in 24.09's... yes it is"}
    found = advisories.check_release("24.09", acknowledged=acks)
    assert [r["id"] for r in found.acknowledged] == ["CVE-2025-23310", "CVE-2026-16497"]
    assert "CVE-2025-23310" not in str(found.errors[0]) and "CVE-2025-23311" in str(found.errors[0])
    assert not advisories.check_release(None).errors  # a custom image without a release


def test_local_server_notice_is_one_line_and_its_detail_has_the_list() -> None:
    text = advisories.local_server_notice() or ""
    assert "Triton 24.10" in text and "5 critical" in text and "127.0.0.1" in text
    assert "private network namespace" in text and "cdk-triton advisories --release 24.10" in text
    assert "CVE-" not in text and len(text) <= 240
    detail = advisories.local_server_detail()
    assert "CVE-2025-23310" in detail and "NO PRIVATE NETWORK NAMESPACE" in detail


#: the CVE ids a band warning used to list (issue 42: the one line that matters was lost among them)
CVE = re.compile(r"CVE-\d{4}-\d+")


@pytest.mark.parametrize("version", ["24.09", "25.04", "26.05"])
def test_band_warnings_are_one_line_each_and_name_the_listing_command(version: str) -> None:
    found = advisories.check_release(
        version, acknowledged=dict.fromkeys(advisories.advisories(), "accepted for this test")
    )
    assert not found.warnings  # everything acknowledged: nothing to say
    found = advisories.check_release(
        version,
        library={c: "x" for c in advisories.advisories() if advisories.advisories()[c].band == "critical"},
    )
    assert found.warnings
    for code, message in found.warnings:
        rows = [
            a for a in advisories.affecting(version) if a.band == ("high" if "High" in code else "medium")
        ]
        assert f"has {len(rows)} " in message and f"cdk-triton advisories --release {version}" in message
        assert not CVE.search(message) and len(message) <= 200 and "\n" not in message
        assert advisories.ACKNOWLEDGMENT_KEY in message  # what to do
        assert set(CVE.findall(found.details[code])) == {a.cve for a in rows}  # the full list, for --verbose


def test_a_band_warning_names_the_first_sagemaker_image_with_every_fix() -> None:
    found = advisories.check_release(
        "24.09", region="us-east-1", library=dict.fromkeys(default_release_cves(), "x")
    )
    by_code = dict(found.warnings)
    assert "Triton 26.05 fixes all" in by_code[advisories.MEDIUM_WARNING]
    assert "no SageMaker image fixes all yet" in by_code[advisories.HIGH_WARNING]  # CVE-2026-16497: 26.07


def default_release_cves() -> list[str]:
    return [a.cve for a in advisories.affecting("24.09") if a.band == "critical"]
