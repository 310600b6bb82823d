"""The validation checks of ``ServerOptions``: one function per rule, each returning its problems
unlocated (``ServerOptions.validate`` adds the path). Standard library only."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol

from cdk_triton.errors import TritonValidationError


class Options(Protocol):
    """The fields of ``ServerOptions`` the checks read (this module does not import ``options.py``)."""

    @property
    def port(self) -> int | None: ...

    @property
    def grpc_port(self) -> int | None: ...

    @property
    def metrics_port(self) -> int | None: ...

    @property
    def safe_port_range(self) -> tuple[int, int] | None: ...

    @property
    def allow_grpc(self) -> bool | None: ...

    @property
    def allow_metrics(self) -> bool | None: ...

    @property
    def thread_count(self) -> int | None: ...

    @property
    def buffer_manager_thread_count(self) -> int | None: ...

    @property
    def log_verbose(self) -> int | None: ...

    @property
    def shm_default_byte_size(self) -> int | None: ...

    @property
    def shm_growth_byte_size(self) -> int | None: ...

    @property
    def response_cache_byte_size(self) -> int | None: ...

    @property
    def model_load_gpu_limit(self) -> float | None: ...

    @property
    def multi_model(self) -> bool: ...

    @property
    def default_model_name(self) -> str | None: ...

    @property
    def publish_metrics_to_cloudwatch(self) -> bool: ...

    @property
    def cloudwatch_log_group(self) -> str | None: ...

    @property
    def cloudwatch_metric_namespace(self) -> str | None: ...

    @property
    def additional_args(self) -> tuple[str, ...]: ...

    @property
    def load_models(self) -> tuple[str, ...]: ...


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


def check_ports(o: Options) -> Problems:
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


def check_ports_distinct(o: Options) -> Problems:
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


def check_counts_and_sizes(o: Options) -> Problems:
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


def check_default_model(o: Options) -> Problems:
    """A default model (and models loaded at start) only on a single-model endpoint, named like model
    directories."""
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
    if o.multi_model and o.load_models:
        out.append(
            _problem(
                "DefaultModelInMme",
                "load_models",
                list(o.load_models),
                "is set on a multi-model endpoint, where models load on demand",
                "no models loaded at start in MME (clients pick one with TargetModel)",
                "remove load_models or use a single-model endpoint",
            )
        )
    for name in o.load_models:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
            out.append(
                _problem(
                    "InvalidModelName",
                    "load_models",
                    name,
                    "is not a Triton model directory name (the serve script splits its arguments on spaces)",
                    "letters, digits, '_', '.', '-'",
                    "use the model's directory name",
                )
            )
    return out


def check_cloudwatch_publishing(o: Options) -> Problems:
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


def check_cloudwatch_names(o: Options) -> Problems:
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


def check_additional_args(o: Options) -> Problems:
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
CHECKS: tuple[Callable[[Options], Problems], ...] = (
    check_ports,
    check_ports_distinct,
    check_counts_and_sizes,
    check_default_model,
    check_cloudwatch_publishing,
    check_cloudwatch_names,
    check_additional_args,
)
