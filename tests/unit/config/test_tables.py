"""The vendored data tables: image accounts, instance types, releases."""

from __future__ import annotations

import json
from pathlib import Path

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


def test_vendored_data_equals_shared_data() -> None:
    if not SHARED.is_dir():
        pytest.skip("shared/ not beside the checkout")
    for name in ("sagemaker-tritonserver.json", "sagemaker-tritonserver-legacy.json", "instance-types.json"):
        vendored = json.loads((Path(tables.__file__).parent / "data" / name).read_text())
        assert vendored == json.loads((SHARED / name).read_text()), name


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
    rel = tables.release(tables.DEFAULT_TRITON_VERSION)
    assert rel.onnxruntime.confirmed and rel.tensorrt.confirmed
    assert rel.onnx_max_opset == 21 and rel.onnx_max_ir_version == 10
    # no newer release has both confirmed: the default is the newest one that does
    newer = [
        r
        for v, r in tables.releases().items()
        if tables._version_key(v) > tables._version_key(tables.DEFAULT_TRITON_VERSION)
    ]
    assert all(not (r.onnxruntime.confirmed and r.tensorrt.confirmed) for r in newer)


def test_fails_for_release_not_in_table() -> None:
    with pytest.raises(TritonValidationError) as exc:
        tables.release("22.01")
    assert exc.value.code == "UnknownTritonRelease"
