"""The GPU build plan: the job kind for every GPU instance type, and every planning error."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from cdk_triton.config import tables
from cdk_triton.errors import TritonValidationError
from cdk_triton.pipeline import gpu_targets
from cdk_triton.pipeline.gpu_targets import GpuBuildOptions, gpu_build_targets, job_kind, job_kinds

#: The rule, written out per GPU model: CodeBuild where its GPU is the same model, else Processing
#: on the endpoint's own type, else Training (Processing has no p3dn / p4d / p5).
EXPECTED = {
    "NVIDIA A10G": ("codebuild", "BUILD_GENERAL1_SMALL"),
    "NVIDIA V100": ("codebuild", "BUILD_GENERAL1_LARGE"),
    "NVIDIA T4": ("processing", None),
    "NVIDIA L4": ("processing", None),
    "NVIDIA L40S": ("processing", None),
    "NVIDIA K80": ("processing", None),
    "NVIDIA A100": ("training", None),
    "NVIDIA H100": ("training", None),
    "NVIDIA H200": ("training", None),
    "NVIDIA B200": ("training", None),
    "NVIDIA B300": ("training", None),
    "NVIDIA RTX PRO 6000 Blackwell Server Edition": ("processing", None),
}
#: the one type whose GPU's other types lack Processing: a Processing job on ml.p5.4xlarge itself
EXPECTED_BY_TYPE = {"ml.p5.4xlarge": ("processing", None)}


@pytest.mark.parametrize("instance_type", sorted(tables.instance_types()))
def test_job_kind_runs_on_the_endpoints_gpu_model(instance_type: str) -> None:
    info = tables.instance_type_info(instance_type)
    assert info is not None
    job = job_kind(instance_type)
    assert (job.kind, job.codebuild_compute_type) == EXPECTED_BY_TYPE.get(instance_type, EXPECTED[info.gpu])
    assert job.gpu == info.gpu
    assert job.instance_type == instance_type
    if job.kind == "codebuild":
        assert gpu_targets.codebuild_gpu(str(job.codebuild_compute_type)) == info.gpu
    # every kind offered runs on the same GPU model
    assert {j.gpu for j in job_kinds(instance_type)} == {info.gpu}


def test_table_covers_every_gpu_instance_type_with_sources() -> None:
    table = gpu_targets.gpu_build_table()
    assert set(table["instance_types"]) == set(tables.instance_types())
    assert table["codebuild_gpu"]["sources"] and table["sagemaker_jobs"]["sources"]
    for name in ("ml.p4d.24xlarge", "ml.p5.48xlarge", "ml.p3dn.24xlarge"):
        assert (table["instance_types"][name]["processing"], table["instance_types"][name]["training"]) == (
            False,
            True,
        )


def test_fails_job_kind_for_a_cpu_type() -> None:
    with pytest.raises(TritonValidationError) as exc:
        job_kind("ml.m5.xlarge")
    assert exc.value.code == "NoGpuBuildPath"


def test_fails_job_kind_when_the_preferred_kind_is_not_offered() -> None:
    with pytest.raises(TritonValidationError) as exc:
        job_kind("ml.p5.48xlarge", prefer="processing")
    assert exc.value.code == "NoGpuBuildPath"
    assert "training" in exc.value.allowed


def _decl(instance_types: list[str], *, version: str = "24.09", **extra: Any) -> dict[str, Any]:
    return {
        "triton_version": version,
        "models": [
            {"name": "net_trt", "format": "tensorrt"},
            {"name": "net_onnx", "format": "onnx"},
            {"name": "ens", "format": "ensemble", "steps": [{"model": "net_trt"}]},
        ],
        "endpoints": [{"name": "ep", "instance_types": instance_types, "models": ["ens", "net_onnx"]}],
        **extra,
    }


def test_plan_builds_tensorrt_models_reached_through_an_ensemble() -> None:
    target = gpu_build_targets(_decl(["ml.g6.xlarge"]))
    assert target is not None
    assert target.job.kind == "processing" and target.job.instance_type == "ml.g6.xlarge"
    assert (target.models, target.endpoints, target.sm) == (("net_trt",), ("ep",), "sm89")
    assert target.tensorrt_version == tables.release("24.09").tensorrt.value


def test_plan_of_tensorrt_models_also_checks_every_gpu_placed_model() -> None:
    target = gpu_build_targets(_decl(["ml.g5.xlarge"]))
    assert target is not None and target.builds_models and target.gpu_check
    assert target.check_models == ("net_trt", "net_onnx")  # the ensemble has no artifact of its own
    off = gpu_build_targets(_decl(["ml.g5.xlarge"]), options=GpuBuildOptions(gpu_check=False))
    assert off is not None and off.builds_models and not off.gpu_check and off.check_models == ()


def _fleet(instance_types: list[str], *groups: list[dict[str, str]] | None) -> dict[str, Any]:
    """TorchScript models (one per ``groups`` entry: its instance groups, None for none) on one endpoint."""
    models: list[dict[str, Any]] = []
    for i, g in enumerate(groups):
        models.append(
            {"name": f"ts{i}", "format": "torchscript", **({} if g is None else {"instance_groups": g})}
        )
    return {
        "triton_version": "24.09",
        "models": models,
        "endpoints": [
            {"name": "ep", "instance_types": instance_types, "models": [m["name"] for m in models]}
        ],
    }


@pytest.mark.parametrize(
    ("instance_type", "kind", "compute"),
    [("ml.g5.xlarge", "codebuild", "BUILD_GENERAL1_SMALL"), ("ml.g6.xlarge", "processing", None)],
)
def test_gpu_placed_torchscript_without_tensorrt_gets_a_check_only_job_on_the_endpoints_gpu(
    instance_type: str, kind: str, compute: str | None
) -> None:
    decl = _fleet([instance_type], [{"kind": "KIND_GPU"}], None, [{"kind": "KIND_CPU"}])
    target = gpu_build_targets(decl)
    assert target is not None and not target.builds_models and target.models == ()
    # KIND_GPU and the default placement on a GPU type are checked; KIND_CPU alone is not
    assert target.check_models == ("ts0", "ts1")
    assert (target.job.kind, target.job.instance_type, target.job.codebuild_compute_type) == (
        kind,
        instance_type,
        compute,
    )
    assert target.job == job_kind(instance_type)  # the rule TensorRT targets use
    assert target.endpoints == ("ep",) and target.note is None
    assert target.tensorrt_version == tables.release("24.09").tensorrt.value  # the same build image


def test_cpu_only_fleet_gets_no_gpu_job() -> None:
    assert gpu_build_targets(_fleet(["ml.c5.xlarge"], [{"kind": "KIND_CPU"}], [{"kind": "KIND_CPU"}])) is None
    # the default placement on a CPU type never runs on a GPU either
    assert gpu_build_targets(_fleet(["ml.m5.xlarge"], None)) is None


def test_gpu_check_opt_out_leaves_a_fleet_without_tensorrt_no_gpu_job() -> None:
    decl = _fleet(["ml.g5.xlarge"], [{"kind": "KIND_GPU"}])
    assert gpu_build_targets(decl, options=GpuBuildOptions(gpu_check=False)) is None


def test_check_only_job_honours_the_gpu_build_overrides() -> None:
    decl = _fleet(["ml.g5.xlarge"], [{"kind": "KIND_GPU"}])
    target = gpu_build_targets(decl, options=GpuBuildOptions(kind="processing"))
    assert target is not None and target.job.kind == "processing"
    assert _codes(decl, GpuBuildOptions(codebuild_compute_type="BUILD_GENERAL1_LARGE")) == [
        "GpuModelMismatch"
    ]
    assert _codes(decl, GpuBuildOptions(tensorrt_version="10.9.0")) == ["TensorRtVersionMismatch"]


def test_check_only_job_on_several_gpu_models_runs_on_the_first_and_says_so() -> None:
    decl = _fleet(["ml.g6.xlarge"], [{"kind": "KIND_GPU"}])
    decl["models"].append({"name": "other", "format": "onnx", "instance_groups": [{"kind": "KIND_GPU"}]})
    decl["endpoints"].append({"name": "ep2", "instance_types": ["ml.g5.xlarge"], "models": ["other"]})
    target = gpu_build_targets(decl)
    assert target is not None and target.job.instance_type == "ml.g5.xlarge"  # sorted first, as TensorRT's
    assert target.endpoints == ("ep2",) and target.check_models == ("ts0", "other")
    assert (
        target.note is not None
        and "ts0 (served on NVIDIA L4)" in target.note
        and "NVIDIA A10G" in target.note
    )


def test_check_only_fleet_on_gpus_without_a_job_or_below_the_release_gets_none() -> None:
    assert gpu_build_targets(_fleet(["ml.p2.xlarge"], [{"kind": "KIND_GPU"}])) is None  # K80 < release
    unserved = _fleet(["ml.g5.xlarge"], [{"kind": "KIND_GPU"}])
    unserved["endpoints"] = []
    assert gpu_build_targets(unserved) is None  # no endpoint: no GPU model known to check it on


def _codes(decl: dict[str, Any], options: GpuBuildOptions | None = None) -> list[str]:
    with pytest.raises(TritonValidationError) as exc:
        gpu_build_targets(decl, options=options, source="models.yaml")
    err = exc.value
    assert "models.yaml" in str(err)
    return list(getattr(err, "codes", [err.code]))


def test_fails_tensorrt_on_a_cpu_instance_type() -> None:
    assert _codes(_decl(["ml.m5.xlarge"])) == ["NoGpuBuildPath"]


def test_fails_tensorrt_model_no_endpoint_serves() -> None:
    decl = _decl(["ml.g5.xlarge"])
    decl["endpoints"][0]["models"] = ["net_onnx"]
    assert _codes(decl) == ["TensorRtModelNotServed"]


def test_fails_tensorrt_on_several_gpu_models() -> None:
    assert _codes(_decl(["ml.g5.xlarge", "ml.g6.xlarge"])) == ["TensorRtOnSeveralGpuModels"]


def test_fails_gpu_below_the_release() -> None:
    assert _codes(_decl(["ml.p2.xlarge"])) == ["GpuBelowRelease"]


def test_fails_release_without_a_known_tensorrt_version() -> None:
    assert _codes(_decl(["ml.g6.xlarge"], version="26.05")) == ["TensorRtVersionUnknown"]


def test_fails_tensorrt_pin_mismatch_naming_both_sides() -> None:
    with pytest.raises(TritonValidationError) as exc:
        gpu_build_targets(_decl(["ml.g5.xlarge"]), options=GpuBuildOptions(tensorrt_version="10.9.0"))
    assert exc.value.code == "TensorRtVersionMismatch"
    assert "10.9.0" in str(exc.value) and "10.4.0" in str(exc.value)


def test_fails_codebuild_gpu_model_mismatch_naming_both_sides() -> None:
    with pytest.raises(TritonValidationError) as exc:
        gpu_build_targets(
            _decl(["ml.g6.xlarge"]), options=GpuBuildOptions(codebuild_compute_type="BUILD_GENERAL1_SMALL")
        )
    assert exc.value.code == "GpuModelMismatch"
    assert "NVIDIA A10G" in str(exc.value) and "NVIDIA L4" in str(exc.value)


def test_fails_forced_kind_the_type_does_not_offer() -> None:
    assert _codes(_decl(["ml.p4d.24xlarge"]), GpuBuildOptions(kind="processing")) == ["NoGpuBuildPath"]
    assert _codes(_decl(["ml.g5.xlarge"]), GpuBuildOptions(kind="batch")) == ["UnknownGpuJobKind"]


def test_collects_every_problem_at_once() -> None:
    decl = _decl(["ml.m5.xlarge"], version="26.05")
    decl["models"].append({"name": "orphan_trt", "format": "tensorrt"})
    assert sorted(_codes(copy.deepcopy(decl))) == [
        "NoGpuBuildPath",
        "TensorRtModelNotServed",
        "TensorRtVersionUnknown",
    ]


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (None, "DeclarationNotFound"),
        ("models: [\n  - name: a\n  format: x", "InvalidYaml"),
        ("- just\n- a list\n", "InvalidType"),
    ],
    ids=["missing", "not-yaml", "not-a-mapping"],
)
def test_read_declaration_refuses_a_missing_broken_or_non_mapping_file(
    tmp_path: Path, text: str | None, code: str
) -> None:
    path = tmp_path / "models.yaml"
    if text is not None:
        path.write_text(text)
    with pytest.raises(TritonValidationError) as exc:
        gpu_targets.read_declaration(path)
    assert exc.value.code == code and exc.value.prop == "declaration" and str(path) in str(exc.value)


def test_read_declaration_reads_the_example(tmp_path: Path) -> None:
    path = tmp_path / "models.yaml"
    path.write_text("triton_version: '24.09'\nmodels: []\nendpoints: []\n")
    assert gpu_targets.read_declaration(path).doc == {
        "triton_version": "24.09",
        "models": [],
        "endpoints": [],
    }


def test_job_host_warning_until_a_driver_fact_establishes_the_release() -> None:
    from unittest import mock

    from cdk_triton.pipeline.gpu_targets import GpuBuildTarget, GpuJob, job_host_warning

    job = GpuJob(
        kind="codebuild",
        instance_type="ml.g5.xlarge",
        gpu="NVIDIA A10G",
        codebuild_compute_type="BUILD_GENERAL1_SMALL",
    )
    target = GpuBuildTarget(
        job=job, triton_version="24.09", tensorrt_version="10.4.0", sm="sm86", models=("m",), endpoints=("e",)
    )
    note = job_host_warning(target)
    assert note and "CodeBuild GPU host (BUILD_GENERAL1_SMALL, NVIDIA A10G)" in note and "CUDA 12.6.1" in note
    with mock.patch("cdk_triton.pipeline.gpu_targets.job_host_driver", return_value=535):
        assert job_host_warning(target) is None  # 535 >= 525: established
    with mock.patch("cdk_triton.pipeline.gpu_targets.job_host_driver", return_value=470):
        assert "below 525" in (job_host_warning(target) or "")
