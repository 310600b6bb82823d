"""The manifest: read, validate, write."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cdk_triton.config.manifest import (
    SCHEMA_VERSION,
    ArtifactLocation,
    ManifestError,
    manifest_from_dict,
    read_manifest,
    write_manifest,
)
from cdk_triton.errors import TritonValidationError


def test_reads_fixture(example_manifest_path: Path) -> None:
    m = read_manifest(example_manifest_path)
    sme = m.endpoint("classifier")
    assert sme.mode == "SingleModel" and sme.default_model == "classifier" and sme.compression == "None"
    mme = m.endpoint("multi")
    assert mme.is_multi_model and mme.s3_prefix and mme.s3_prefix.endswith("/")
    assert set(mme.target_model_map()) == {"classifier", "resnet_ts"}
    assert m.resolve(sme.local_path or "") == example_manifest_path.parent / "sme/classifier/repository"


def test_write_then_read_is_identity(tmp_path: Path, example_manifest_path: Path) -> None:
    m = read_manifest(example_manifest_path)
    p = write_manifest(m, tmp_path)
    again = read_manifest(p)
    assert again.to_dict() == m.to_dict()
    assert p.read_bytes() == write_manifest(again, tmp_path / "b.json").read_bytes()
    assert not list(tmp_path.glob(".manifest-*"))


def _raw(example_manifest_path: Path) -> dict:
    return json.loads(example_manifest_path.read_text())


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda d: d.pop("triton_version"), "'$.triton_version'"),
        (lambda d: d.__setitem__("schema_version", 99), "99"),
        (lambda d: d["endpoints"]["classifier"].__setitem__("mode", "Multi"), "'endpoints.classifier.mode'"),
        (lambda d: d["endpoints"]["classifier"].__setitem__("s3_uri", "s3://b/x"), "ending '/'"),
        (
            lambda d: d["endpoints"]["multi"].__setitem__("target_models", {}),
            "'endpoints.multi.target_models'",
        ),
        (lambda d: d["models"]["resnet"].__setitem__("bogus", 1), "'models.resnet.bogus'"),
        (lambda d: d.__setitem__("uploaded", "no"), "'$.uploaded'"),
    ],
)
def test_fails_on_bad_manifest_naming_the_field(example_manifest_path: Path, mutate, needle: str) -> None:
    data = _raw(example_manifest_path)
    mutate(data)
    with pytest.raises(ManifestError) as exc:
        manifest_from_dict(data, source="m.json")
    assert needle in str(exc.value)
    assert str(exc.value).endswith("at m.json")


def test_fails_when_missing(tmp_path: Path) -> None:
    with pytest.raises(ManifestError) as exc:
        read_manifest(tmp_path / "nope.json")
    assert exc.value.code == "ManifestNotFound" and "cdk-triton build" in str(exc.value)


def test_unknown_endpoint_lists_known(example_manifest_path: Path) -> None:
    with pytest.raises(TritonValidationError) as exc:
        read_manifest(example_manifest_path).endpoint("nope")
    assert "classifier, multi" in str(exc.value)


def test_artifact_location_uri() -> None:
    loc = ArtifactLocation.from_uri("s3://bucket/a/b")
    assert loc.bucket == "bucket" and loc.uri == "s3://bucket/a/b/"
    assert ArtifactLocation(bucket="b").uri == "s3://b/"


def test_pure_layer_imports_nothing_heavy() -> None:
    code = (
        "import sys, cdk_triton, cdk_triton.config.manifest, cdk_triton.config.server_options;"
        "bad = [m for m in ('torch','aws_cdk','google.protobuf','tritonclient','numpy','yaml') if m in sys.modules];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_onnx_opset_and_ir_version_are_read_and_old_manifests_still_read(example_manifest_path: Path) -> None:
    data = _raw(example_manifest_path)
    old = manifest_from_dict(data).models["resnet"]
    assert (old.onnx_opset, old.onnx_ir_version) == (None, None)  # written before the record
    data["models"]["resnet"].update(onnx_opset=17, onnx_ir_version=8)
    entry = manifest_from_dict(data).models["resnet"]
    assert (entry.onnx_opset, entry.onnx_ir_version) == (17, 8)
    assert manifest_from_dict(data).to_dict()["models"]["resnet"]["onnx_opset"] == 17
    data["models"]["resnet"]["onnx_opset"] = "17"
    with pytest.raises(ManifestError, match="models.resnet.onnx_opset"):
        manifest_from_dict(data)


def test_schema_describes_the_onnx_record() -> None:
    schema = json.loads(
        (Path(__file__).resolve().parents[3] / "cdk_triton/config/data/manifest.schema.json").read_text()
    )
    model = next(d for d in schema["$defs"].values() if "tensorrt_version" in d.get("properties", {}))
    assert (
        model["properties"]["onnx_opset"]["type"]
        == model["properties"]["onnx_ir_version"]["type"]
        == "integer"
    )
    assert "onnx_opset" not in model.get("required", [])


def test_schema_2_records_model_memory_and_schema_1_still_reads(example_manifest_path: Path) -> None:
    data = _raw(example_manifest_path)
    assert data["schema_version"] == 1
    old = manifest_from_dict(data).models["resnet"]
    assert (old.memory_bytes, old.memory_source) == (None, None)  # schema 1: unknown
    data["schema_version"] = SCHEMA_VERSION
    data["models"]["resnet"].update(memory_bytes=4096, memory_source="measured")
    entry = manifest_from_dict(data).models["resnet"]
    assert (entry.memory_bytes, entry.memory_source) == (4096, "measured")
    data["models"]["resnet"]["memory_source"] = "guessed"
    with pytest.raises(ManifestError, match="models.resnet.memory_source"):
        manifest_from_dict(data)
    data["schema_version"] = 2
    data["models"]["resnet"]["memory_source"] = "estimated"
    assert manifest_from_dict(data).models["resnet"].memory_bytes == 4096  # schema 2 still reads
    data["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(ManifestError, match="UnsupportedManifestVersion"):
        manifest_from_dict(data)
    schema = json.loads(
        (Path(__file__).resolve().parents[3] / "cdk_triton/config/data/manifest.schema.json").read_text()
    )
    assert schema["properties"]["schema_version"] == {"enum": [1, 2, 3, 4]}
    props = schema["$defs"]["model"]["properties"]
    assert props["memory_source"]["enum"] == ["measured", "estimated"]


def test_inference_ami_version_is_carried_and_old_manifests_still_read(example_manifest_path: Path) -> None:
    data = json.loads(example_manifest_path.read_text())
    assert "inference_ami_version" not in json.dumps(data)  # an older manifest: read, the key absent
    assert manifest_from_dict(data).endpoint("classifier").inference_ami_version is None
    data["endpoints"]["classifier"]["inference_ami_version"] = "al2-ami-sagemaker-inference-gpu-2"
    m = manifest_from_dict(data)
    assert m.endpoint("classifier").inference_ami_version == "al2-ami-sagemaker-inference-gpu-2"
    assert (
        m.to_dict()["endpoints"]["classifier"]["inference_ami_version"] == "al2-ami-sagemaker-inference-gpu-2"
    )
