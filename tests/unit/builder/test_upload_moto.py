"""Upload against moto's S3 server on 127.0.0.1: skip existing, server-side copy, zero PUTs on no-op."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from cdk_triton.builder import run_build
from tests.unit.builder.helpers import ensemble, tiny, write_decl

ENDPOINTS = """
  - name: sme
    mode: SingleModel
    instance_types: [ml.g5.xlarge]
    models: [ens]
  - name: mme
    mode: MultiModel
    instance_types: [ml.g5.xlarge]
    models: [solo, ens]
"""
ENSEMBLE = ensemble(
    "{model: step_a, input_map: {x: x}, output_map: {y: mid}}",
    "{model: step_b, input_map: {x: mid}, output_map: {y: y}}",
)


@pytest.fixture(scope="module")
def s3(moto_s3: Any) -> Any:
    client = moto_s3
    client.create_bucket(Bucket="test-bucket")
    calls: Counter[str] = Counter()
    methods: Counter[str] = Counter()
    client.meta.events.register(
        "before-call.s3.*", lambda event_name, **kw: calls.update([event_name.split(".")[-1]])
    )
    client.meta.events.register("before-send.s3.*", lambda request, **kw: methods.update([request.method]))
    yield client, calls, methods


def _decl(tmp: Path, width: int = 3) -> Path:
    body = (
        tiny("step_a")
        .replace("shape: [3]", "shape: [4]")
        .replace("tiny_models:tiny", "tiny_models:tiny")
        .replace("seed: 0", "seed: 0, kwargs: {outputs: 4}")
        + tiny("step_b").replace("seed: 0", f"seed: {width}")
        + tiny("solo")
        + ENSEMBLE
    )
    return write_decl(tmp, body, endpoints=ENDPOINTS)


def _keys(client: Any) -> set[str]:
    return {o["Key"] for o in client.list_objects_v2(Bucket="test-bucket").get("Contents", [])}


def test_upload_then_noop_then_incremental(s3: Any, tmp_path: Path) -> None:
    client, calls, methods = s3
    decl = _decl(tmp_path)
    out = tmp_path / "out"
    first = run_build(decl, out_dir=out, upload=True, progress=False, s3_client=client)
    m = first.manifest
    assert m.uploaded is True
    keys = _keys(client)
    sme = m.endpoint("sme")
    prefix = sme.s3_uri.removeprefix("s3://test-bucket/")
    assert {f"{prefix}ens/config.pbtxt", f"{prefix}ens/1/.keep", f"{prefix}step_a/1/model.onnx"} <= keys
    assert not [k for k in keys if k.endswith("/")]  # no folder markers: SageMaker would refuse them
    for t in m.endpoint("mme").target_models.values():
        assert t.s3_uri.removeprefix("s3://test-bucket/") in keys
    assert first.uploaded + first.copied == len(keys)  # identical sample files are copied server-side
    assert {k for k in keys if k.startswith("prefix/samples/")}  # samples are uploaded too

    calls.clear()
    methods.clear()
    again = run_build(decl, out_dir=out, upload=True, progress=False, s3_client=client)
    assert again.exported == 0 and again.uploaded == 0 and again.copied == 0
    assert methods["PUT"] == 0 and methods["POST"] == 0, methods
    assert not {"PutObject", "UploadPart", "CopyObject", "CreateMultipartUpload"} & set(calls)
    offline = run_build(decl, out_dir=out, progress=False)  # no --upload: the ledger says it is all there
    assert offline.manifest.uploaded is True

    # change one step: its files are uploaded, the unchanged SME files are copied server-side
    calls.clear()
    changed = run_build(_decl(tmp_path, width=7), out_dir=out, upload=True, progress=False, s3_client=client)
    assert changed.exported == 2  # step_b and the ensemble that contains it
    assert changed.copied >= 3  # step_a's model.onnx + config.pbtxt, ...
    assert calls["CopyObject"] + calls["UploadPartCopy"] == changed.copied
    assert calls["PutObject"] == changed.uploaded
    new_prefix = changed.manifest.endpoint("sme").s3_uri.removeprefix("s3://test-bucket/")
    assert new_prefix != prefix and f"{new_prefix}step_a/1/model.onnx" in _keys(client)
    # the MME archive of the unchanged target is the same object; the changed ensemble got a new one
    old_t, new_t = m.endpoint("mme").target_models, changed.manifest.endpoint("mme").target_models
    assert old_t["solo"].s3_uri == new_t["solo"].s3_uri and old_t["ens"].s3_uri != new_t["ens"].s3_uri
    assert sorted(p.name for p in (out / "mme" / "mme").glob("*.tar.gz")) == sorted(
        t.target_model for t in new_t.values()
    )


def test_build_without_upload_computes_uris_offline(tmp_path: Path) -> None:
    result = run_build(_decl(tmp_path), out_dir=tmp_path / "out", progress=False)
    m = result.manifest
    assert m.uploaded is False and result.uploaded == 0
    assert m.endpoint("sme").s3_uri.startswith("s3://test-bucket/prefix/sme/sme/")
    assert m.endpoint("mme").s3_prefix == "s3://test-bucket/prefix/mme/mme/"


def test_sse_kms_is_requested(s3: Any, tmp_path: Path) -> None:
    client, _, _ = s3
    decl = _decl(tmp_path)
    decl.write_text(
        decl.read_text()
        .replace(
            "artifact_location:",
            "kms_key_arn: arn:aws:kms:us-east-1:123456789012:"
            "key/11111111-2222-3333-4444-555555555555\nartifact_location:",
        )
        .replace("s3://test-bucket/prefix/", "s3://test-bucket/kms/")
    )
    seen: list[dict[str, Any]] = []
    client.meta.events.register("before-call.s3.PutObject", lambda params, **kw: seen.append(params))
    try:
        run_build(decl, out_dir=tmp_path / "out", upload=True, progress=False, s3_client=client)
    finally:
        client.meta.events.unregister("before-call.s3.PutObject")
    assert seen and all(p["headers"].get("x-amz-server-side-encryption") == "aws:kms" for p in seen)
    assert all("x-amz-server-side-encryption-aws-kms-key-id" in p["headers"] for p in seen)


def test_identical_files_under_two_keys_are_both_recorded(s3: Any, tmp_path: Path) -> None:
    """Two SME endpoints serving the same model hold identical files under two prefixes: after an
    upload, a build without --upload still finds every key recorded (manifest.uploaded is true)."""
    client, calls, _ = s3
    endpoints = "".join(
        f"\n  - name: {n}\n    mode: SingleModel\n    instance_types: [ml.g5.xlarge]\n    models: [solo]\n"
        for n in ("one", "two")
    )
    decl = write_decl(tmp_path, tiny("solo"), endpoints=endpoints, location="s3://test-bucket/twice/")
    out = tmp_path / "out"
    calls.clear()
    first = run_build(decl, out_dir=out, upload=True, progress=False, s3_client=client)
    # 2 files + the sample request and response; the second prefix is copied server-side
    assert first.uploaded == 4 and first.copied == 2
    assert run_build(decl, out_dir=out, progress=False).manifest.uploaded is True
