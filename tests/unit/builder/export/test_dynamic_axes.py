"""Dynamic non-batch axes (-1 in a declared shape): free in every exported artifact, -1 in
config.pbtxt, parity at two sizes, one TensorRT profile per declared shape_range."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cdk_triton.builder import run_build
from cdk_triton.builder.export import onnx as onnx_export
from cdk_triton.builder.export import tensorrt as trt
from cdk_triton.builder.pbtxt import IoTensor
from cdk_triton.errors import BuildError
from tests.unit.builder.helpers import write_decl

SEQ = """
  - name: {name}
    format: {format}
    source: {{factory: tiny_models:seq_mean, seed: 0}}
    inputs: [{{name: ids, dtype: INT64, shape: [-1], range: [0, 50]{extra}}}]
    outputs: [{{name: y, dtype: FP32, shape: [3]}}]
    max_batch_size: 4
"""


def seq(name: str, format: str = "onnx", extra: str = "") -> str:
    return SEQ.format(name=name, format=format, extra=extra)


@pytest.fixture(scope="module")
def seq_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    """A sequence model (embedding + mean over the sequence) in both formats and both ONNX exporters."""
    tmp = tmp_path_factory.mktemp("seq")
    body = (
        seq("s_onnx")
        + seq("s_legacy", extra=", sample_shape: [16]")
        + "    onnx: {exporter: torchscript}\n"
        + seq("s_ts", "torchscript", ", shape_range: {min: [1], opt: [8], max: [32]}")
        + "    dynamic_batching: {}\n"
    )
    return run_build(write_decl(tmp, body), out_dir=tmp / "out", progress=False), tmp


def _artifact(tmp: Path, name: str) -> Path:
    (entry,) = [d for d in (tmp / "out" / "cache" / "models").glob(f"{name}-*") if d.is_dir()]
    return next((entry / "1").glob("model.*"))


def test_config_keeps_the_dynamic_axis(seq_build: tuple[Any, Path]) -> None:
    result, _ = seq_build
    for name in ("s_onnx", "s_legacy", "s_ts"):
        (inp,) = result.manifest.models[name].config["input"]
        assert [int(d) for d in inp["dims"]] == [-1], name


@pytest.mark.parametrize("name", ["s_onnx", "s_legacy", "s_ts"])
def test_artifact_accepts_two_sequence_lengths(seq_build: tuple[Any, Path], name: str) -> None:
    import torch
    from tiny_models import seq_mean

    _, tmp = seq_build
    path = _artifact(tmp, name)
    torch.manual_seed(0)  # the declared seed: the weights the build exported
    eager = seq_mean()
    for length in (5, 23):
        ids = np.random.default_rng(length).integers(0, 50, size=(2, length)).astype(np.int64)
        if path.suffix == ".onnx":
            import onnxruntime as ort

            (got,) = ort.InferenceSession(str(path)).run(None, {"ids": ids})
        else:
            with torch.no_grad():
                got = torch.jit.load(str(path))(torch.from_numpy(ids)).numpy()
        with torch.no_grad():
            want = eager(torch.from_numpy(ids)).numpy()
        np.testing.assert_allclose(got, want, atol=1e-5)


def test_onnx_graph_names_the_sequence_axis(seq_build: tuple[Any, Path]) -> None:
    import onnx

    _, tmp = seq_build
    for name in ("s_onnx", "s_legacy"):
        (inp,) = onnx.load(str(_artifact(tmp, name))).graph.input
        dims = inp.type.tensor_type.shape.dim
        assert [d.HasField("dim_value") for d in dims] == [False, False], name


def test_dynamic_batching_with_a_dynamic_axis_warns(seq_build: tuple[Any, Path]) -> None:
    result, _ = seq_build
    (w,) = [w for w in result.warnings if "s_ts" in w and "equal shape" in w]
    assert "allow_ragged_batch" in w


def test_parity_runs_at_a_second_size(tmp_path: Path) -> None:
    """A trace at one length that bakes in a branch is caught: the other size differs."""
    body = """
  - name: hazard
    format: torchscript
    source: {factory: tiny_models:seq_hazard, seed: 0}
    inputs: [{name: x, dtype: FP32, shape: [-1, 2], shape_range: {min: [1, 2], opt: [3, 2], max: [8, 2]}}]
    outputs: [{name: y, dtype: FP32, shape: [1, 2]}]
    max_batch_size: 4
"""
    with pytest.raises(BuildError, match=r"differs from the eager model.*\[ParityMismatch\]"):
        run_build(write_decl(tmp_path, body), out_dir=tmp_path / "out", progress=False)


def test_fails_when_an_onnx_file_fixes_a_declared_dynamic_axis(tmp_path: Path) -> None:
    import torch
    from tiny_models import seq_mean

    torch.onnx.export(
        seq_mean(),
        (torch.zeros(2, 16, dtype=torch.int64),),
        str(tmp_path / "fixed.onnx"),
        input_names=["ids"],
        output_names=["y"],
        dynamic_axes={"ids": {0: "b"}, "y": {0: "b"}},
        dynamo=False,
        opset_version=18,
    )
    body = seq("fixed", extra=", sample_shape: [16]").replace(
        "factory: tiny_models:seq_mean, seed: 0", "onnx: fixed.onnx"
    )
    with pytest.raises(BuildError, match=r"fixes it to \[16\].*declare shape: \[16\] \[ShapeMismatch\]"):
        run_build(write_decl(tmp_path, body), out_dir=tmp_path / "out", progress=False)


def test_dynamic_shapes_are_keyed_by_forward_argument_names(tmp_path: Path) -> None:
    from tiny_models import seq_mean

    from tests.unit.builder.helpers import spec_of

    m = spec_of(tmp_path, seq("s")).model("s")
    shapes = onnx_export.dynamic_shapes(seq_mean(), m)
    assert isinstance(shapes, dict) and list(shapes) == ["ids"] and sorted(shapes["ids"]) == [0, 1]
    assert onnx_export.dynamic_axes(m) == {"ids": {0: "batch", 1: "ids_1"}, "y": {0: "batch"}}
    unbatched = replace(m, max_batch_size=0)
    assert onnx_export.dynamic_axes(unbatched) == {"ids": {0: "ids_0"}}


def test_tensorrt_profile_follows_the_declared_shape_range(tmp_path: Path) -> None:
    from tests.unit.builder.helpers import spec_of

    body = seq("p", "tensorrt", ", shape_range: {min: [1], opt: [64], max: [128]}").replace(
        "source: {factory: tiny_models:seq_mean, seed: 0}", "source: {factory: tiny_models:seq_mean, seed: 0}"
    )
    m = spec_of(tmp_path, body + "    dynamic_batching: {preferred_batch_sizes: [2]}\n").model("p")
    (prof,) = trt.profiles(m, [IoTensor(name="ids", dtype="INT64", dims=(-1,))])
    assert (prof.min, prof.opt, prof.max) == ((1, 1), (2, 64), (4, 128))
    unranged = replace(m, inputs=(replace(m.inputs[0], shape_range=None),))
    with pytest.raises(BuildError, match=r"no shape_range.*\[MissingShapeRange\]"):
        trt.profiles(unranged, [IoTensor(name="ids", dtype="INT64", dims=(-1,))])
