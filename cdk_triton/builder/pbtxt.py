"""config.pbtxt from the real ModelConfig protobuf (tritonclient.grpc.model_config_pb2), never templates."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from cdk_triton.config import python_env
from cdk_triton.config.declaration import ModelSpec, SequenceBatching


def _mc() -> Any:
    """tritonclient's ModelConfig protobuf module, imported on first use (it pulls in protobuf)."""
    from tritonclient.grpc import model_config_pb2

    return model_config_pb2


@dataclass(frozen=True, kw_only=True, slots=True)
class IoTensor:
    """A tensor as the config states it (dims without the batch dim when batching)."""

    name: str
    dtype: str  # Triton name without TYPE_
    dims: tuple[int, ...]


def build_config(
    spec: ModelSpec,
    *,
    inputs: list[IoTensor],
    outputs: list[IoTensor],
    cc_model_filenames: dict[str, str] | None = None,
) -> Any:
    """The ModelConfig message of one model."""
    mc = _mc()
    row = spec.row  # the format's platform, or else its backend, names what serves it
    cfg = mc.ModelConfig(name=spec.name, max_batch_size=spec.max_batch_size)
    if row.platform:
        cfg.platform = row.platform
    elif row.backend:
        cfg.backend = row.backend
    for t in inputs:
        cfg.input.add(name=t.name, data_type=_dtype(t.dtype), dims=list(t.dims))
    for t in outputs:
        cfg.output.add(name=t.name, data_type=_dtype(t.dtype), dims=list(t.dims))
    _serving_options(cfg, spec, [t.name for t in inputs])
    if row.runs_onnx and spec.onnx.tensorrt_accelerator:
        acc = cfg.optimization.execution_accelerators.gpu_execution_accelerator.add(name="tensorrt")
        acc.parameters["precision_mode"] = spec.onnx.tensorrt_precision.upper()
        acc.parameters["max_workspace_size_bytes"] = str(1 << 30)
    if cc_model_filenames:
        for cc, fname in sorted(cc_model_filenames.items()):
            cfg.cc_model_filenames[cc] = fname
    if spec.is_ensemble:
        for s in spec.steps:
            step = cfg.ensemble_scheduling.step.add(model_name=s.model, model_version=s.model_version)
            for k, v in s.input_map.items():
                step.input_map[k] = v
            for k, v in s.output_map.items():
                step.output_map[k] = v
    return cfg


#: the config fields that only change how Triton serves a model, never the exported bytes: a change
#: of these regenerates config.pbtxt from the cached artifact (no export)
SERVING_FIELDS = (
    "dynamic_batching",
    "sequence_batching",
    "instance_group",
    "model_warmup",
    "response_cache",
    "parameters",
)


def _serving_options(cfg: Any, spec: ModelSpec, input_names: list[str]) -> None:
    """Set the serving options (:data:`SERVING_FIELDS`) of ``spec`` on ``cfg``."""
    mc = _mc()
    if spec.dynamic_batching is not None:
        db = cfg.dynamic_batching
        db.SetInParent()
        db.preferred_batch_size.extend(spec.dynamic_batching.preferred_batch_sizes)
        db.max_queue_delay_microseconds = spec.dynamic_batching.max_queue_delay_microseconds
        db.preserve_ordering = spec.dynamic_batching.preserve_ordering
    if spec.sequence_batching is not None:
        _sequence_batching(cfg.sequence_batching, spec.sequence_batching)
    for g in spec.instance_groups:
        cfg.instance_group.add(
            kind=mc.ModelInstanceGroup.Kind.Value(g.kind), count=g.count, gpus=list(g.gpus)
        )
    for w in spec.warmup:
        warm = cfg.model_warmup.add(
            name=w.name, batch_size=w.batch_size if spec.max_batch_size > 0 else 0, count=w.count
        )
        for declared in spec.inputs:
            entry = warm.inputs[input_names[[t.name for t in spec.inputs].index(declared.name)]]
            entry.data_type = _dtype(declared.dtype)
            entry.dims.extend(declared.concrete_shape())
            if w.data == "zero":
                entry.zero_data = True
            else:
                entry.random_data = True
    if spec.response_cache:
        cfg.response_cache.enable = True
    for k, v in sorted(spec.pytorch_parameters.items()):
        cfg.parameters[k].string_value = v
    if spec.requirements:  # the packed environment beside config.pbtxt (builder.environments)
        cfg.parameters[python_env.ENV_PARAMETER].string_value = python_env.ENV_PARAMETER_VALUE


def reconfigure(config: dict[str, Any], spec: ModelSpec) -> Any:
    """The ModelConfig of a cached model (its JSON form ``config``) with the serving options of ``spec``."""
    from google.protobuf import json_format

    cfg = json_format.ParseDict(config, _mc().ModelConfig())
    for name in SERVING_FIELDS:
        cfg.ClearField(name)
    _serving_options(cfg, spec, [t.name for t in cfg.input])
    return cfg


#: control kind -> ModelSequenceBatching.Control.Kind name
_CONTROL_KINDS = {
    "start": "CONTROL_SEQUENCE_START",
    "end": "CONTROL_SEQUENCE_END",
    "ready": "CONTROL_SEQUENCE_READY",
    "corrid": "CONTROL_SEQUENCE_CORRID",
}


def _sequence_batching(msg: Any, sb: SequenceBatching) -> None:
    """Fill a ModelSequenceBatching message: strategy, idle time, control inputs, implicit state."""
    control = _mc().ModelSequenceBatching.Control
    msg.SetInParent()
    if sb.strategy == "oldest":
        oldest = msg.oldest
        oldest.SetInParent()
        if sb.oldest is not None:
            oldest.max_candidate_sequences = sb.oldest.max_candidate_sequences
            oldest.preferred_batch_size.extend(sb.oldest.preferred_batch_sizes)
            oldest.max_queue_delay_microseconds = sb.oldest.max_queue_delay_microseconds
    else:
        msg.direct.SetInParent()
    if sb.max_sequence_idle_microseconds is not None:
        msg.max_sequence_idle_microseconds = sb.max_sequence_idle_microseconds
    for kind, name in sb.control_inputs.names.items():
        ctl = msg.control_input.add(name=name).control.add(kind=control.Kind.Value(_CONTROL_KINDS[kind]))
        if kind == "corrid":
            ctl.data_type = _dtype(sb.control_inputs.corrid_dtype)
        else:
            ctl.int32_false_true.extend([0, 1])
    for st in sb.state:
        msg.state.add(
            input_name=st.input_name,
            output_name=st.output_name,
            data_type=_dtype(st.dtype),
            dims=list(st.shape),
        )


def _dtype(name: str) -> int:
    return int(_mc().DataType.Value(f"TYPE_{name}"))


def to_pbtxt(cfg: Any) -> str:
    """Text format of a ModelConfig (what Triton reads)."""
    from google.protobuf import text_format

    return str(text_format.MessageToString(cfg))


def parse_pbtxt(text: str) -> Any:
    """Parse config.pbtxt text into a ModelConfig (raises text_format.ParseError)."""
    from google.protobuf import text_format

    return text_format.Parse(text, _mc().ModelConfig())


def to_dict(cfg: Any) -> dict[str, Any]:
    """The manifest's JSON form of a config."""
    from google.protobuf import json_format

    return dict(json_format.MessageToDict(cfg, preserving_proto_field_name=True))


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
