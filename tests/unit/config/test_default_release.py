"""The default Triton release's decision (``config.default_release``, issue 37): what it rests on holds."""

from __future__ import annotations

from pathlib import Path

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


def test_the_warning_names_the_cves_and_what_holds_the_move_back() -> None:
    text = default_release.warning("24.09", ["CVE-2025-23310"])
    assert "CVE-2025-23310" in text and "al2023-ami-sagemaker-inference-gpu-4-1" in text
    assert default_release.KEY in text and default_release.CONTEXT_KEY in text
