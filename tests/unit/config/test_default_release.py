"""The default Triton release's decision (``config.default_release``, issue 37): what it rests on holds."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from cdk_triton.config import advisories, default_release, gpu_hosts, tables

ROOT = Path(__file__).resolve().parents[3]


def test_no_release_of_the_table_meets_every_criterion_else_the_default_must_move() -> None:
    ready = [c.release for c in default_release.candidates() if c.meets_all]
    assert not ready, (
        f"{ready} meet every criterion of data/default-release.json: move DEFAULT_TRITON_VERSION there "
        "(and the Dockerfile, the TensorRT pin, the example), record the decision and regenerate the goldens"
    )


def test_the_default_is_among_the_safest_releases_whose_host_and_toolchain_are_confirmed() -> None:
    confirmed = [c for c in default_release.candidates() if not (c.host_problem or c.toolchain_problem)]
    default = next(c for c in confirmed if c.release == tables.DEFAULT_TRITON_VERSION)
    assert len(default.critical) == min(len(c.critical) for c in confirmed)


def test_the_default_gets_a_confirmed_host_on_every_default_family_without_a_pin() -> None:
    for family in default_release.default_families():
        instance_type = next(t for t in tables.instance_types() if t.startswith(f"ml.{family}."))
        d = gpu_hosts.decide_host(
            release=tables.DEFAULT_TRITON_VERSION, instance_type=instance_type, inference_ami_version=None
        )
        assert d.outcome in ("unchanged", "choose"), (family, d)


def test_the_library_acknowledges_exactly_the_default_releases_critical_advisories() -> None:
    critical = sorted(
        a.cve
        for a in advisories.affecting(tables.DEFAULT_TRITON_VERSION)
        if a.band == "critical" and a.reachable_on_sagemaker
    )
    assert list(default_release.acknowledged_cves()) == critical, (
        "the default's critical advisories changed: record a new decision in data/default-release.json"
    )
    assert default_release.library_acknowledgments(tables.DEFAULT_TRITON_VERSION).keys() == set(critical)
    assert default_release.library_acknowledgments("24.05") == {}
    assert default_release.library_acknowledgments(None) == {}


def test_what_holds_the_move_back_is_an_unconfirmed_fact_of_the_only_fixed_release() -> None:
    fixed = [c.release for c in default_release.candidates() if not c.critical]
    held = {h["release"] for h in default_release.held_back_by()}
    assert held == set(fixed) == {"26.05"}
    assert all(h["confirmed"] is False for h in default_release.held_back_by())
    # the facts the code reads agree with the record: no AMI whose driver runs 26.05 lists a family
    cuda = gpu_hosts.release_cuda("26.05")
    assert cuda is not None
    runs = [
        a
        for a in gpu_hosts.ami_versions().values()
        if a.accelerator == "gpu" and a.driver and gpu_hosts.runs_on("26.05", cuda, a.driver)[0] == "runs"
    ]
    assert [a.name for a in runs] == ["al2023-ami-sagemaker-inference-gpu-4-1"] and runs[0].families is None
    assert not tables.release("26.05").tensorrt.confirmed


def test_the_readme_shows_the_decision_table() -> None:
    assert default_release.readme_table() in (ROOT / "README.md").read_text()


def test_the_warning_is_one_line_naming_the_listing_and_the_ways_out() -> None:
    cves = list(default_release.acknowledged_cves())
    text = default_release.warning("24.09", cves)
    assert "CVE-" not in text and "\n" not in text and len(text) <= 340
    assert "5 critical advisories are acknowledged by the library, not by you" in text
    assert "cdk-triton advisories --release 24.09" in text and "target 26.05" in text
    assert default_release.KEY in text and default_release.CONTEXT_KEY in text
    detail = default_release.detail("24.09", cves)  # what --verbose prints under it
    assert all(c in detail for c in cves) and "al2023-ami-sagemaker-inference-gpu-4-1" in detail


# -- what `cdk-triton init` declares (issue 42) --


def test_init_release_is_26_05_on_the_driver_580_ami_and_a_g6_host() -> None:
    """Pinned on purpose: when the data changes so that another release, AMI or type should be chosen,
    this fails; then review the scaffold's comments and docs/security.md (which say why) and update."""
    init = default_release.init_release()
    assert (init.release, init.inference_ami_version, init.driver) == (
        "26.05",
        "al2023-ami-sagemaker-inference-gpu-4-1",
        580,
    )
    assert init.strongest == ("g4dn", "g6") and init.instance_type == "ml.g6.xlarge"


def test_init_release_meets_its_rule_from_the_data() -> None:
    init = default_release.init_release()
    images = tables.image_versions()
    assert not [
        a for a in advisories.affecting(init.release) if a.band == "critical" and a.reachable_on_sagemaker
    ]
    cuda = gpu_hosts.release_cuda(init.release)
    assert cuda is not None and gpu_hosts.runs_on(init.release, cuda, init.driver)[0] == "runs"
    for newer in images[images.index(init.release) + 1 :]:  # every newer image fails the rule
        crit = [a for a in advisories.affecting(newer) if a.band == "critical" and a.reachable_on_sagemaker]
        assert crit or gpu_hosts.release_cuda(newer) is None, newer
    # the default is not the init release, and stays until its own criteria are met
    assert tables.DEFAULT_TRITON_VERSION == "24.09" != init.release


def test_init_release_follows_the_data(monkeypatch: pytest.MonkeyPatch) -> None:
    default_release.init_release.cache_clear()
    try:
        images = [*tables.image_versions(), "26.08"]
        monkeypatch.setattr(tables, "image_versions", lambda: images)
        cuda = gpu_hosts.release_cuda
        monkeypatch.setattr(gpu_hosts, "release_cuda", lambda r: "13.2.1" if r == "26.08" else cuda(r))
        assert default_release.init_release().release == "26.08"  # a newer fixed image with a host
        default_release.init_release.cache_clear()
        affecting = advisories.affecting
        critical = advisories.advisories()["CVE-2025-23310"]
        monkeypatch.setattr(advisories, "affecting", lambda v: [critical, *affecting(v)])
        with pytest.raises(LookupError):  # a critical advisory in every release: no secure start
            default_release.init_release()
    finally:
        default_release.init_release.cache_clear()


def test_family_evidence_separates_confirmed_third_party_and_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    ami = "al2023-ami-sagemaker-inference-gpu-4-1"
    levels = {e.family: e.level for e in default_release.family_evidence(ami)}
    assert "confirmed" not in levels.values()  # no AWS document lists its families (gpu-hosts.json)
    assert {f for f, lv in levels.items() if lv == "third-party"} == {
        "g4dn",
        "g5",
        "g6",
        "g6e",
        "p4d",
        "p4de",
        "p5",
        "p5e",
        "p5en",
    }
    assert levels["p3"] == levels["g7e"] == "unknown"
    for row in default_release.third_party_evidence(ami):
        assert row["source"] and row["shows"] and re.match(r"\d{4}-\d{2}-\d{2}", row["found"])
    # a primary source listing a family makes it the strongest
    real = gpu_hosts.ami_versions()
    listed = {**real, ami: dataclasses.replace(real[ami], families=("p5",))}
    monkeypatch.setattr(gpu_hosts, "ami_versions", lambda: listed)
    evidence = default_release.family_evidence(ami)
    assert evidence[0].family == "p5" and evidence[0].level == "confirmed"
    assert default_release.strongest(evidence) == ("p5",)


def test_the_listing_has_every_advisory_with_its_source_and_the_librarys_decision() -> None:
    data = default_release.listing("24.09", "us-east-1")
    assert data["counts"] == {"critical": 5, "high": 21, "medium": 6, "low": 0}
    assert {r["cve"] for r in data["advisories"]} == {a.cve for a in advisories.affecting("24.09")}
    assert all(
        r["source"].startswith("https://nvidia.custhelp.com/") and r["date_read"] for r in data["advisories"]
    )
    assert data["library_acknowledged"] == sorted(default_release.acknowledged_cves())
    text = default_release.render_listing(data)
    assert all(text.count(a.cve) == 2 for a in advisories.affecting("24.09") if a.band != "critical")
    assert (
        "refuse with library_acknowledgments: false" in text
        and "cdk-triton init declares Triton 26.05" in text
    )
    fixed = default_release.listing("26.05")
    assert fixed["counts"]["critical"] == 0 and not fixed["library_acknowledged"]
    assert default_release.render_listing(default_release.listing("99.01")).count("\n") == 1


def test_the_security_page_says_what_the_data_decides() -> None:
    page = (ROOT / "docs" / "security.md").read_text()
    init = default_release.init_release()
    assert default_release.readme_table() in page
    assert f"**{init.release}**" in page and f"**`{init.inference_ami_version}`**" in page
    assert f"`{init.instance_type}` for a" in page
    assert f"`{default_release.init_instance_type(multi_model=True)}` for a multi-model" in page
    rows = {
        line.split(" | ")[0].strip("| "): line.split(" | ")[1]
        for line in page.splitlines()
        if (line.startswith("| ") and " | third-party" in line) or line.startswith("| p2")
    }
    levels: dict[str, set[str]] = {}
    for e in default_release.family_evidence(init.inference_ami_version):
        levels.setdefault(f"{e.level}:{len(e.third_party)}", set()).add(e.family)
    said = {frozenset(k.split(", ")) for k in rows}
    assert said == {frozenset(v) for v in levels.values()}
    assert "reference/cli.md#cdk-triton-advisories" in page and "guides/gpu-hosts.md" in page
