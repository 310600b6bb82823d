"""The container's words for the Triton settings: ``SAGEMAKER_*`` variable names, their defaults, and
how each value is parsed (as the ``serve`` script and ``tritonserver`` read it). Standard library only."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from enum import StrEnum

from cdk_triton.errors import TritonValidationError


class PingMode(StrEnum):
    """What ``/ping`` answers on: model readiness (SME default) or server liveness (MME default)."""

    READY = "ready"
    LIVE = "live"


class InferenceType(StrEnum):
    """What ``/invocations`` runs (25.03+ images): plain infer, generate or generate_stream."""

    INFER = "infer"
    GENERATE = "generate"
    GENERATE_STREAM = "generate_stream"


# env var -> ServerOptions field. Every variable the SageMaker ``serve`` script reads
# (github.com/triton-inference-server/server docker/sagemaker/serve).
ENV_FIELDS: dict[str, str] = {
    "SAGEMAKER_MULTI_MODEL": "multi_model",
    "SAGEMAKER_TRITON_DEFAULT_MODEL_NAME": "default_model_name",
    "SAGEMAKER_TRITON_OVERRIDE_PING_MODE": "ping_mode",
    "SAGEMAKER_TRITON_DISABLE_MODEL_NAMESPACING": "model_namespacing",
    "SAGEMAKER_BIND_TO_PORT": "port",
    "SAGEMAKER_SAFE_PORT_RANGE": "safe_port_range",
    "SAGEMAKER_TRITON_ALLOW_GRPC": "allow_grpc",
    "SAGEMAKER_TRITON_GRPC_PORT": "grpc_port",
    "SAGEMAKER_TRITON_ALLOW_METRICS": "allow_metrics",
    "SAGEMAKER_TRITON_METRICS_PORT": "metrics_port",
    "SAGEMAKER_TRITON_THREAD_COUNT": "thread_count",
    "SAGEMAKER_TRITON_BUFFER_MANAGER_THREAD_COUNT": "buffer_manager_thread_count",
    "SAGEMAKER_TRITON_LOG_VERBOSE": "log_verbose",
    "SAGEMAKER_TRITON_LOG_INFO": "log_info",
    "SAGEMAKER_TRITON_LOG_WARNING": "log_warning",
    "SAGEMAKER_TRITON_LOG_ERROR": "log_error",
    "SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE": "shm_default_byte_size",
    "SAGEMAKER_TRITON_SHM_GROWTH_BYTE_SIZE": "shm_growth_byte_size",
    "SAGEMAKER_TRITON_TENSORFLOW_VERSION": "tensorflow_version",
    "SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT": "model_load_gpu_limit",
    "SAGEMAKER_TRITON_INFERENCE_TYPE": "inference_type",
    "SAGEMAKER_TRITON_ADDITIONAL_ARGS": "additional_args",
    "SAGEMAKER_TRITON_PUBLISH_METRICS_TO_CLOUDWATCH": "publish_metrics_to_cloudwatch",
    "SAGEMAKER_TRITON_CLOUDWATCH_LOG_GROUP": "cloudwatch_log_group",
    "SAGEMAKER_TRITON_CLOUDWATCH_METRIC_NAMESPACE": "cloudwatch_metric_namespace",
}

#: Container defaults of the ``serve`` script (server docker/sagemaker/serve), used by ``to_argv``.
DEFAULT_PORT = 8080
DEFAULT_GRPC_PORT = 8001
DEFAULT_METRICS_PORT = 8002
DEFAULT_THREAD_COUNT = 8
DEFAULT_SHM_DEFAULT_BYTE_SIZE = 16 * 1024 * 1024
DEFAULT_SHM_GROWTH_BYTE_SIZE = 1024 * 1024


def flag_text(value: bool) -> str:
    """A boolean as tritonserver flags and the SageMaker serve script's variables spell it."""
    return "true" if value else "false"


# ---------------------------------------------------------------------------- environment parsing

_BOOL_FIELDS = {
    "multi_model",
    "model_namespacing",
    "allow_grpc",
    "allow_metrics",
    "log_info",
    "log_warning",
    "log_error",
    "publish_metrics_to_cloudwatch",
}
_INT_FIELDS = {
    "port",
    "grpc_port",
    "metrics_port",
    "thread_count",
    "buffer_manager_thread_count",
    "shm_default_byte_size",
    "shm_growth_byte_size",
}
ENV_ALLOWED = {
    **{f: "'true'/'on'/'1' or 'false'/'off'/'0' (any case)" for f in _BOOL_FIELDS},
    **{f: "an integer" for f in _INT_FIELDS},
    "log_verbose": "an integer level, or 'true'/'false'",
    "safe_port_range": "'lo-hi'",
    "ping_mode": "'ready' or 'live'",
    "inference_type": "'infer', 'generate' or 'generate_stream'",
    "model_load_gpu_limit": "a fraction such as 0.8",
}


_TRUE = ("true", "on", "1")
_FALSE = ("false", "off", "0")


def parse_env_value(field: str, value: str) -> object:
    """An environment variable's text as the ``ServerOptions`` field ``field`` holds it (``ENV_ALLOWED``
    says what each field accepts)."""
    if field == "multi_model":
        return value == "true"  # the serve script compares the exact string: 'True' or '1' mean SME
    if field in _BOOL_FIELDS:
        low = value.strip().lower()  # tritonserver's bool options: 1/on/true, 0/off/false, any case
        if low not in _TRUE + _FALSE:
            raise ValueError(value)
        return low in _TRUE
    if field in _INT_FIELDS:
        return int(value)
    if field == "log_verbose":
        low = value.strip().lower()
        return {"true": 1, "false": 0}.get(low) if low in ("true", "false") else int(value)
    if field == "safe_port_range":
        lo, hi = value.split("-")
        return (int(lo), int(hi))
    if field == "ping_mode":
        return PingMode(value)
    if field == "inference_type":
        return InferenceType(value)
    if field == "model_load_gpu_limit":
        return float(value)
    if field == "additional_args":
        return tuple(value.split())
    return value


#: Variables the container reads that no ServerOptions field renders: ``tritonserver`` reads
#: SAGEMAKER_TRITON_PING_MODE itself, and only an inherited one lets the ping-mode override through.
CONTAINER_ONLY_VARIABLES = frozenset({"SAGEMAKER_TRITON_PING_MODE"})


def check_raw_environment(env: Mapping[str, str], *, path: str | None = None) -> list[TritonValidationError]:
    """Unknown ``SAGEMAKER_TRITON_*`` (and misspelt ``SAGEMAKER_*``) names, each with the closest valid name."""
    errs: list[TritonValidationError] = []
    known = list(ENV_FIELDS)
    for name in env:
        if name in ENV_FIELDS or name in CONTAINER_ONLY_VARIABLES or not name.startswith("SAGEMAKER_"):
            continue
        if not name.startswith("SAGEMAKER_TRITON_") and not difflib.get_close_matches(
            name, known, n=1, cutoff=0.85
        ):
            continue  # another SageMaker variable (e.g. SAGEMAKER_PROGRAM), not ours to judge
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
        hint = f"did you mean {close[0]}?" if close else "see ServerOptions for the supported settings"
        errs.append(
            TritonValidationError(
                "UnknownTritonEnvironmentVariable",
                prop="environment",
                value=name,
                problem="is not a SageMaker Triton container setting",
                allowed=", ".join(known),
                fix=hint,
                path=path,
            )
        )
    return errs


def resolve_default_model(model_dirs: list[str]) -> str:
    """The serve script's rule for SME without SAGEMAKER_TRITON_DEFAULT_MODEL_NAME."""
    if len(model_dirs) == 1:
        return model_dirs[0]
    problem = "holds no model directory" if not model_dirs else "holds several model directories"
    raise TritonValidationError(
        "AmbiguousDefaultModel",
        prop="default_model_name",
        value=None,
        problem=f"is unset and the model repository {problem} ({', '.join(sorted(model_dirs))})",
        allowed="exactly one top-level model directory, or default_model_name naming one",
        fix="set default_model_name (for an ensemble: the ensemble itself)",
    )
