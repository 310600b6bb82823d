"""The export step: every exporter, file sources and ensembles, each checked for parity."""

from __future__ import annotations

import json
from pathlib import Path

from cdk_triton.builder import run_build
from tests.unit.builder.helpers import tiny, write_decl


def test_every_exporter_passes_parity(tiny_build) -> None:  # type: ignore[no-untyped-def]
    result, _ = tiny_build
    assert result.exported == 3
    for row in result.rows:
        assert float(row["parity"]) < 1e-5
    ts = result.manifest.models["t_script"].config
    assert ts["platform"] == "pytorch_libtorch" and ts["input"][0]["name"] == "INPUT__0"


def test_onnx_and_torchscript_file_sources(tiny_build, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result, tmp = tiny_build
    cache = tmp / "out" / "cache" / "models"
    onnx_file = next(cache.glob("t_onnx-*[!n]")) / "1" / "model.onnx"
    ts_file = next(cache.glob("t_ts-*[!n]")) / "1" / "model.pt"
    body = tiny("f_onnx").replace("factory: tiny_models:tiny, seed: 0", f"onnx: {onnx_file}") + tiny(
        "f_ts", "torchscript"
    ).replace("factory: tiny_models:tiny, seed: 0", f"torchscript: {ts_file}")
    out = run_build(write_decl(tmp_path, body), out_dir=tmp_path / "out", progress=False)
    assert out.exported == 2 and out.manifest.models["f_onnx"].config["input"][0]["name"] == "x"


def test_ensemble_maps_declared_names_to_torchscript_config_names(tmp_path: Path) -> None:
    body = (
        tiny("ts_step", "torchscript")
        + """
  - name: ens_ts
    format: ensemble
    inputs: [{name: features, dtype: FP32, shape: [4]}]
    outputs: [{name: scores, dtype: FP32, shape: [3]}]
    max_batch_size: 4
    steps:
      - {model: ts_step, input_map: {x: features}, output_map: {y: scores}}
"""
    )
    result = run_build(write_decl(tmp_path, body), out_dir=tmp_path / "out", progress=False)
    (step,) = result.manifest.models["ens_ts"].config["ensemble_scheduling"]["step"]
    assert step["input_map"] == {"INPUT__0": "features"} and step["output_map"] == {"OUTPUT__0": "scores"}
    sample = json.loads(result.manifest.resolve(result.manifest.models["ens_ts"].sample.response).read_text())
    assert sample["outputs"][0]["name"] == "scores"
    assert "parity" in result.rows[-1] and float(result.rows[-1]["parity"]) < 1e-6
