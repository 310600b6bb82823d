"""Sequence batching in the build: config.pbtxt from the protobuf, the stateful example model run
with the control tensors Triton supplies, and a sample that is a one-request sequence."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from cdk_triton.builder import run_build
from cdk_triton.builder.pbtxt import IoTensor, build_config, parse_pbtxt, to_pbtxt
from cdk_triton.builder.python_model import PythonModelRunner
from tests.unit.builder.helpers import RUNNING_SUM, RUNNING_SUM_MODEL, spec_of, tiny, write_decl


def test_config_has_the_sequence_batcher_with_its_controls_state_and_strategy(tmp_path: Path) -> None:
    body = tiny("s") + (
        "    sequence_batching:\n"
        "      strategy: oldest\n"
        "      max_sequence_idle_microseconds: 5000000\n"
        "      control_inputs: {start: START, ready: READY, corrid: CORRID, corrid_dtype: STRING}\n"
        "      state: [{input_name: S_IN, output_name: S_OUT, dtype: FP32, shape: [-1, 4]}]\n"
        "      oldest: {max_candidate_sequences: 4, preferred_batch_sizes: [2, 4], max_queue_delay_microseconds: 100}\n"
    )
    from tritonclient.grpc import model_config_pb2 as mc

    m = spec_of(tmp_path, body).model("s")
    cfg = build_config(
        m,
        inputs=[IoTensor(name="x", dtype="FP32", dims=(4,))],
        outputs=[IoTensor(name="y", dtype="FP32", dims=(3,))],
    )
    sb = parse_pbtxt(to_pbtxt(cfg)).sequence_batching
    kinds = {c.name: sb.Control.Kind.Name(c.control[0].kind) for c in sb.control_input}
    assert kinds == {
        "START": "CONTROL_SEQUENCE_START",
        "READY": "CONTROL_SEQUENCE_READY",
        "CORRID": "CONTROL_SEQUENCE_CORRID",
    }
    start = next(c for c in sb.control_input if c.name == "START").control[0]
    corrid = next(c for c in sb.control_input if c.name == "CORRID").control[0]
    assert list(start.int32_false_true) == [0, 1] and corrid.data_type == mc.DataType.Value("TYPE_STRING")
    assert sb.max_sequence_idle_microseconds == 5000000 and sb.WhichOneof("strategy_choice") == "oldest"
    assert (sb.oldest.max_candidate_sequences, list(sb.oldest.preferred_batch_size)) == (4, [2, 4])
    (state,) = sb.state
    assert (state.input_name, state.output_name, list(state.dims)) == ("S_IN", "S_OUT", [-1, 4])
    assert not cfg.HasField("dynamic_batching")


def test_the_stateful_example_builds_with_a_one_request_sequence_sample(tmp_path: Path) -> None:
    result = run_build(write_decl(tmp_path, RUNNING_SUM_MODEL), out_dir=tmp_path / "out", progress=False)
    entry = result.manifest.models["running_sum"]
    assert entry.sequence_batching is True and entry.config["sequence_batching"]["direct"] == {}
    assert result.manifest.models["running_sum"].config["max_batch_size"] == 4
    request = json.loads(result.manifest.resolve(entry.sample.request).read_text())
    assert request["parameters"] == {"sequence_id": 1, "sequence_start": True, "sequence_end": True}
    assert "START" not in {t["name"] for t in request["inputs"]}  # Triton supplies the controls


def test_running_sum_keeps_one_sum_per_correlation_id_and_end_drops_it() -> None:
    runner = PythonModelRunner(RUNNING_SUM / "model.py", {}, name="running_sum")

    def step(value: float, corrid: int, start: int = 0, end: int = 0, ready: int = 1) -> float:
        one = lambda v: np.array([[v]], np.int32)  # noqa: E731
        out = runner(
            {
                "VALUE": np.array([[value]], np.float32),
                "START": one(start),
                "END": one(end),
                "READY": one(ready),
                "CORRID": np.array([[corrid]], np.uint64),
            }
        )
        return float(out["SUM"].reshape(-1)[0])

    assert [step(1, 7, start=1), step(10, 8, start=1), step(2, 7), step(20, 8)] == [1, 10, 3, 30]
    assert step(99, 7, ready=0) == 0 and runner.model.sums[7] == 3  # an empty batch slot changes nothing
    assert step(3, 7, end=1) == 6 and 7 not in runner.model.sums and runner.model.sums[8] == 30
