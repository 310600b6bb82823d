"""Sequence batching: the declaration, its checks, and the multi-model endpoint rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cdk_triton.config.declaration import (
    BuildSpec,
    ControlInputs,
    OldestStrategy,
    SequenceBatching,
    SequenceState,
)
from tests.unit.config.declaration.decl import codes, document, endpoint, ensemble, model, parsed, problems

RUNNING_SUM = str(Path(__file__).resolve().parents[4] / "build" / "running_sum")
CONTROLS = {"start": "START", "end": "END", "ready": "READY", "corrid": "CORRID", "corrid_dtype": "uint64"}


def stateful(name: str = "tiny", **sb: Any) -> dict[str, Any]:
    return model(
        name,
        format="python",
        source={"python": RUNNING_SUM},
        sequence_batching={"control_inputs": CONTROLS, **sb},
    )


def test_reads_sequence_batching() -> None:
    d = {
        "strategy": "oldest",
        "max_sequence_idle_microseconds": 5_000_000,
        "control_inputs": CONTROLS,
        "state": [{"input_name": "S_IN", "output_name": "S_OUT", "dtype": "fp32", "shape": [4]}],
        "oldest": {
            "max_candidate_sequences": 4,
            "preferred_batch_sizes": [2],
            "max_queue_delay_microseconds": 100,
        },
    }
    sb, errs = parsed(SequenceBatching.from_dict, d)
    assert errs == []
    assert sb == SequenceBatching(
        strategy="oldest",
        max_sequence_idle_microseconds=5_000_000,
        control_inputs=ControlInputs(start="START", end="END", ready="READY", corrid="CORRID"),
        state=(SequenceState(input_name="S_IN", output_name="S_OUT", dtype="FP32", shape=(4,)),),
        oldest=OldestStrategy(
            max_candidate_sequences=4, preferred_batch_sizes=(2,), max_queue_delay_microseconds=100
        ),
    )
    assert parsed(SequenceBatching.from_dict, True)[0] == SequenceBatching()
    assert sb.control_inputs.names == {"start": "START", "end": "END", "ready": "READY", "corrid": "CORRID"}


def test_fails_bad_strategy_dtype_names_and_oldest_without_oldest() -> None:
    d = {
        "strategy": "newest",
        "control_inputs": {"start": "S", "end": "S", "corrid_dtype": "FP32"},
        "oldest": {},
    }
    _, errs = parsed(SequenceBatching.from_dict, {**d, "oldest": {"max_candidate_sequences": 2}}, "sb")
    assert [(e.code, e.path) for e in errs] == [
        ("InvalidSequenceBatching", "sb.strategy"),
        ("InvalidSequenceBatching", "sb.oldest"),
        ("InvalidSequenceBatching", "sb.control_inputs.corrid_dtype"),
        ("InvalidSequenceBatching", "sb.control_inputs"),
    ]


def test_a_python_model_with_control_inputs_is_valid() -> None:
    spec = BuildSpec.from_dict(document([stateful()]))
    assert spec.models[0].sequence_batching is not None and problems(document([stateful()])) == []


def test_fails_with_dynamic_batching_implicit_state_on_python_and_control_inputs_declared() -> None:
    state = [{"input_name": "S_IN", "output_name": "S_OUT", "dtype": "FP32", "shape": [1]}]
    bad = {**stateful(state=state), "dynamic_batching": True}
    bad["sequence_batching"]["control_inputs"]["start"] = "x"  # a declared input
    errs = problems(document([bad]))
    assert [(e.code, e.path) for e in errs] == [
        ("InvalidSequenceBatching", "models[0].sequence_batching"),
        ("InvalidSequenceBatching", "models[0].sequence_batching.state"),
        ("InvalidSequenceBatching", "models[0].sequence_batching.control_inputs.start"),
    ]
    assert "dynamic batching for stateless models" in str(errs[0]) and "python backend" in str(errs[1])
    onnx_state = model(sequence_batching={"state": state})
    assert codes(document([onnx_state])) == []


def test_fails_on_an_ensemble_and_oldest_batches_above_max_batch_size() -> None:
    ens = ensemble(sequence_batching=True)
    oldest = stateful(strategy="oldest", oldest={"preferred_batch_sizes": [8]})
    assert codes(
        document(
            [model(), ens, model("o", **{k: oldest[k] for k in ("format", "source", "sequence_batching")})]
        )
    ) == [
        "InvalidSequenceBatching",
        "PreferredBatchTooLarge",
    ]


def test_fails_a_sequence_batched_model_on_a_multi_model_endpoint() -> None:
    doc = document(
        [stateful("sum"), model()],
        [endpoint("mme", "MultiModel", ["sum", "tiny"]), endpoint("sme", models=["sum"])],
    )
    errs = problems(doc)
    assert [(e.code, e.path, e.value) for e in errs] == [
        ("SequenceBatchingInstances", "endpoints[0].models", "sum")
    ]
    assert "instance_count 1" in str(errs[0])
