"""Instance pools: up to five prioritised instance types behind one production variant.

One author for the values ``models.yaml`` declares (``instance_pools:``), the manifest carries and the
constructs deploy (``TritonEndpoint(instance_pools=..., instance_provision_timeout=...)``), and their
limits. The production variant carries ``InstancePools`` (``InstanceType`` + ``Priority``, optional
``ModelNameOverride``) and ``VariantInstanceProvisionTimeoutInSeconds`` instead of ``InstanceType``.
Whether a mode supports pools is its row's ``instance_pools`` refusal (``config.modes``).

Sources (read 2026-11-27):

* https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-heterogeneous.html ("Deploy to
  multiple instance types with instance pools"): an ordered list of up to five instance types, priority
  1 (highest) to 5, fallback to the next pool on insufficient capacity; ``InstancePools`` replaces
  ``InstanceType``; ``VariantInstanceProvisionTimeoutInSeconds`` 300..3600 s bounds the provisioning
  across all pools; real-time and asynchronous endpoints; single-model endpoints and inference
  components (multi-model endpoints are not among them).
* aws-cdk-lib 2.275.0 ``CfnEndpointConfig.InstancePoolProperty`` (instance_type, priority,
  model_name_override) and cfn-lint 1.58's schema (1..5 pools, priority 1..5, timeout 300..3600);
  neither refuses ``InstanceType`` beside ``InstancePools``: the constructs do.
* The same guide, "Real-time endpoint with inference components": a component's single
  ``Specification`` applies on every pool's instance type (the same model and requirements, "when the
  model can run on any of the provisioned instance types with the same resource requirements"), or a
  plural ``Specifications`` gives one per instance type (``InstanceType``, its own ``ModelName`` and
  ``ComputeResourceRequirements``). ``ModelNameOverride`` is shown for single-model endpoints only
  (an inference-components variant has no ``ModelName`` to override). The guide is silent on
  ``ManagedInstanceScaling`` and ``RoutingConfig`` with pools: *unconfirmed* that they behave as
  without pools.
* The same guide, "Monitor instance pools": the variant's aggregated metrics keep working, and
  CloudWatch also publishes them with an ``InstanceType`` dimension: (EndpointName, VariantName,
  InstanceType) for endpoint and invocation metrics, (InferenceComponentName, InstanceType) for
  inference-component metrics. The dashboards graph both (:func:`instance_type_dimensions`).
* The same guide, "Auto-scaling with instance pools": scaling registers the same scalable target and
  policies; scale-out falls back through the pools by priority, scale-in releases the lowest priority
  first; predefined metrics (``SageMakerVariantInvocationsPerInstance``) aggregate across the types
  ("simplest when all instance types in your pools have similar capacity"); for mixed capacities it
  shows a weighted metric-math signal over the per-``InstanceType`` metrics.

Standard library only.
"""

from __future__ import annotations

from dataclasses import dataclass

from cdk_triton.config import tables
from cdk_triton.errors import TritonValidationError

#: The most pools one variant takes (priorities 1..MAX_POOLS).
MAX_POOLS = 5
#: ``VariantInstanceProvisionTimeoutInSeconds`` bounds.
PROVISION_TIMEOUT_RANGE = (300, 3600)
#: The guide's page (the errors and the README cite it).
GUIDE = "https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-heterogeneous.html"
READ = "2026-11-27"


@dataclass(frozen=True, kw_only=True, slots=True)
class PoolValues:
    """The ``instance_pools:`` of an endpoint.

    Attributes:
        instance_types: the pools' instance types, highest priority first (priority 1, 2, ...).
        provision_timeout_s: ``VariantInstanceProvisionTimeoutInSeconds`` (300..3600). Default:
            SageMaker's.
    """

    instance_types: tuple[str, ...]
    provision_timeout_s: int | None = None


def value_problems(
    v: PoolValues, path: str | None = None, *, prop: str = "instance_pools", timeout_prop: str | None = None
) -> list[TritonValidationError]:
    """``InvalidInstancePools``: no pool, more than :data:`MAX_POOLS`, a type listed twice, a timeout
    outside :data:`PROVISION_TIMEOUT_RANGE` (located at ``path`` when given)."""
    out: list[TritonValidationError] = []
    types = list(v.instance_types)
    if not 1 <= len(types) <= MAX_POOLS:
        out.append(
            TritonValidationError(
                "InvalidInstancePools",
                prop=prop,
                value=types,
                problem=f"lists {len(types)} instance types",
                allowed=f"1..{MAX_POOLS} instance types, highest priority first ({GUIDE}, read {READ})",
                fix=f"keep at most {MAX_POOLS} instance types"
                if types
                else "list at least one instance type",
                path=path,
            )
        )
    dup = sorted({t for t in types if types.count(t) > 1})
    if dup:
        out.append(
            TritonValidationError(
                "InvalidInstancePools",
                prop=prop,
                value=types,
                problem=f"lists {', '.join(dup)} more than once",
                allowed="each instance type in one pool",
                fix="remove the repeated instance types",
                path=path,
            )
        )
    lo, hi = PROVISION_TIMEOUT_RANGE
    t = v.provision_timeout_s
    if t is not None and not lo <= t <= hi:
        key = timeout_prop or f"{prop}.provision_timeout_s"
        out.append(
            TritonValidationError(
                "InvalidInstancePools",
                prop=key,
                value=t,
                problem="is outside VariantInstanceProvisionTimeoutInSeconds",
                allowed=f"{lo}..{hi} seconds",
                fix="leave it out (SageMaker's default) or pass 300..3600 seconds",
                path=f"{path}.provision_timeout_s" if path else None,
            )
        )
    return out


def ami_mismatch(
    decisions: dict[str, str | None], path: str | None = None, *, prop: str = "instance_pools"
) -> TritonValidationError | None:
    """``InstancePoolsHostMismatch`` when the pools' host decisions (instance type -> the
    ``InferenceAmiVersion`` each needs, None: the default host) differ: a variant carries one value."""
    if len(set(decisions.values())) <= 1:
        return None
    said = ", ".join(f"{t}: {a or 'the default host'}" for t, a in decisions.items())
    return TritonValidationError(
        "InstancePoolsHostMismatch",
        prop=prop,
        value=list(decisions),
        problem=f"needs different InferenceAmiVersion values per pool ({said}), and a production variant "
        "carries one",
        allowed="pools whose host decisions agree (one InferenceAmiVersion, or the default host for all)",
        fix="pin an inference_ami_version every pool's family accepts, or keep the pools of one host image "
        "(e.g. the same GPU generation)",
        path=path,
    )


def smallest(instance_types: tuple[str, ...] | list[str]) -> str:
    """The pool with the least compute (GPUs, then vCPUs, then host memory; a type the instance table
    lacks counts as the largest): what one ``Specification`` of an inference component must fit, since a
    copy may be placed on any pool. The first type on a tie (highest priority)."""

    def size(it: str) -> tuple[float, ...]:
        info = tables.instance_type_info(it)
        if info is None:
            return (float("inf"),) * 3
        return (float(info.gpu_count), float(info.vcpus), float(info.host_memory_gib))

    return min(instance_types, key=size)


def fewest_gpus(instance_types: tuple[str, ...] | list[str], default: int) -> int:
    """The fewest GPUs of any pool the instance table knows (``default`` when it knows none): what GPU
    targets and thresholds (percent x GPUs per instance) are sized for, so that each is reachable on every
    pool; a pool with more GPUs reaches it at a lower per-GPU utilization (it scales out and alarms early,
    never late). The guide's "Auto-scaling with instance pools" weights mixed fleets with metric math
    instead, which the constructs do not emit."""
    counts = [info.gpu_count for it in instance_types if (info := tables.instance_type_info(it)) is not None]
    return min(counts) if counts else default


def pool_label(instance_types: tuple[str, ...] | list[str], instance_type: str) -> str:
    """``instance pool <n> (<type>)``: how an error names a pool (its priority, 1 = highest)."""
    return f"instance pool {list(instance_types).index(instance_type) + 1} ({instance_type})"


def instance_type_dimensions(
    instance_types: tuple[str, ...] | list[str], base: dict[str, str]
) -> list[tuple[str, dict[str, str]]]:
    """(instance type, ``base`` + ``InstanceType``) per pool in priority order: the dimension
    combinations the guide's "Monitor instance pools" lists ((EndpointName, VariantName, InstanceType),
    (InferenceComponentName, InstanceType))."""
    return [(it, {**base, "InstanceType": it}) for it in instance_types]
