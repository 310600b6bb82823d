"""The vendored data tables: image accounts, instance types, releases."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cdk_triton.config import tables
from cdk_triton.errors import TritonValidationError

SHARED = Path(__file__).resolve().parents[4] / "shared" / "data"


def test_image_uri_for_current_version_uses_table_account() -> None:
    assert tables.image_uri("24.09", "us-east-1") == (
        "763104351884.dkr.ecr.us-east-1.amazonaws.com/sagemaker-tritonserver:24.09-py3"
    )


def test_image_uri_for_region_with_own_account() -> None:
    account = tables.image_regions("25.09")["af-south-1"]
    assert account != "763104351884"
    assert tables.image_uri("25.09", "af-south-1").startswith(f"{account}.dkr.ecr.af-south-1.amazonaws.com/")


def test_legacy_versions_use_legacy_accounts_and_china_suffix() -> None:
    assert tables.image_account("23.02", "us-east-1") == "785573368785"
    assert tables.image_account("23.05", "us-west-2") == "301217895009"
    assert tables.image_uri("23.02", "cn-north-1").endswith(
        ".amazonaws.com.cn/sagemaker-tritonserver:23.02-py3"
    )


def test_fails_when_region_missing_for_version() -> None:
    with pytest.raises(TritonValidationError) as exc:
        tables.image_account("24.09", "mx-central-1")
    assert exc.value.code == "ImageNotInRegion"
    assert "mx-central-1" in str(exc.value) and "us-east-1" in str(exc.value)


@pytest.mark.parametrize("version", ["23.07", "99.01", "24.9", "latest", "24.09-py3"])
def test_fails_for_unknown_version(version: str) -> None:
    with pytest.raises(TritonValidationError) as exc:
        tables.image_regions(version)
    assert exc.value.code == "UnknownTritonVersion"
    assert repr(version) in str(exc.value)


def _leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{path}/{k}")
    else:
        yield path, value


def _at(data: Any, path: str) -> Any:
    for part in path.strip("/").split("/"):
        if not isinstance(data, dict) or part not in data:
            return KeyError
        data = data[part]
    return data


def test_every_shared_fact_is_ours_or_a_documented_correction() -> None:
    """shared/data is read-only and the primary sources win: a shared fact we differ from is listed,
    with its source, in the ``corrections`` section of our file."""
    if not SHARED.is_dir():
        pytest.skip("shared/ not beside the checkout")
    for name in ("sagemaker-tritonserver.json", "sagemaker-tritonserver-legacy.json", "instance-types.json"):
        ours = json.loads((Path(tables.__file__).parent / "data" / name).read_text())
        corrections = ours.get("corrections", {}).get("entries", {})
        for path, value in _leaves(json.loads((SHARED / name).read_text())):
            if _at(ours, path) == value:
                continue
            assert path in corrections, f"{name}{path}: shared {value!r}, ours {_at(ours, path)!r}"
            assert corrections[path]["shared"] == value and corrections[path]["source"], path


def test_corrections_sections_are_documented() -> None:
    data = json.loads((Path(tables.__file__).parent / "data" / "instance-types.json").read_text())
    assert data["corrections"]["comment"]
    for path, entry in data["corrections"]["entries"].items():
        assert set(entry) == {"shared", "ours", "source"}, path
        assert _at(data, path) == entry["ours"], path


def test_instance_type_facts() -> None:
    g5 = tables.instance_type_info("ml.g5.xlarge")
    assert g5 is not None and g5.gpu_count == 1 and g5.sm == "sm86" and g5.local_nvme_storage
    p3 = tables.instance_type_info("ml.p3.2xlarge")
    assert p3 is not None and not p3.local_nvme_storage and p3.sm == "sm70"
    assert tables.instance_type_info("ml.c5.xlarge") is None
    assert "ml.g5.xlarge" in tables.confirmed_mme_gpu_types()
    assert tables.is_burstable("ml.t2.medium") and not tables.is_burstable("ml.g5.xlarge")


def test_every_image_version_has_release_facts_with_sources() -> None:
    releases = tables.releases()
    for version in tables.image_versions():
        assert version in releases, version
        rel = releases[version]
        for fact in (rel.libtorch, rel.onnxruntime, rel.tensorrt, rel.cuda, rel.python):
            assert fact.source
            assert isinstance(fact.confirmed, bool)


def test_default_release_has_confirmed_onnxruntime_and_tensorrt() -> None:
    """The default's ONNX Runtime and TensorRT are confirmed (the build's opset check and the TensorRT pin
    rest on them); why it is this release is ``config.default_release``'s (tests/unit/config/test_default_release.py)."""
    rel = tables.release(tables.DEFAULT_TRITON_VERSION)
    assert rel.onnxruntime.confirmed and rel.tensorrt.confirmed
    assert rel.onnx_max_opset == 21 and rel.onnx_max_ir_version == 10


@pytest.mark.parametrize("version", ["23.02", "23.03", "23.04", "23.05", "23.12", "24.09", "25.04", "26.05"])
def test_seed_releases_have_every_fact_with_source(version: str) -> None:
    rel = tables.release(version)
    facts = rel.facts()
    assert list(facts) == [
        "triton_server",
        "libtorch",
        "onnxruntime",
        "tensorrt",
        "cuda",
        "python",
        "min_compute_capability",
    ]
    assert all(f.source and isinstance(f.confirmed, bool) for f in facts.values())
    assert rel.triton_server.confirmed and rel.onnxruntime.confirmed
    assert rel.onnx_max_opset is not None and rel.onnx_max_ir_version is not None


def test_release_table_facts_from_primary_sources() -> None:
    assert tables.release("23.02").triton_server.value == "2.31.0"
    assert tables.release("25.04").cuda.value == "12.9.0"
    assert tables.release("26.05").onnx_max_opset == 25 and tables.release("26.05").onnx_max_ir_version == 13
    assert tables.release_versions()[0] == "23.02" and tables.release_versions()[-1] == "26.05"


@pytest.mark.parametrize("version", ["23.02", "23.03", "23.04", "23.05"])
def test_legacy_seed_releases_resolve_an_image(version: str) -> None:
    assert tables.image_uri(version, "us-west-2").startswith("301217895009.dkr.ecr.us-west-2.amazonaws.com/")
    assert tables.image_uri(version, "cn-north-1").endswith(
        f".amazonaws.com.cn/sagemaker-tritonserver:{version}-py3"
    )


def test_pytorch_parameters_by_release() -> None:
    params = tables.pytorch_parameters()
    assert params["ENABLE_NVFUSER"].last_release == "23.11"
    assert params["INFERENCE_MODE"].in_release("23.02") and params["INFERENCE_MODE"].in_release("26.05")
    assert not params["DISABLE_CUDNN"].in_release("24.05") and params["DISABLE_CUDNN"].in_release("24.06")
    err = tables.pytorch_parameter_error("ENABLE_NVFUSER", "24.09")
    assert err is not None and err.code == "RemovedPyTorchParameter" and "23.11" in str(err)
    assert tables.pytorch_parameter_error("INFERENCE_MODE", "24.09") is None


def test_instance_kinds() -> None:
    assert tables.instance_kind("ml.g5.xlarge") == "gpu"
    assert tables.instance_kind("ml.c5.xlarge") == "cpu"
    assert tables.instance_kind("ml.m7g.large") == "arm64"
    assert tables.instance_kind("ml.inf2.xlarge") == "accelerator"
    assert tables.instance_kind("ml.g7.2xlarge") == "unknown"  # excluded: GPU facts unknown


def test_every_cfn_lint_gpu_hosting_type_is_in_table_or_excluded() -> None:
    """cfn-lint's SageMaker hosting instance types (union over regions): every GPU type (not a CPU
    or Inferentia/Trainium family) is in our table or in the documented exclusions."""
    cfnlint = pytest.importorskip("cfnlint")
    enum_path = (
        Path(cfnlint.__file__).parent / "data/schemas/extensions/aws_sagemaker_hosting/instancetype_enum.json"
    )
    if not enum_path.is_file():
        pytest.skip("this cfn-lint has no hosting instance type enum")
    data = json.loads(enum_path.read_text())
    hosting = {t for v in data.values() if isinstance(v, dict) for t in v.get("enum", [])}
    assert len(hosting) > 50
    gpu = {t for t in hosting if tables.instance_kind(t) in ("gpu", "unknown")}
    missing = gpu - set(tables.instance_types()) - set(tables.excluded_gpu_instance_types())
    assert not missing, sorted(missing)
    assert set(tables.excluded_gpu_instance_types()) <= hosting


def test_fails_for_release_not_in_table() -> None:
    with pytest.raises(TritonValidationError) as exc:
        tables.release("22.01")
    assert exc.value.code == "UnknownTritonRelease"
