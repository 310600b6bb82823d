"""The host decision (``config/gpu_hosts.py``): every rule, over the whole release x family x AMI table."""

from __future__ import annotations

from unittest import mock

import pytest

from cdk_triton.config import gpu_hosts, tables
from cdk_triton.config.gpu_hosts import decide_host

GPU2 = "al2-ami-sagemaker-inference-gpu-2"
GPU21 = "al2-ami-sagemaker-inference-gpu-2-1"
GPU31 = "al2-ami-sagemaker-inference-gpu-3-1"
GPU41 = "al2023-ami-sagemaker-inference-gpu-4-1"


def test_the_table_holds_botocore_enum_and_the_driver_page() -> None:
    assert list(gpu_hosts.ami_versions()) == [
        GPU2,
        GPU21,
        GPU31,
        GPU41,
        "al2-ami-sagemaker-inference-neuron-2",
    ]
    assert {n: (a.driver, a.cuda, a.compat_mounting) for n, a in gpu_hosts.ami_versions().items()} == {
        GPU2: (535, "12.2", True),
        GPU21: (535, "12.2", False),
        GPU31: (550, "12.4", False),
        GPU41: (580, "13.0", False),
        "al2-ami-sagemaker-inference-neuron-2": (None, None, None),
    }
    assert gpu_hosts.ami_versions()[GPU2].families == ("g4dn", "g5", "g6", "p3", "p4d", "p4de", "p5")
    assert {f: d for f, (d, _) in gpu_hosts.default_driver_families().items()} == {
        **dict.fromkeys(("p2", "p3", "p4d", "p4de", "g4dn", "g5"), 470),
        **dict.fromkeys(("p5", "g6"), 535),
        **dict.fromkeys(("p5e", "p5en"), 550),
    }
    assert (gpu_hosts.cuda_floor("12"), gpu_hosts.cuda_floor("13")) == (525, 580)
    assert gpu_hosts.facts_read() == "2026-11-26"


def test_families_not_on_the_driver_page_are_not_in_the_table() -> None:
    families = {t.family for t in tables.instance_types().values()}
    assert families - set(gpu_hosts.default_driver_families()) == {"g6e", "g7e", "p3dn", "p6-b200", "p6-b300"}


def test_the_cuda_facts_come_from_the_release_table() -> None:
    assert gpu_hosts.release_cuda("25.04") == tables.release("25.04").cuda.value == "12.9.0"
    assert gpu_hosts.release_cuda("99.01") is None


@pytest.mark.parametrize(
    ("release", "driver", "verdict"),
    [
        ("25.04", 525, "runs"),  # the 12.x floor
        ("25.04", 524, "unconfirmed"),
        ("25.04", 470, "fails"),  # aws/deep-learning-containers 4990
        ("24.09", 470, "unconfirmed"),  # the 4990 evidence is for 25.04 only
        ("25.09", 580, "runs"),  # the 13.x floor
        ("25.09", 550, "unconfirmed"),
        ("25.09", 470, "fails"),  # R470 supports no CUDA 13
    ],
)
def test_runs_on(release: str, driver: int, verdict: str) -> None:
    cuda = gpu_hosts.release_cuda(release)
    assert cuda is not None
    assert gpu_hosts.runs_on(release, cuda, driver)[0] == verdict


def test_a_confirmed_works_fact_lets_a_release_run_below_the_floor() -> None:
    fact = gpu_hosts.ForwardCompatibility(
        cuda_major="12", driver=470, releases=("24.09",), status="confirmed-works", evidence="x"
    )
    with mock.patch.object(gpu_hosts, "forward_compatibility", return_value=[fact]):
        assert (
            decide_host(release="24.09", instance_type="ml.g5.xlarge", inference_ami_version=None).outcome
            == "unchanged"
        )


def test_25_04_on_g5_chooses_the_ami_and_says_why() -> None:
    d = decide_host(release="25.04", instance_type="ml.g5.xlarge", inference_ami_version=None)
    assert (d.outcome, d.inference_ami_version) == ("choose", GPU2)
    assert d.message and "25.04" in d.message and "g5" in d.message and "4990" in d.message


def test_default_host_that_runs_the_release_leaves_the_template_alone() -> None:
    for release, instance_type in (
        ("24.09", "ml.g6.xlarge"),
        ("25.04", "ml.p5.48xlarge"),
        ("24.09", "ml.p5e.48xlarge"),
    ):
        d = decide_host(release=release, instance_type=instance_type, inference_ami_version=None)
        assert (d.outcome, d.inference_ami_version, d.message) == ("unchanged", None, None)


def test_unconfirmed_default_host_chooses_an_ami_listed_for_the_family_that_runs_the_release() -> None:
    d = decide_host(release="24.09", instance_type="ml.g5.xlarge", inference_ami_version=None)
    assert (d.outcome, d.inference_ami_version, d.warning_id) == (
        "choose",
        GPU2,
        "cdk-triton:InferenceAmiChosen",
    )
    assert (
        d.message
        and "unconfirmed" in d.message
        and "driver 535" in d.message
        and "listed for g5" in d.message
    )


def test_unconfirmed_default_host_without_a_listed_ami_that_runs_it_warns_and_recommends_one() -> None:
    d = decide_host(release="26.05", instance_type="ml.g6.xlarge", inference_ami_version=None)
    assert (d.outcome, d.inference_ami_version, d.warning_id) == (
        "warn",
        None,
        "cdk-triton:HostDriverUnconfirmed",
    )
    assert d.message and GPU41 in d.message


@pytest.mark.parametrize("instance_type", ["ml.g6e.xlarge", "ml.g7e.2xlarge", "ml.p6-b200.48xlarge"])
def test_family_not_in_the_table_warns(instance_type: str) -> None:
    d = decide_host(release="24.09", instance_type=instance_type, inference_ami_version=None)
    assert (d.outcome, d.inference_ami_version, d.warning_id) == (
        "warn",
        None,
        "cdk-triton:HostDriverUnknown",
    )


def test_release_not_in_the_release_table_warns() -> None:
    d = decide_host(release="24.10", instance_type="ml.g5.xlarge", inference_ami_version=None)
    assert (d.outcome, d.warning_id) == ("warn", "cdk-triton:HostDriverUnknown")


def test_cpu_and_custom_images_decide_nothing() -> None:
    assert (
        decide_host(release="25.04", instance_type="ml.m5.xlarge", inference_ami_version=None).outcome
        == "unchanged"
    )
    assert (
        decide_host(release=None, instance_type="ml.g5.xlarge", inference_ami_version=None).outcome
        == "unchanged"
    )


def test_cuda_13_on_g5_is_an_error_naming_the_580_ami() -> None:
    d = decide_host(
        release="25.09", instance_type="ml.g5.xlarge", inference_ami_version=None, path="endpoints[0]"
    )
    assert d.outcome == "error" and d.error is not None
    assert d.error.code == "NoHostForRelease" and d.error.path == "endpoints[0]"
    assert GPU41 in d.error.fix and GPU41 in d.error.allowed


def test_no_ami_at_all_is_an_error_without_a_pin_to_suggest() -> None:
    with mock.patch.object(gpu_hosts, "cuda_floor", return_value=999):
        d = decide_host(release="25.04", instance_type="ml.g5.xlarge", inference_ami_version=None)
    assert d.error is not None and d.error.code == "NoHostForRelease"
    assert "(no InferenceAmiVersion runs it)" in d.error.allowed and "pin" not in d.error.fix


def test_pinned_ami_that_runs_is_emitted_as_is() -> None:
    d = decide_host(release="25.04", instance_type="ml.g5.xlarge", inference_ami_version=GPU2)
    assert (d.outcome, d.inference_ami_version, d.message) == ("unchanged", GPU2, None)


def test_pinned_ami_whose_families_are_unsourced_warns() -> None:
    d = decide_host(release="25.09", instance_type="ml.g5.xlarge", inference_ami_version=GPU41)
    assert (d.outcome, d.inference_ami_version, d.warning_id) == (
        "warn",
        GPU41,
        "cdk-triton:InferenceAmiFamilyUnconfirmed",
    )


def test_pinned_ami_below_the_floor_without_evidence_warns() -> None:
    d = decide_host(release="25.09", instance_type="ml.g5.xlarge", inference_ami_version=GPU2)
    assert (d.outcome, d.inference_ami_version, d.warning_id) == (
        "warn",
        GPU2,
        "cdk-triton:HostDriverUnconfirmed",
    )
    assert d.message and GPU41 in d.message


def test_pinned_ami_that_provably_cannot_is_refused() -> None:
    fact = gpu_hosts.ForwardCompatibility(
        cuda_major="13", driver=550, releases=None, status="confirmed-fails", evidence="x"
    )
    with mock.patch.object(gpu_hosts, "forward_compatibility", return_value=[fact]):
        d = decide_host(release="25.09", instance_type="ml.g5.xlarge", inference_ami_version=GPU31)
    assert d.error is not None and d.error.code == "InferenceAmiCannotRunRelease"
    assert d.error.allowed == GPU41 and "compat libraries" in d.error.problem


def test_unknown_ami_is_refused_with_the_allowed_values() -> None:
    d = decide_host(release="25.04", instance_type="ml.g5.xlarge", inference_ami_version="al2-ami-gpu-9")
    assert d.error is not None and d.error.code == "UnknownInferenceAmiVersion"
    assert d.error.value == "al2-ami-gpu-9" and all(a in d.error.allowed for a in (GPU2, GPU21, GPU31, GPU41))


@pytest.mark.parametrize(
    ("instance_type", "ami"),
    [
        ("ml.g6e.xlarge", GPU2),  # not in gpu-2's list
        ("ml.p5e.48xlarge", GPU2),
        ("ml.m5.xlarge", GPU2),  # a CPU type
        ("ml.m5.xlarge", GPU41),
        ("ml.g5.xlarge", "al2-ami-sagemaker-inference-neuron-2"),  # a neuron AMI on a GPU
    ],
)
def test_ami_not_accepted_for_the_family_is_refused(instance_type: str, ami: str) -> None:
    d = decide_host(release="24.09", instance_type=instance_type, inference_ami_version=ami)
    assert d.error is not None and d.error.code == "InferenceAmiNotForInstance", d
    assert d.error.fix


def test_every_release_and_family_gets_exactly_one_outcome() -> None:
    """The whole table: an outcome for each (release, family); a chosen AMI always runs the release."""
    families = {t.family: name for name, t in tables.instance_types().items()}
    for release in tables.release_versions():
        for family, instance_type in families.items():
            d = decide_host(release=release, instance_type=instance_type, inference_ami_version=None)
            assert d.outcome in ("unchanged", "choose", "warn", "error")
            assert (d.error is not None) == (d.outcome == "error")
            if d.outcome == "choose":
                ami = gpu_hosts.ami_versions()[d.inference_ami_version or ""]
                assert ami.families and family in ami.families
                cuda = gpu_hosts.release_cuda(release) or ""
                assert gpu_hosts.runs_on(release, cuda, ami.driver or 0)[0] == "runs"
            else:
                assert d.inference_ami_version is None


def test_readme_host_table_is_generated_from_the_facts() -> None:
    from pathlib import Path

    # the GPU host guide carries the table (the README did before the site had pages of its own)
    readme = (Path(__file__).resolve().parents[3] / "docs" / "guides" / "gpu-hosts.md").read_text()
    block = readme.split("<!-- host-table: generated by cdk_triton.config.gpu_hosts.readme_table -->\n", 1)[1]
    assert block.split("<!-- /host-table -->", 1)[0] == gpu_hosts.readme_table()


def test_each_readme_column_decides_alike_for_all_its_families() -> None:
    for _, families in gpu_hosts.README_COLUMNS:
        for release in tables.release_versions():
            assert len({gpu_hosts._cell(release, f) for f in families}) == 1, (release, families)
