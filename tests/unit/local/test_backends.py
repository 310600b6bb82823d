"""The CPU python-based backends outside the server: batching of one execute() call, dims texts."""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from cdk_triton.local.runtime import BACKENDS_DIR


def _load(path: Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def pb_utils(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """A stand-in for triton_python_backend_utils (only what the backends call)."""
    fake = types.ModuleType("triton_python_backend_utils")

    class Tensor:
        def __init__(self, name: str, array: np.ndarray):
            self.name, self.array = name, array

        def as_numpy(self) -> np.ndarray:
            return self.array

    class InferenceResponse:
        def __init__(self, output_tensors: list[Tensor], error: object = None):
            self.output_tensors, self.error = output_tensors, error

    class TritonError:
        def __init__(self, message: str):
            self.message = message

    fake.Tensor = Tensor  # type: ignore[attr-defined]
    fake.InferenceResponse = InferenceResponse  # type: ignore[attr-defined]
    fake.TritonError = TritonError  # type: ignore[attr-defined]
    fake.get_input_tensor_by_name = lambda request, name: request.get(name)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "triton_python_backend_utils", fake)
    return fake


@pytest.fixture()
def common() -> types.ModuleType:
    return _load(BACKENDS_DIR / "common" / "cpu_backend.py", "cpu_backend_under_test")


def _config(max_batch_size: int = 8) -> dict:
    return {
        "name": "m",
        "max_batch_size": max_batch_size,
        "input": [{"name": "x", "data_type": "TYPE_FP32", "dims": ["3"]}],
        "output": [{"name": "y", "data_type": "TYPE_FP32", "dims": ["3"]}],
    }


def test_requests_of_one_execute_call_run_as_one_batch(common, pb_utils) -> None:
    calls: list[tuple[int, ...]] = []

    class Doubler(common.BatchingModel):
        def run(self, feeds):
            calls.append(feeds["x"].shape)
            return {"y": feeds["x"] * 2}

    model = Doubler()
    model.initialize({"model_config": json.dumps(_config())})
    requests = [{"x": pb_utils.Tensor("x", np.full((n, 3), n, np.float32))} for n in (1, 2, 3)]
    responses = model.execute(requests)
    assert calls == [(6, 3)]  # one run over 1 + 2 + 3 rows
    for n, response in zip((1, 2, 3), responses, strict=True):
        (out,) = response.output_tensors
        np.testing.assert_array_equal(out.array, np.full((n, 3), 2 * n, np.float32))


def test_a_failing_batch_answers_every_request_with_the_error(common, pb_utils) -> None:
    class Broken(common.BatchingModel):
        def run(self, feeds):
            raise RuntimeError("boom")

    model = Broken()
    model.initialize({"model_config": json.dumps(_config())})
    responses = model.execute([{"x": pb_utils.Tensor("x", np.zeros((1, 3), np.float32))}] * 2)
    assert [r.error.message for r in responses] == ["RuntimeError: boom"] * 2


def test_compare_dims_uses_the_backend_library_texts(common) -> None:
    assert common.compare_dims("m", "x", [-1, 3], [3], 8) is None
    assert common.compare_dims("m", "x", [-1, -1], [3], 8) is None
    assert "first dimension must be -1" in common.compare_dims("m", "x", [1, 3], [3], 8)
    assert common.compare_dims("m", "x", [-1, 3], [4], 8) == (
        "model 'm', tensor 'x': the model expects 2 dimensions (shape [-1,3]) but the model configuration "
        "specifies 2 dimensions (an initial batch dimension because max_batch_size > 0 followed by the explicit "
        "tensor shape, making complete shape [8,4])"
    )
    assert common.compare_dims("m", "x", [3], [3, 1], 0) == (
        "model 'm', tensor 'x': the model expects 1 dimensions (shape [3]) but the model configuration specifies "
        "2 dimensions (shape [3,1])"
    )


def test_tensorrt_backend_refuses_with_a_gpu_message(pb_utils) -> None:
    trt = _load(BACKENDS_DIR / "tensorrt" / "model.py", "trt_under_test")
    with pytest.raises(RuntimeError, match="need an NVIDIA GPU"):
        trt.TritonPythonModel().initialize({"model_config": json.dumps(_config())})


def test_onnxruntime_sessions_do_not_spin_their_thread_pools(
    tmp_path: Path, pb_utils, common, monkeypatch: pytest.MonkeyPatch
) -> None:
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", 3])],
    )
    (tmp_path / "1").mkdir()
    onnx.save(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8),
        tmp_path / "1" / "model.onnx",
    )
    config = {**_config(), "parameters": {"intra_op_thread_count": {"string_value": "2"}}}
    monkeypatch.setitem(sys.modules, "cpu_backend", common)  # copied beside model.py when served
    module = _load(BACKENDS_DIR / "onnxruntime" / "model.py", "ort_backend_under_test")
    model = module.TritonPythonModel()
    model.initialize(
        {"model_config": json.dumps(config), "model_repository": str(tmp_path), "model_version": "1"}
    )
    options = model.session.get_session_options()
    assert options.intra_op_num_threads == 2
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert options.get_session_config_entry("session.inter_op.allow_spinning") == "0"
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert np.array_equal(model.run({"x": x})["y"], x)
