"""Asynchronous inference (``AsyncInferenceConfig``): the ``async:`` block of a single-model endpoint.

One author for the values ``models.yaml`` declares, the manifest carries and the constructs deploy
(``cdk_triton.constructs.async_inference``), their limits, and how ``MaxConcurrentInvocationsPerInstance``
follows from the default model's instance groups and batching. Where the requests' payloads and the
results live is the layout's (``config.layout.async_*_key``). Whether a mode supports it is its row's
``async_inference`` refusal (``config.modes``): only single-model endpoints do, since
``InvokeEndpointAsync`` has neither ``TargetModel`` nor ``InferenceComponentName``.

Sources (read 2026-11-27):

* botocore's ``sagemaker`` and ``sagemaker-runtime`` service models (the pinned ``.venv``):
  ``AsyncInferenceClientConfig.MaxConcurrentInvocationsPerInstance`` 1..1000; ``InvokeEndpointAsync``
  ``POST /endpoints/{EndpointName}/async-invocations`` answering 202, headers
  ``X-Amzn-SageMaker-InputLocation`` (required in practice, ``s3://`` or ``https://``),
  ``X-Amzn-SageMaker-InvocationTimeoutSeconds`` 1..3600, ``X-Amzn-SageMaker-RequestTTLSeconds``
  60..21600, ``X-Amzn-SageMaker-Inference-Id`` (1..64 printable); the response's ``InferenceId``,
  ``X-Amzn-SageMaker-OutputLocation`` and ``X-Amzn-SageMaker-FailureLocation``; no ``TargetModel``, no
  ``InferenceComponentName``.
* https://docs.aws.amazon.com/sagemaker/latest/dg/async-inference-autoscale.html: asynchronous
  endpoints scale to zero instances; a step policy on ``HasBacklogWithoutCapacity`` scales up from zero
  (without it the endpoint leaves zero only once the backlog exceeds the target tracking value); target
  tracking on ``ApproximateBacklogSizePerInstance`` (namespace AWS/SageMaker, dimension EndpointName,
  Average). The guide's example values used by :data:`SCALE_FROM_ZERO` (alarm Average over 60 s, 2 of 2
  datapoints, ``>= 1``, missing data ``missing``; step policy ChangeInCapacity +1, cooldown 300 s) and
  the tracking cooldowns (scale-in 600 s, scale-out 300 s) are *unconfirmed*: the stored excerpt read
  covered the page's overview only; check the page before relying on them (each is an option).
* The issue's reading of the guide (June 2026): payloads up to 1 GB in S3 or inline up to 128,000 bytes
  (botocore's ``Body`` max 128000), processing up to one hour.

Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cdk_triton.config import formats
from cdk_triton.errors import TritonValidationError

#: ``MaxConcurrentInvocationsPerInstance`` bounds (botocore's ``AsyncInferenceClientConfig``).
MAX_CONCURRENT_RANGE = (1, 1000)
#: ``InvocationTimeoutSeconds`` bounds (botocore's ``InvokeEndpointAsync``).
INVOCATION_TIMEOUT_RANGE = (1, 3600)
#: SageMaker's default invocation timeout when a request sends none (the API reference: 15 minutes;
#: *unconfirmed* here: not in botocore's model).
DEFAULT_INVOCATION_TIMEOUT_S = 900
#: ``InvokeEndpointAsync`` inline ``Body`` limit (botocore: max 128000).
INLINE_BODY_MAX_BYTES = 128_000
#: The backlog per instance the target tracking holds unless told (the guide's example uses 5).
DEFAULT_BACKLOG_PER_INSTANCE = 5.0
#: The scale-from-zero step policy and its alarm, as the guide's example shows them (see the module doc).
SCALE_FROM_ZERO: dict[str, Any] = {
    "alarm_statistic": "Average",
    "alarm_period_s": 60,
    "alarm_evaluation_periods": 2,
    "alarm_datapoints": 2,
    "alarm_threshold": 1,
    "alarm_comparison": "GreaterThanOrEqualToThreshold",
    "alarm_missing_data": "missing",
    "policy_aggregation": "Average",
    "policy_cooldown_s": 300,
}
#: Target tracking cooldowns of the backlog policy (the guide's example).
BACKLOG_SCALE_IN_COOLDOWN_S = 600
BACKLOG_SCALE_OUT_COOLDOWN_S = 300
#: ``IncludeInferenceResponseIn`` values (botocore's ``AsyncNotificationTopicTypes``).
NOTIFICATION_TOPIC_TYPES = ("SUCCESS_NOTIFICATION_TOPIC", "ERROR_NOTIFICATION_TOPIC")


@dataclass(frozen=True, kw_only=True, slots=True)
class AsyncValues:
    """The ``async:`` block of an endpoint (every key optional; ``async: {}`` takes every default).

    Attributes:
        max_concurrent_invocations_per_instance: requests SageMaker sends one instance at once (1..1000).
            Default: derived from the default model's instance groups and batching
            (:func:`derived_max_concurrency`).
        invocation_timeout_s: how long one request may run (1..3600), sent by the clients cdk-triton
            runs (the deploy verification, ``invoke --async``) and the local endpoint's default.
            Default: SageMaker's (900 s).
        min_instances: the fewest instances (0: scale to zero). Default: 0.
        max_instances: the most instances. Default: 1.
        backlog_per_instance: the ``ApproximateBacklogSizePerInstance`` target tracking holds (> 0).
            Default: 5.
        notifications: SNS success and error topics (encrypted; the model's role may publish to
            them only). Default: true.
    """

    max_concurrent_invocations_per_instance: int | None = None
    invocation_timeout_s: int | None = None
    min_instances: int = 0
    max_instances: int = 1
    backlog_per_instance: float = DEFAULT_BACKLOG_PER_INSTANCE
    notifications: bool = True


#: The type of each key of the ``async:`` block.
KEY_TYPES: dict[str, type | tuple[type, ...]] = {
    "max_concurrent_invocations_per_instance": int,
    "invocation_timeout_s": int,
    "min_instances": int,
    "max_instances": int,
    "backlog_per_instance": (int, float),
    "notifications": bool,
}


def _at(path: str | None, key: str) -> str | None:
    return f"{path}.{key}" if path else None


def _problem(
    code: str, path: str | None, prop: str, value: object, problem: str, allowed: str, fix: str
) -> TritonValidationError:
    return TritonValidationError(
        code, prop=prop, value=value, problem=problem, allowed=allowed, fix=fix, path=path
    )


def value_problems(v: AsyncValues, path: str | None = None) -> list[TritonValidationError]:
    """``InvalidAsyncInference``: every value outside its limit (located at ``path.<key>`` when given)."""
    out: list[TritonValidationError] = []
    lo, hi = MAX_CONCURRENT_RANGE
    mc = v.max_concurrent_invocations_per_instance
    if mc is not None and not lo <= mc <= hi:
        out.append(
            _problem(
                "InvalidAsyncInference",
                _at(path, "max_concurrent_invocations_per_instance"),
                "max_concurrent_invocations_per_instance",
                mc,
                "is outside SageMaker's range",
                f"{lo}..{hi}",
                "leave it out (derived from the model's instance groups and batching) or pass 1..1000",
            )
        )
    lo, hi = INVOCATION_TIMEOUT_RANGE
    if v.invocation_timeout_s is not None and not lo <= v.invocation_timeout_s <= hi:
        out.append(
            _problem(
                "InvalidAsyncInference",
                _at(path, "invocation_timeout_s"),
                "invocation_timeout_s",
                v.invocation_timeout_s,
                "is outside InvokeEndpointAsync's InvocationTimeoutSeconds",
                f"{lo}..{hi} seconds",
                "pass at most 3600 (one hour)",
            )
        )
    if v.min_instances < 0:
        out.append(
            _problem(
                "InvalidAsyncInference",
                _at(path, "min_instances"),
                "min_instances",
                v.min_instances,
                "is negative",
                ">= 0 (0: scale to zero)",
                "set min_instances to 0 or more",
            )
        )
    if v.max_instances < max(1, v.min_instances):
        out.append(
            _problem(
                "InvalidAsyncInference",
                _at(path, "max_instances"),
                "max_instances",
                v.max_instances,
                f"is below {max(1, v.min_instances)} (1 and min_instances {v.min_instances})",
                f">= {max(1, v.min_instances)}",
                "raise max_instances",
            )
        )
    if not v.backlog_per_instance > 0:
        out.append(
            _problem(
                "InvalidAsyncInference",
                _at(path, "backlog_per_instance"),
                "backlog_per_instance",
                v.backlog_per_instance,
                "is not a positive backlog target",
                "> 0 queued requests per instance",
                f"pass e.g. {DEFAULT_BACKLOG_PER_INSTANCE:g}",
            )
        )
    return out


def from_dict(d: Mapping[str, Any]) -> AsyncValues:
    """The values of a checked mapping (the declaration and the manifest check types first)."""
    kw = {k: d[k] for k in KEY_TYPES if d.get(k) is not None}
    if "backlog_per_instance" in kw:
        kw["backlog_per_instance"] = float(kw["backlog_per_instance"])
    return AsyncValues(**kw)


def to_dict(v: AsyncValues) -> dict[str, Any]:
    """The manifest form (None-valued keys left out)."""
    return {k: getattr(v, k) for k in KEY_TYPES if getattr(v, k) is not None}


def model_concurrency(config: Mapping[str, Any], gpu_count: int) -> int:
    """Requests one Triton model keeps in flight on one instance: its model instances (``instance_group``
    count per listed GPU, or per GPU of the instance for KIND_GPU/KIND_AUTO without ``gpus``; Triton's
    default is one instance per GPU, else one) times ``max_batch_size`` when the dynamic batcher groups
    requests (else 1)."""
    groups = config.get("instance_group") or [{}]
    instances = 0
    for g in groups:
        count = int(g.get("count") or 1)
        kind = g.get("kind") or "KIND_AUTO"
        gpus = g.get("gpus") or []
        if gpus:
            instances += count * len(gpus)
        elif kind in ("KIND_GPU", "KIND_AUTO") and gpu_count > 0:
            instances += count * gpu_count
        else:
            instances += count
    batch = int(config.get("max_batch_size") or 0)
    return max(1, instances) * (batch if batch > 0 and "dynamic_batching" in config else 1)


def derived_max_concurrency(
    configs: Mapping[str, Mapping[str, Any]], default_model: str | None, gpu_count: int
) -> int:
    """``MaxConcurrentInvocationsPerInstance`` of a repository whose ``/invocations`` serves
    ``default_model``: its :func:`model_concurrency`, for an ensemble the smallest of its steps' (the
    slowest stage bounds the pipeline), within 1..1000; 1 when the model is unknown."""
    cfg = configs.get(default_model or "")
    if cfg is None:
        return 1
    if cfg.get("platform") in formats.composed_platforms():
        steps = [s.get("model_name") for s in (cfg.get("ensemble_scheduling") or {}).get("step", [])]
        values = [model_concurrency(configs[s], gpu_count) for s in steps if s in configs]
        value = min(values) if values else 1
    else:
        value = model_concurrency(cfg, gpu_count)
    lo, hi = MAX_CONCURRENT_RANGE
    return min(max(value, lo), hi)
