"""Parity: a built artifact against its eager reference on the declared sample."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdk_triton.builder.parity import compare
from cdk_triton.errors import BuildError
from tests.unit.builder.helpers import spec_of, tiny


def test_perturbed_artifact_fails_parity(tiny_build, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import onnx
    from onnx import numpy_helper

    from cdk_triton.builder.export import onnx as onnx_export
    from cdk_triton.builder.reference import build_eager, torch_runner
    from cdk_triton.builder.samples import sample_inputs

    result, tmp = tiny_build
    rel = next(k for k in result.manifest.models["t_onnx"].files if k.endswith(".onnx"))
    src = next((tmp / "out" / "cache" / "models").glob("t_onnx-*[!n]")) / rel
    model = onnx.load(str(src))
    init = model.graph.initializer[0]
    arr = numpy_helper.to_array(init).copy()
    arr.flat[0] += 0.5
    init.CopyFrom(numpy_helper.from_array(arr, init.name))
    bad = tmp_path / "bad.onnx"
    onnx.save(model, str(bad))
    spec = spec_of(tmp, tiny("t_onnx"))
    m = spec.model("t_onnx")
    sample = sample_inputs(m)
    expected = torch_runner(build_eager(spec, m), m)(sample)
    assert compare(m, expected, onnx_export.load_runner(src, m)(sample), what="good") < 1e-5
    with pytest.raises(BuildError, match=r"largest difference .* \[ParityMismatch\]"):
        compare(m, expected, onnx_export.load_runner(bad, m)(sample), what="the perturbed artifact")
