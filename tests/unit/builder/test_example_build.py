"""The example build: manifest, repositories, archives, samples, and the no-op rebuild."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from importlib import resources
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from cdk_triton.builder import run_build
from cdk_triton.builder.pbtxt import parse_pbtxt
from cdk_triton.config.manifest import read_manifest
from tests.unit.builder.helpers import EXAMPLE, tiny, write_decl

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "manifests"


def _schema() -> dict:
    return json.loads(
        resources.files("cdk_triton.config").joinpath("data", "manifest.schema.json").read_text()
    )


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.glob("*.json")))
def test_fixture_manifests_match_schema(fixture: str) -> None:
    jsonschema.validate(json.loads((FIXTURES / fixture).read_text()), _schema())


def test_schema_rejects_a_bad_manifest() -> None:
    data = json.loads((FIXTURES / "example.json").read_text())
    data["endpoints"]["multi"]["s3_prefix"] = "s3://bucket/no-slash"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, _schema())


def test_built_manifest_matches_schema_and_reads_back(example_build) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(example_build.manifest_path.read_text())
    jsonschema.validate(data, _schema())
    m = read_manifest(example_build.manifest_path)
    assert m.triton_version == "24.09" and m.uploaded is False
    assert set(m.endpoints) == {
        "classifier",
        "multi",
        "running_sum",
        "components",
        "classifier_async",
        "classifier_pools",
    }
    assert m.endpoint("classifier_async").async_inference is not None
    pools = m.endpoint("classifier_pools").instance_pools
    assert pools is not None and pools.instance_types == ("ml.g5.xlarge", "ml.g6.xlarge")
    assert m.models["running_sum"].sequence_batching and not m.models["classifier"].sequence_batching
    assert "classifier_trt" in example_build.skipped_models
    assert {"torch", "onnx", "onnxruntime", "cdk_triton"} <= set(m.tool_versions)


def test_components_endpoint_reuses_the_mme_archives(example_build) -> None:  # type: ignore[no-untyped-def]
    m = example_build.manifest
    ics, mme = m.endpoint("components"), m.endpoint("multi")
    assert ics.hosting_mode.components and sorted(ics.components) == ["bert", "classifier"]
    for name in ("classifier", "bert"):  # the same bytes as the MME's archive, one component each
        assert ics.target_models[name].sha256 == mme.target_models[name].sha256
        assert ics.components[name].min_copies == 0 and ics.components[name].copies == 1
    assert ics.target_models["classifier"].models == ["classifier", "preprocess", "resnet"]
    assert (ics.components["classifier"].component_name, ics.min_instances) == ("components-classifier", 0)


def test_sme_endpoint_is_a_directory_repository(example_build) -> None:  # type: ignore[no-untyped-def]
    m = example_build.manifest
    ep = m.endpoint("classifier")
    assert ep.mode == "SingleModel" and ep.packaging == "directory" and ep.default_model == "classifier"
    assert ep.instance_types == ["ml.g5.xlarge"]
    assert ep.s3_uri.startswith("s3://cdk-triton-example-artifacts-ACCOUNT/cdk-triton/sme/classifier/")
    assert ep.s3_uri.endswith("/")
    repo = m.resolve(ep.local_path)
    assert sorted(p.name for p in repo.iterdir()) == ["classifier", "preprocess", "resnet"]
    # the ensemble's version folder holds a placeholder file: S3 keeps no empty folder (no marker keys)
    assert [p.name for p in (repo / "classifier" / "1").iterdir()] == [".keep"]
    assert (repo / "resnet" / "1" / "model.onnx").is_file()
    assert (repo / "preprocess" / "1" / "model.py").is_file()
    assert not list(repo.rglob("__pycache__")) and not list(repo.rglob("*.pyc"))
    for d in repo.iterdir():  # config names equal directory names (SME requirement)
        assert parse_pbtxt((d / "config.pbtxt").read_text()).name == d.name
    assert ep.sample is not None and m.resolve(ep.sample.request).is_file()


def test_mme_archives_hold_one_model_or_one_ensemble(example_build) -> None:  # type: ignore[no-untyped-def]
    m = example_build.manifest
    ep = m.endpoint("multi")
    assert ep.s3_prefix == "s3://cdk-triton-example-artifacts-ACCOUNT/cdk-triton/mme/multi/"
    assert set(ep.target_models) == {"classifier_ts", "classifier_onnx", "classifier", "bert"}
    names: list[str] = []
    for logical, t in ep.target_models.items():
        assert t.target_model.startswith(f"{logical}-") and t.target_model.endswith(".tar.gz")
        assert t.target_model[len(logical) + 1 : -7] == t.sha256[:12]
        assert t.s3_uri == ep.s3_prefix + t.target_model
        path = m.resolve(t.local_path)
        with tarfile.open(path) as tar:
            members = tar.getmembers()
            tops = sorted({x.name.split("/")[0] for x in members})
            assert tops == sorted(t.models)
            assert all(x.mtime == 0 and x.uid == 0 and x.gid == 0 for x in members)
            assert f"{t.model}/config.pbtxt" in [x.name for x in members]
            if len(tops) > 1:  # only an ensemble brings several model directories
                cfg = parse_pbtxt(tar.extractfile(f"{t.model}/config.pbtxt").read().decode())  # type: ignore[union-attr]
                assert cfg.platform == "ensemble" and f"{t.model}/1" in [x.name for x in members]
        names += t.models
        assert t.sample is not None
    assert len(names) == len(set(names)), "model names must be unique across an MME"


def test_model_entries_and_configs(example_build) -> None:  # type: ignore[no-untyped-def]
    m = example_build.manifest
    ts = m.models["classifier_ts"]
    assert ts.platform == "pytorch_libtorch" and ts.backend == "pytorch"
    assert [i["name"] for i in ts.config["input"]] == ["INPUT__0"]
    assert [o["name"] for o in ts.config["output"]] == ["OUTPUT__0"]
    assert ts.config["parameters"]["INFERENCE_MODE"] == {"string_value": "true"}
    onnx = m.models["classifier_onnx"]
    assert onnx.config["dynamic_batching"]["preferred_batch_size"] == [4, 8]
    assert onnx.config["model_warmup"][0]["inputs"]["PIXELS"]["zero_data"] is True
    assert m.models["classifier"].steps == ["preprocess", "resnet"]
    bert = m.models["bert"]
    assert [i["data_type"] for i in bert.config["input"]] == ["TYPE_INT64", "TYPE_INT64"]
    assert bert.config["output"][0]["dims"] == ["128", "128"]
    assert m.models["preprocess"].backend == "python" and "platform" not in m.models["preprocess"].config
    for entry in m.models.values():
        assert entry.sample is not None and entry.source_sha256


def test_samples_are_v2_bodies_with_expected_outputs(example_build) -> None:  # type: ignore[no-untyped-def]
    m = example_build.manifest
    s = m.models["classifier_ts"].sample
    req = json.loads(m.resolve(s.request).read_text())
    resp = json.loads(m.resolve(s.response).read_text())
    (inp,) = req["inputs"]
    assert inp["name"] == "INPUT__0" and inp["datatype"] == "FP32" and inp["shape"] == [1, 3, 32, 32]
    (out,) = resp["outputs"]
    assert out["name"] == "OUTPUT__0" and out["shape"] == [1, 10]
    # the ONNX model and the TorchScript model got the same input and agree
    r2 = json.loads(m.resolve(m.models["classifier_onnx"].sample.response).read_text())
    np.testing.assert_allclose(out["data"], r2["outputs"][0]["data"], atol=1e-4)
    ens = json.loads(m.resolve(m.endpoint("classifier").sample.request).read_text())
    assert ens["inputs"][0]["datatype"] == "UINT8" and ens["inputs"][0]["shape"] == [1, 32, 32, 3]


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(root)): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file()
    }


def test_noop_rebuild_exports_and_writes_nothing(example_build) -> None:  # type: ignore[no-untyped-def]
    out = example_build.manifest_path.parent
    before = _snapshot(out)
    again = run_build(EXAMPLE, out_dir=out, progress=False)
    assert again.exported == 0 and again.packaged == 0 and again.uploaded == 0
    assert _snapshot(out) == before
    assert again.manifest.to_dict() == example_build.manifest.to_dict()


DETERMINISM_MODELS = (
    tiny("t_onnx")
    + tiny("t_ts", "torchscript")
    + """
  - name: pre
    format: python
    source: {python: preprocess}
    inputs: [{name: IMAGE, dtype: UINT8, shape: [32, 32, 3]}]
    outputs: [{name: PIXELS, dtype: FP32, shape: [3, 32, 32]}]
    max_batch_size: 4
"""
)
DETERMINISM_ENDPOINTS = """
  - name: sme
    mode: SingleModel
    instance_types: [ml.g5.xlarge]
    models: [t_onnx, pre]
    default_model: t_onnx
    packaging: tar.gz
  - name: mme
    mode: MultiModel
    instance_types: [ml.g5.xlarge]
    models: [t_onnx, t_ts, pre]
"""


def test_cli_builds_are_byte_identical(tmp_path: Path) -> None:
    """Two forced builds (separate processes, as CI runs them) of the same declaration in two
    checkouts at different paths give byte-identical files: no absolute path (of the factory's
    file, of site-packages) reaches an artifact through TorchScript debug info or ONNX stack traces."""
    outs = []
    for name, checkout in (("a", "decl"), ("b", "another/checkout/at/a/longer/path")):
        decl = write_decl(tmp_path / checkout, DETERMINISM_MODELS, endpoints=DETERMINISM_ENDPOINTS)
        out = tmp_path / name
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "cdk_triton.cli",
                "build",
                "--config",
                str(decl),
                "--out",
                str(out),
                "--force",
                "--no-progress",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert "exported 3" in proc.stdout
        outs.append(out)
    files = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*") if p.is_file() and p.name != ".lock")
    assert sum(str(f).endswith(".tar.gz") for f in files) == 4
    for f in files:
        assert (outs[0] / f).read_bytes() == (outs[1] / f).read_bytes(), f


def test_every_model_entry_records_the_size_of_its_files(example_build) -> None:  # type: ignore[no-untyped-def]
    """size_bytes: the model directory's files, what the GPU-memory warning at synth multiplies by instances."""
    m = example_build.manifest
    repo = m.resolve(m.endpoint("classifier").local_path)
    for name in ("resnet", "preprocess"):
        on_disk = sum(
            p.stat().st_size for p in (repo / name).rglob("*") if p.is_file() and p.name != "config.pbtxt"
        )
        with_config = sum(p.stat().st_size for p in (repo / name).rglob("*") if p.is_file())
        assert m.models[name].size_bytes in (on_disk, with_config), name
    assert m.models["resnet"].size_bytes > 100_000  # the ONNX weights


def test_every_model_entry_records_its_memory_and_how_it_was_found(example_build) -> None:  # type: ignore[no-untyped-def]
    """memory_bytes (schema 4): the weight files plus the activation peak of one inference at
    max_batch_size, counted on fake tensors, where the build has the factory's module (ONNX and
    TorchScript from a factory); the stated fallback, weight files plus I/O, for python and ensemble
    models. The peak holds the inputs and outputs, so it is above them."""
    from cdk_triton.config import sizing

    m = example_build.manifest
    assert m.schema_version == 4
    resnet, pre, ens = m.models["resnet"], m.models["preprocess"], m.models["classifier"]
    assert resnet.memory_source == sizing.ACTIVATIONS
    io, _ = sizing.io_bytes(resnet.config)
    assert resnet.memory_bytes > resnet.size_bytes + io  # type: ignore[operator]
    assert m.models["classifier_ts"].memory_source == sizing.ACTIVATIONS
    assert (pre.memory_source, ens.memory_source) == (sizing.FILES_IO, sizing.FILES_IO)
    assert all(e.memory_bytes for e in m.models.values())
