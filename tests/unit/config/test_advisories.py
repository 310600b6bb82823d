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


def test_local_server_notice_names_its_release_and_setup() -> None:
    text = advisories.local_server_notice() or ""
    assert "Triton 24.10" in text and "CVE-2025-23310" in text and "127.0.0.1" in text
    assert "private network namespace" in text
