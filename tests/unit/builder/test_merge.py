"""Split builds: --formats, --merge-manifest (the merge rule, conflicts, mismatches) and sample upload."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cdk_triton.builder import run_build
from cdk_triton.cli import main
from cdk_triton.config.manifest import manifest_from_dict, read_manifest
from cdk_triton.errors import BuildError, TritonValidationError
from tests.unit.builder.helpers import python_model, tiny, write_decl

ENDPOINTS = """
  - name: m
    mode: MultiModel
    instance_types: [ml.g5.xlarge]
    models: [t, pre]
  - name: s
    mode: SingleModel
    instance_types: [ml.g5.xlarge]
    models: [pre]
    packaging: directory
"""


@pytest.fixture(scope="module")
def split(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, Any]:
    """An ONNX-only build (the 'GPU' build) and a python-only build merging its manifest."""
    tmp = tmp_path_factory.mktemp("split")
    decl = write_decl(tmp, tiny("t") + python_model("pre"), endpoints=ENDPOINTS)
    first = run_build(decl, out_dir=tmp / "a", progress=False, formats="onnx")
    second = run_build(
        decl,
        out_dir=tmp / "b",
        progress=False,
        formats=["python"],
        merge_manifest=tmp / "a" / "manifest.json",
    )
    return decl, first, second


def test_formats_build_only_those_models_and_complete_endpoints(split: tuple[Path, Any, Any]) -> None:
    _, first, _ = split
    assert first.exported == 1 and set(first.manifest.models) == {"t"}
    assert set(first.manifest.endpoints) == {"m"}  # s needs pre: not built
    assert set(first.manifest.endpoints["m"].target_models) == {"t"}
    assert any("endpoint 's' not built" in w for w in first.warnings)
    assert any("target model 'pre' left out" in w for w in first.warnings)


def test_merge_manifest_takes_entries_of_formats_not_built(split: tuple[Path, Any, Any]) -> None:
    decl, first, second = split
    m = second.manifest
    assert second.exported == 1 and set(m.models) == {"t", "pre"}
    assert m.models["t"].files == first.manifest.models["t"].files
    assert set(m.endpoints) == {"m", "s"}
    target = m.endpoints["m"].target_models["t"]
    assert target.sha256 == first.manifest.endpoints["m"].target_models["t"].sha256
    assert m.resolve(target.local_path).is_file()  # relocated next to this manifest
    assert m.resolve(m.models["t"].sample.request).is_file()  # type: ignore[union-attr]
    assert set(m.endpoints["m"].target_models) == {"t", "pre"}
    # a no-op rebuild with the same merge changes nothing
    again = run_build(
        decl,
        out_dir=second.manifest_path.parent,
        progress=False,
        formats="python",
        merge_manifest=first.manifest_path,
    )
    assert again.exported == again.packaged == 0
    assert again.manifest_path.read_text() == second.manifest_path.read_text()


def test_merge_conflict_names_both_manifests(split: tuple[Path, Any, Any], tmp_path: Path) -> None:
    decl, first, second = split
    data = json.loads(first.manifest_path.read_text())
    theirs = dict(json.loads(second.manifest_path.read_text())["models"]["pre"])
    theirs["config_sha256"] = "0" * 64
    data["models"]["pre"] = theirs
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data))
    with pytest.raises(BuildError) as e:
        run_build(
            decl, out_dir=second.manifest_path.parent, progress=False, formats="python", merge_manifest=other
        )
    assert e.value.code == "ManifestMergeConflict"
    assert "model 'pre'" in str(e.value) and str(other) in str(e.value) and "this build" in str(e.value)


@pytest.mark.parametrize(
    ("key", "value"), [("triton_version", "24.08"), ("artifact_location", {"bucket": "elsewhere"})]
)
def test_merge_refuses_another_release_or_location(
    split: tuple[Path, Any, Any], tmp_path: Path, key: str, value: Any
) -> None:
    decl, first, _ = split
    data = json.loads(first.manifest_path.read_text())
    data[key] = value
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data))
    with pytest.raises(BuildError) as e:
        run_build(decl, out_dir=tmp_path / "out", progress=False, merge_manifest=other)
    assert e.value.code == "ManifestMergeMismatch" and key in str(e.value)
    assert not (tmp_path / "out").exists()  # refused before anything is written


def test_unknown_format_is_a_declaration_error(tmp_path: Path, capsys: Any) -> None:
    decl = write_decl(tmp_path, python_model())
    with pytest.raises(TritonValidationError) as e:
        run_build(decl, out_dir=tmp_path / "out", progress=False, formats="onnx,trt")
    assert e.value.code == "UnknownFormat" and "trt" in str(e.value)
    rc = main(["build", "--config", str(decl), "--formats", "python", "--no-progress", "--verify"])
    assert rc == 0 and read_manifest(tmp_path / "out").models.keys() == {"pre"}


def test_upload_puts_samples_content_addressed(tmp_path: Path, moto_s3: Any) -> None:
    moto_s3.create_bucket(Bucket="sample-bucket")
    decl = write_decl(tmp_path, python_model(), location="s3://sample-bucket/p/")
    r = run_build(decl, out_dir=tmp_path / "out", progress=False, upload=True, s3_client=moto_s3)
    s = r.manifest.models["pre"].sample
    assert s is not None and s.request_s3_uri and s.response_s3_uri
    for uri, local in ((s.request_s3_uri, s.request), (s.response_s3_uri, s.response)):
        assert uri.startswith("s3://sample-bucket/p/samples/")
        key = uri.removeprefix("s3://sample-bucket/")
        assert key.split("/")[-1] == Path(local).name and len(key.split("/")[-2]) == 12
        body = moto_s3.get_object(Bucket="sample-bucket", Key=key)["Body"].read()
        assert body == r.manifest.resolve(local).read_bytes()  # type: ignore[arg-type]
    again = run_build(decl, out_dir=tmp_path / "out", progress=False, upload=True, s3_client=moto_s3)
    assert again.uploaded == 0 and again.manifest.models["pre"].sample == s
    # old manifests (no sample URIs) still read
    data = json.loads(r.manifest_path.read_text())
    for k in ("request_s3_uri", "response_s3_uri"):
        del data["models"]["pre"]["sample"][k]
    assert manifest_from_dict(data).models["pre"].sample.request_s3_uri is None  # type: ignore[union-attr]
