"""Triton server options: one typed value object rendered two ways.

``ServerOptions.to_environment()`` gives the SageMaker container environment (what the constructs
set on the Model); ``ServerOptions.to_argv()`` gives the ``tritonserver`` arguments the container's
``serve`` script derives from that environment (what the local endpoint runs). Keeping both in one
place is what makes the local endpoint start the server the way SageMaker does.
Standard library only.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from enum import StrEnum

from cdk_triton.errors import TritonValidationError, raise_all


class PingMode(StrEnum):
    """What ``/ping`` answers on: model readiness (SME default) or server liveness (MME default)."""

    READY = "ready"
    LIVE = "live"


class InferenceType(StrEnum):
    """What ``/invocations`` runs (25.03+ images): plain infer, generate or generate_stream."""

    INFER = "infer"
    GENERATE = "generate"
    GENERATE_STREAM = "generate_stream"


# env var -> ServerOptions field. Every variable of CONTRACT.md section 1.
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

#: Container defaults of the ``serve`` script (CONTRACT.md section 1), used by ``to_argv``.
DEFAULT_PORT = 8080
DEFAULT_GRPC_PORT = 8001
DEFAULT_METRICS_PORT = 8002
DEFAULT_THREAD_COUNT = 8
DEFAULT_SHM_DEFAULT_BYTE_SIZE = 16 * 1024 * 1024
DEFAULT_SHM_GROWTH_BYTE_SIZE = 1024 * 1024


def _bool(value: bool) -> str:
    return "true" if value else "false"


@dataclass(frozen=True, kw_only=True, slots=True)
class ServerOptions:
    """Every option of the SageMaker Triton container. ``None`` means the container's default.

    Attributes:
        multi_model: MME (``SAGEMAKER_MULTI_MODEL=true``). Default: False (single model).
        default_model_name: SME model behind ``/invocations`` (for an ensemble, the ensemble).
            Default: the only top-level model directory.
        ping_mode: what ``/ping`` checks. Default: ready (SME) / live (MME).
        model_namespacing: ``--model-namespacing``. Default: True. Rendered to
            SAGEMAKER_TRITON_DISABLE_MODEL_NAMESPACING whose value is passed through as is, so
            ``false`` disables namespacing (the variable's name is inverted).
        port: SageMaker HTTP port. Default: 8080.
        safe_port_range: ``(lo, hi)`` for ``--sagemaker-safe-port-range``. Default: none.
        allow_grpc / grpc_port: Default: off / 8001.
        allow_metrics / metrics_port: Prometheus metrics. Default: off / 8002.
        thread_count: ``--sagemaker-thread-count``. Default: 8.
        buffer_manager_thread_count: Default: 0.
        log_verbose: verbosity level (0 = off). Default: verbose on (level 1).
        log_info / log_warning / log_error: Default: on.
        shm_default_byte_size / shm_growth_byte_size: python backend shared memory.
            Default: 16 MiB / 1 MiB.
        tensorflow_version: Default: none.
        model_load_gpu_limit: fraction (0, 1] of each GPU's memory models may take. Default: none.
        inference_type: Default: infer.
        response_cache_byte_size: enables Triton's local response cache of this size (rendered into
            the additional arguments as ``--cache-config=local,size=N``). Default: no cache.
        additional_args: extra ``tritonserver`` arguments. Default: none.
        publish_metrics_to_cloudwatch / cloudwatch_log_group / cloudwatch_metric_namespace:
            CloudWatch publishing of Triton's metrics (AWS images 23.07+). Default: off.
    """

    multi_model: bool = False
    default_model_name: str | None = None
    ping_mode: PingMode | None = None
    model_namespacing: bool | None = None
    port: int | None = None
    safe_port_range: tuple[int, int] | None = None
    allow_grpc: bool | None = None
    grpc_port: int | None = None
    allow_metrics: bool | None = None
    metrics_port: int | None = None
    thread_count: int | None = None
    buffer_manager_thread_count: int | None = None
    log_verbose: int | None = None
    log_info: bool | None = None
    log_warning: bool | None = None
    log_error: bool | None = None
    shm_default_byte_size: int | None = None
    shm_growth_byte_size: int | None = None
    tensorflow_version: str | None = None
    model_load_gpu_limit: float | None = None
    inference_type: InferenceType | None = None
    response_cache_byte_size: int | None = None
    additional_args: tuple[str, ...] = ()
    publish_metrics_to_cloudwatch: bool = False
    cloudwatch_log_group: str | None = None
    cloudwatch_metric_namespace: str | None = None

    # ------------------------------------------------------------------ validation
    def validate(self, *, path: str | None = None) -> list[TritonValidationError]:
        """Every problem with these options (empty when valid): each of ``CHECKS`` in order."""
        return [e if path is None else e.at(path) for check in CHECKS for e in check(self)]

    def validated(self, *, path: str | None = None) -> ServerOptions:
        """Return self, or raise every problem at once."""
        raise_all(self.validate(path=path))
        return self

    # ------------------------------------------------------------------ environment
    def to_environment(self) -> dict[str, str]:
        """The container environment for these options (only what differs from unset)."""
        env: dict[str, str] = {}
        if self.multi_model:
            env["SAGEMAKER_MULTI_MODEL"] = "true"
        if self.default_model_name is not None:
            env["SAGEMAKER_TRITON_DEFAULT_MODEL_NAME"] = self.default_model_name
        if self.ping_mode is not None:
            env["SAGEMAKER_TRITON_OVERRIDE_PING_MODE"] = PingMode(self.ping_mode).value
        if self.model_namespacing is not None:
            env["SAGEMAKER_TRITON_DISABLE_MODEL_NAMESPACING"] = _bool(self.model_namespacing)
        if self.port is not None:
            env["SAGEMAKER_BIND_TO_PORT"] = str(self.port)
        if self.safe_port_range is not None:
            env["SAGEMAKER_SAFE_PORT_RANGE"] = f"{self.safe_port_range[0]}-{self.safe_port_range[1]}"
        allow_metrics = self.allow_metrics
        if self.publish_metrics_to_cloudwatch and allow_metrics is None:
            allow_metrics = True
        for name, value in (
            ("SAGEMAKER_TRITON_ALLOW_GRPC", self.allow_grpc),
            ("SAGEMAKER_TRITON_ALLOW_METRICS", allow_metrics),
            ("SAGEMAKER_TRITON_LOG_INFO", self.log_info),
            ("SAGEMAKER_TRITON_LOG_WARNING", self.log_warning),
            ("SAGEMAKER_TRITON_LOG_ERROR", self.log_error),
        ):
            if value is not None:
                env[name] = _bool(value)
        metrics_port = self.metrics_port
        if self.publish_metrics_to_cloudwatch and metrics_port is None:
            metrics_port = DEFAULT_METRICS_PORT
        for name, ivalue in (
            ("SAGEMAKER_TRITON_GRPC_PORT", self.grpc_port),
            ("SAGEMAKER_TRITON_METRICS_PORT", metrics_port),
            ("SAGEMAKER_TRITON_THREAD_COUNT", self.thread_count),
            ("SAGEMAKER_TRITON_BUFFER_MANAGER_THREAD_COUNT", self.buffer_manager_thread_count),
            ("SAGEMAKER_TRITON_LOG_VERBOSE", self.log_verbose),
            ("SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE", self.shm_default_byte_size),
            ("SAGEMAKER_TRITON_SHM_GROWTH_BYTE_SIZE", self.shm_growth_byte_size),
        ):
            if ivalue is not None:
                env[name] = str(ivalue)
        if self.tensorflow_version is not None:
            env["SAGEMAKER_TRITON_TENSORFLOW_VERSION"] = self.tensorflow_version
        if self.model_load_gpu_limit is not None:
            env["SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT"] = repr(float(self.model_load_gpu_limit))
        if self.inference_type is not None:
            env["SAGEMAKER_TRITON_INFERENCE_TYPE"] = InferenceType(self.inference_type).value
        extra = self._all_additional_args()
        if extra:
            env["SAGEMAKER_TRITON_ADDITIONAL_ARGS"] = " ".join(extra)
        if self.publish_metrics_to_cloudwatch:
            env["SAGEMAKER_TRITON_PUBLISH_METRICS_TO_CLOUDWATCH"] = "true"
            if self.cloudwatch_log_group is not None:
                env["SAGEMAKER_TRITON_CLOUDWATCH_LOG_GROUP"] = self.cloudwatch_log_group
            if self.cloudwatch_metric_namespace is not None:
                env["SAGEMAKER_TRITON_CLOUDWATCH_METRIC_NAMESPACE"] = self.cloudwatch_metric_namespace
        return env

    def _all_additional_args(self) -> list[str]:
        extra = list(self.additional_args)
        if self.response_cache_byte_size is not None:
            extra.insert(0, f"--cache-config=local,size={self.response_cache_byte_size}")
        return extra

    @classmethod
    def from_environment(cls, env: Mapping[str, str], *, path: str | None = None) -> ServerOptions:
        """Parse a container environment back into options.

        Variables that are not SageMaker Triton settings are ignored; an unknown
        ``SAGEMAKER_TRITON_*`` name is an error naming the closest valid one.
        """
        raise_all(check_raw_environment(env, path=path))
        kwargs: dict[str, object] = {}
        errs: list[TritonValidationError] = []
        for name, value in env.items():
            field = ENV_FIELDS.get(name)
            if field is None:
                continue
            try:
                kwargs[field] = _parse_env_value(field, value)
            except ValueError:
                errs.append(
                    TritonValidationError(
                        "InvalidEnvironmentValue",
                        prop=name,
                        value=value,
                        problem="cannot be parsed",
                        allowed=_ENV_ALLOWED.get(field, "a valid value"),
                        fix=f"set {name} to {_ENV_ALLOWED.get(field, 'a valid value')}",
                        path=path,
                    )
                )
        raise_all(errs)
        extra = kwargs.get("additional_args")
        if isinstance(extra, tuple):
            rest = []
            for arg in extra:
                if arg.startswith("--cache-config=local,size="):
                    kwargs["response_cache_byte_size"] = int(arg.rsplit("=", 1)[1])
                else:
                    rest.append(arg)
            kwargs["additional_args"] = tuple(rest)
        return cls(**kwargs)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ argv
    def to_argv(
        self,
        *,
        model_repository: str,
        model_dirs: list[str] | None = None,
        gpu_count: int = 0,
    ) -> list[str]:
        """The ``tritonserver`` arguments the container's ``serve`` script builds from this environment.

        Args:
            model_repository: the SME repository (or an empty directory for MME).
            model_dirs: the top-level model directories of an SME repository, to apply the
                serve script's default-model rule when ``default_model_name`` is unset.
            gpu_count: GPUs on the host (``--model-load-gpu-limit`` is repeated per GPU).
        """
        argv = [
            "--allow-sagemaker=true",
            "--allow-http=false",
            "--model-control-mode=explicit",
            f"--model-repository={model_repository}",
            f"--model-namespacing={_bool(self.model_namespacing is not False)}",
            f"--sagemaker-port={self.port if self.port is not None else DEFAULT_PORT}",
        ]
        if self.safe_port_range is not None:
            argv.append(f"--sagemaker-safe-port-range={self.safe_port_range[0]}-{self.safe_port_range[1]}")
        argv.append(f"--allow-grpc={_bool(bool(self.allow_grpc))}")
        if self.allow_grpc:
            argv.append(f"--grpc-port={self.grpc_port or DEFAULT_GRPC_PORT}")
        allow_metrics = bool(self.allow_metrics) or (
            self.publish_metrics_to_cloudwatch and self.allow_metrics is None
        )
        argv.append(f"--allow-metrics={_bool(allow_metrics)}")
        if allow_metrics:
            argv.append(f"--metrics-port={self.metrics_port or DEFAULT_METRICS_PORT}")
        if self.buffer_manager_thread_count is not None:
            argv.append(f"--buffer-manager-thread-count={self.buffer_manager_thread_count}")
        argv.append(f"--sagemaker-thread-count={self.thread_count or DEFAULT_THREAD_COUNT}")
        argv.append(f"--log-verbose={1 if self.log_verbose is None else self.log_verbose}")
        for flag, value in (
            ("--log-info", self.log_info),
            ("--log-warning", self.log_warning),
            ("--log-error", self.log_error),
        ):
            if value is not None:
                argv.append(f"{flag}={_bool(value)}")
        argv.append(
            "--backend-config=python,shm-default-byte-size="
            f"{self.shm_default_byte_size or DEFAULT_SHM_DEFAULT_BYTE_SIZE}"
        )
        argv.append(
            "--backend-config=python,shm-growth-byte-size="
            f"{self.shm_growth_byte_size or DEFAULT_SHM_GROWTH_BYTE_SIZE}"
        )
        if self.tensorflow_version is not None:
            argv.append(f"--backend-config=tensorflow,version={self.tensorflow_version}")
        if self.model_load_gpu_limit is not None:
            for gpu in range(gpu_count):
                argv += ["--model-load-gpu-limit", f"{gpu}:{self.model_load_gpu_limit}"]
        if not self.multi_model:
            name = self.default_model_name
            if name is None and model_dirs is not None:
                name = resolve_default_model(model_dirs)
            if name is not None:
                argv.append(f"--load-model={name}")
        argv += self._all_additional_args()
        return argv

    def server_environment(self, *, model_dirs: list[str] | None = None) -> dict[str, str]:
        """Variables the ``tritonserver`` binary itself reads (the serve script exports these).

        Args:
            model_dirs: SME top-level model directories. With ``default_model_name`` unset and a
                single directory, the serve script exports SAGEMAKER_TRITON_DEFAULT_MODEL_NAME for
                it (the binary's ``/invocations`` needs it), as ``to_argv`` adds ``--load-model``.
        """
        env: dict[str, str] = {}
        if not self.multi_model:
            name = self.default_model_name
            if name is None and model_dirs is not None:
                name = resolve_default_model(model_dirs)
            if name is not None:
                env["SAGEMAKER_TRITON_DEFAULT_MODEL_NAME"] = name
        mode = self.ping_mode
        if mode is not None:
            env["SAGEMAKER_TRITON_PING_MODE"] = PingMode(mode).value
        if self.inference_type is not None:
            env["SAGEMAKER_TRITON_INFERENCE_TYPE"] = InferenceType(self.inference_type).value
        return env

    def with_defaults_for(self, *, multi_model: bool) -> ServerOptions:
        return replace(self, multi_model=multi_model)


# ---------------------------------------------------------------------------- validation checks
# One function per rule; each returns its problems unlocated (``ServerOptions.validate`` adds the path).

_CW_NAMESPACE = re.compile(r"^[A-Za-z0-9._#:/-]{1,255}$")
_LOG_GROUP = re.compile(r"^[.\-_/#A-Za-z0-9]{1,512}$")

#: tritonserver flags ServerOptions sets itself (not allowed in ``additional_args``).
_MANAGED_FLAGS = {
    "--allow-sagemaker",
    "--allow-http",
    "--model-control-mode",
    "--model-repository",
    "--model-namespacing",
    "--sagemaker-port",
    "--sagemaker-safe-port-range",
    "--allow-grpc",
    "--grpc-port",
    "--allow-metrics",
    "--metrics-port",
    "--sagemaker-thread-count",
    "--buffer-manager-thread-count",
    "--log-verbose",
    "--log-info",
    "--log-warning",
    "--log-error",
    "--load-model",
    "--model-load-gpu-limit",
}


Problems = list[TritonValidationError]


def _problem(
    code: str, prop: str, value: object, problem: str, allowed: str, fix: str
) -> TritonValidationError:
    return TritonValidationError(code, prop=prop, value=value, problem=problem, allowed=allowed, fix=fix)


def check_ports(o: ServerOptions) -> Problems:
    """Each port is a TCP port; the safe port range is ordered."""
    out = [
        _problem("InvalidPort", prop, value, "is not a TCP port", "1..65535", "pass a port number")
        for prop in ("port", "grpc_port", "metrics_port")
        if (value := getattr(o, prop)) is not None and not (1 <= value <= 65535)
    ]
    if o.safe_port_range is not None:
        lo, hi = o.safe_port_range
        if not (1 <= lo <= hi <= 65535):
            out.append(
                _problem(
                    "InvalidPortRange",
                    "safe_port_range",
                    o.safe_port_range,
                    "is not a port range",
                    "(lo, hi) with 1 <= lo <= hi <= 65535",
                    "pass the low port first",
                )
            )
    return out


def check_ports_distinct(o: ServerOptions) -> Problems:
    """The SageMaker port and the gRPC / metrics ports in use differ."""
    ports = [
        p
        for p in (
            o.port,
            o.grpc_port if o.allow_grpc else None,
            o.metrics_port if o.allow_metrics else None,
        )
        if p is not None
    ]
    if len(ports) == len(set(ports)):
        return []
    return [
        _problem(
            "PortConflict",
            "ports",
            tuple(ports),
            "are not distinct",
            "three different ports",
            "give the SageMaker, gRPC and metrics ports different numbers",
        )
    ]


def check_counts_and_sizes(o: ServerOptions) -> Problems:
    """Thread counts, the log level, byte sizes and the GPU memory fraction are in range."""
    out: Problems = []
    if o.thread_count is not None and o.thread_count < 1:
        out.append(
            _problem(
                "InvalidThreadCount",
                "thread_count",
                o.thread_count,
                "is too small",
                ">= 1",
                "pass a positive count",
            )
        )
    if o.buffer_manager_thread_count is not None and o.buffer_manager_thread_count < 0:
        out.append(
            _problem(
                "InvalidThreadCount",
                "buffer_manager_thread_count",
                o.buffer_manager_thread_count,
                "is negative",
                ">= 0",
                "pass 0 to use no buffer manager threads",
            )
        )
    if o.log_verbose is not None and o.log_verbose < 0:
        out.append(
            _problem(
                "InvalidLogLevel",
                "log_verbose",
                o.log_verbose,
                "is negative",
                "0 (off) or a level >= 1",
                "pass 0 to turn verbose logging off",
            )
        )
    out += [
        _problem(
            "InvalidByteSize", prop, value, "is not a positive size", "> 0 bytes", "pass a size in bytes"
        )
        for prop in ("shm_default_byte_size", "shm_growth_byte_size", "response_cache_byte_size")
        if (value := getattr(o, prop)) is not None and value <= 0
    ]
    if o.model_load_gpu_limit is not None and not (0 < o.model_load_gpu_limit <= 1):
        out.append(
            _problem(
                "InvalidGpuLimit",
                "model_load_gpu_limit",
                o.model_load_gpu_limit,
                "is not a fraction of GPU memory",
                "0 < fraction <= 1",
                "pass e.g. 0.8",
            )
        )
    return out


def check_default_model(o: ServerOptions) -> Problems:
    """A default model only on a single-model endpoint, named like a model directory."""
    out: Problems = []
    if o.multi_model and o.default_model_name:
        out.append(
            _problem(
                "DefaultModelInMme",
                "default_model_name",
                o.default_model_name,
                "is set on a multi-model endpoint, where it has no effect",
                "no default model in MME (clients pick one with TargetModel)",
                "remove default_model_name or use a single-model endpoint",
            )
        )
    if o.default_model_name is not None and not re.fullmatch(r"[A-Za-z0-9_.-]+", o.default_model_name):
        out.append(
            _problem(
                "InvalidModelName",
                "default_model_name",
                o.default_model_name,
                "is not a Triton model directory name",
                "letters, digits, '_', '.', '-'",
                "use the model's directory name",
            )
        )
    return out


def check_cloudwatch_publishing(o: ServerOptions) -> Problems:
    """Publishing needs the metrics endpoint; CloudWatch settings need publishing."""
    wants_cw = o.publish_metrics_to_cloudwatch
    if wants_cw and o.allow_metrics is False:
        return [
            _problem(
                "MetricsPublishingNeedsMetrics",
                "allow_metrics",
                False,
                "is off while publish_metrics_to_cloudwatch is on",
                "allow_metrics=True (or unset)",
                "drop allow_metrics=False; publishing reads Triton's metrics endpoint",
            )
        ]
    if not wants_cw and (o.cloudwatch_log_group or o.cloudwatch_metric_namespace):
        prop = "cloudwatch_metric_namespace" if o.cloudwatch_metric_namespace else "cloudwatch_log_group"
        return [
            _problem(
                "CloudWatchSettingsWithoutPublishing",
                prop,
                getattr(o, prop),
                "is set while publish_metrics_to_cloudwatch is off",
                "CloudWatch settings only with publish_metrics_to_cloudwatch=True",
                "turn publishing on (metrics=TritonMetrics(...) on a construct) or drop the CloudWatch settings",
            )
        ]
    return []


def check_cloudwatch_names(o: ServerOptions) -> Problems:
    """The metric namespace is a custom one; the log group name is valid."""
    out: Problems = []
    ns = o.cloudwatch_metric_namespace
    if ns is not None and (not _CW_NAMESPACE.fullmatch(ns) or ns.startswith("AWS/")):
        out.append(
            _problem(
                "InvalidMetricNamespace",
                "cloudwatch_metric_namespace",
                ns,
                "is not a custom CloudWatch namespace",
                "1-255 of [A-Za-z0-9._#:/-], not starting with 'AWS/'",
                "pick a namespace such as 'Triton/MyEndpoint'",
            )
        )
    if o.cloudwatch_log_group is not None and not _LOG_GROUP.fullmatch(o.cloudwatch_log_group):
        out.append(
            _problem(
                "InvalidLogGroupName",
                "cloudwatch_log_group",
                o.cloudwatch_log_group,
                "is not a log group name",
                "1-512 of [.-_/#A-Za-z0-9]",
                "pick a name such as '/triton/my-endpoint'",
            )
        )
    return out


def check_additional_args(o: ServerOptions) -> Problems:
    """Each additional argument is a ``--flag`` that ServerOptions does not manage itself."""
    out: Problems = []
    for arg in o.additional_args:
        flag = arg.split("=", 1)[0]
        if not arg.startswith("--"):
            out.append(
                _problem(
                    "InvalidAdditionalArg",
                    "additional_args",
                    arg,
                    "is not a tritonserver flag",
                    "'--name=value' items",
                    "write each flag as --name=value",
                )
            )
        elif flag in _MANAGED_FLAGS:
            out.append(
                _problem(
                    "ManagedFlagInAdditionalArgs",
                    "additional_args",
                    arg,
                    "sets a flag that ServerOptions manages",
                    "flags other than " + ", ".join(sorted(_MANAGED_FLAGS)),
                    f"use the ServerOptions field for {flag}",
                )
            )
    return out


#: What ``ServerOptions.validate`` checks, in the order it reports the problems.
CHECKS: tuple[Callable[[ServerOptions], Problems], ...] = (
    check_ports,
    check_ports_distinct,
    check_counts_and_sizes,
    check_default_model,
    check_cloudwatch_publishing,
    check_cloudwatch_names,
    check_additional_args,
)


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
_ENV_ALLOWED = {
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


def _parse_env_value(field: str, value: str) -> object:
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


_KNOWN_FIELDS = {f.name for f in fields(ServerOptions)}
assert set(ENV_FIELDS.values()) <= _KNOWN_FIELDS


def check_raw_environment(env: Mapping[str, str], *, path: str | None = None) -> list[TritonValidationError]:
    """Unknown ``SAGEMAKER_TRITON_*`` (and misspelt ``SAGEMAKER_*``) names, each with the closest valid name."""
    errs: list[TritonValidationError] = []
    known = list(ENV_FIELDS)
    for name in env:
        if name in ENV_FIELDS or not name.startswith("SAGEMAKER_"):
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
