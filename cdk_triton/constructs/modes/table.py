"""The construct side of the hosting modes: each mode's endpoint behaviour, keyed by its row's name.

A hosting mode is a row of ``cdk_triton.config.modes`` (what differs, as data) and a module of this
package (what differs, as construct code): the graphs its dashboard shows besides every endpoint's, the
alarms it adds, how its capacity scales (the scalable target on the row's ``scaling_dimension``, or the
row's refusal), the instance checks of its production variant, and what its deploy verification needs.
``monitoring``, ``endpoint_base``, ``endpoint`` and ``verification`` ask :func:`behaviour` for the mode's
behaviour instead of branching on it; an endpoint of unknown mode (imported without ``mode``) gets
:class:`Common`, the behaviour every mode shares.

Each mode module subclasses :class:`Common`, overrides what its mode does differently and registers an
instance (:func:`register` at import); ``__init__.py`` imports it (one line per mode). The test of the
axis (``tests/unit/constructs/test_modes.py``) fails on a row without a module here, and on a module
whose name is no row's. The hooks receive the constructs as the protocols below (this package imports
neither ``monitoring`` nor the endpoints: no import circle).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from cdk_triton.config import modes
from cdk_triton.constructs import metrics as m
from cdk_triton.errors import TritonValidationError

if TYPE_CHECKING:
    import aws_cdk as cdk
    from aws_cdk import aws_cloudwatch as cloudwatch
    from constructs import Construct

    from cdk_triton.constructs.scaling import TritonScaling

Widget = dict[str, Any]


class Dashboard(Protocol):
    """What a mode's graphs are drawn with (``TritonDashboard``)."""

    period: int

    def graph(self, title: str, metrics: list[list[Any]], **extra: Any) -> Widget: ...

    def triton_graphs(self, ns: str) -> list[Widget]: ...

    def paired_graphs(
        self,
        each: Callable[..., list[list[Any]]],
        rows: Sequence[tuple[str, m.MetricDef, str | None, m.MetricDef | None]],
    ) -> list[Widget]: ...


class Alarms(Protocol):
    """What a mode's alarms are defined with (``TritonAlarms``)."""

    cache_hit_alarm: cloudwatch.CfnAlarm | None
    loading_wait_alarm: cloudwatch.CfnAlarm | None
    component_alarms: dict[str, list[cloudwatch.CfnAlarm]]

    @property
    def dims(self) -> list[dict[str, str]]: ...

    def alarm(
        self,
        cid: str,
        description: str,
        threshold: float,
        *,
        comparison: str = ...,
        scope: Construct | None = None,
        **props: Any,
    ) -> cloudwatch.CfnAlarm: ...


class AsyncOptions(Protocol):
    """What a mode reads of an asynchronous endpoint's options (``AsyncInferenceOptions``)."""

    @property
    def invocation_timeout(self) -> cdk.Duration | None: ...


class ComponentScalingFacts(Protocol):
    """What a mode reads of a component's copy scaling (``scaling.ComponentScaling``)."""

    @property
    def scale_from_zero_alarm(self) -> cloudwatch.CfnAlarm | None: ...


class ComponentModel(Protocol):
    """What a mode reads of a component's model (``TritonModel``)."""

    @property
    def metrics_namespace(self) -> str | None: ...


class Component(Protocol):
    """What a mode reads of an inference component defined in the app (``TritonInferenceComponent``)."""

    @property
    def model(self) -> ComponentModel: ...

    @property
    def scaling(self) -> ComponentScalingFacts | None: ...


class Endpoint(Protocol):
    """What a mode reads of an endpoint (``ITritonEndpoint``: defined here or imported)."""

    @property
    def endpoint_name(self) -> str: ...

    @property
    def metrics_namespace(self) -> str | None: ...

    @property
    def component_names(self) -> Mapping[str, str]: ...

    @property
    def components(self) -> Mapping[str, Component]: ...

    @property
    def instance_pools(self) -> tuple[str, ...]: ...

    @property
    def async_options(self) -> AsyncOptions | None: ...


@dataclass(frozen=True, kw_only=True, slots=True)
class AlarmOptions:
    """``TritonAlarms``' thresholds and switches, as the modes' alarms read them."""

    period_s: int
    error_rate_percent: float
    latency_ms: float
    cache_hit_ratio: float
    wait_ms: float
    mme_loading_alarms: bool
    component_alarms: bool
    no_capacity_alarms: bool
    component_rollback: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class ScalingTarget:
    """What ``auto_scale`` of an endpoint's variant passes to the mode (``TritonEndpointBase``)."""

    endpoint_name: str
    variant_name: str
    instance_type: str | None
    gpu_count: int | None
    instance_count: int | None
    scale_to_zero: bool = False


class ModeConstructs(Protocol):
    """One hosting mode's construct behaviour (an instance registered under its row's name)."""

    @property
    def name(self) -> str:
        """The row's name (``config.modes``)."""
        ...

    def dashboard_graphs(self, dashboard: Dashboard, ep: Endpoint, dims: list[str]) -> list[Widget]:
        """The graphs after the instances graph: the mode's own and Triton's published metrics."""
        ...

    def define_alarms(self, alarms: Alarms, ep: Endpoint, options: AlarmOptions) -> None:
        """The alarms the mode adds to every endpoint's (error rate, latency, GPU memory)."""
        ...

    def check_auto_scale(self, scope: Construct, *, min_capacity: int, max_capacity: int) -> None:
        """Raise the row's refusal of ``auto_scale`` (located at ``scope``); nothing when supported."""
        ...

    def guardrails_problems(self, deployment: object) -> list[TritonValidationError]:
        """The row's refusal of deployment guardrails when ``deployment`` is given; else none."""
        ...

    def auto_scale(
        self, scope: Construct, target: ScalingTarget, *, min_capacity: int, max_capacity: int
    ) -> TritonScaling:
        """The variant's scalable target on the row's ``scaling_dimension``."""
        ...

    def instance_warnings(
        self, instance_type: str, instance_count: int, artifacts: Any
    ) -> list[tuple[str, str]]:
        """Warnings (id, message) about the production variant's instances for this mode's models."""
        ...

    def verification_spec(self, target_model_parameter_path: str | None) -> dict[str, Any]:
        """The deploy verification's extra custom-resource properties (``lambda/verify`` reads them)."""
        ...

    def verification_parameter_path(self, target_model_parameter_path: str | None) -> str | None:
        """The SSM path the verification's role reads (the TargetModel map), None when none."""
        ...

    def samples_verification(self) -> bool:
        """Whether recorded checks are sampled per deploy (``VerificationSample``)."""
        ...


class Common:
    """The behaviour every mode shares; a mode module subclasses it and overrides what differs."""

    row: modes.HostingMode | None = None

    @property
    def name(self) -> str:
        return "" if self.row is None else self.row.name

    def dashboard_graphs(self, dashboard: Dashboard, ep: Endpoint, dims: list[str]) -> list[Widget]:
        triton = dashboard.triton_graphs(ep.metrics_namespace) if ep.metrics_namespace else []
        return async_graphs(dashboard, ep) + triton

    def define_alarms(self, alarms: Alarms, ep: Endpoint, options: AlarmOptions) -> None:
        define_async_alarms(alarms, ep, options)

    def check_auto_scale(self, scope: Construct, *, min_capacity: int, max_capacity: int) -> None:
        refusal = None if self.row is None else self.row.auto_scale
        if refusal is not None:
            raise refusal.error(
                prop="auto_scale",
                value=(min_capacity, max_capacity),
                allowed="copy scaling per component (ComponentScaling on inference-component/<name>)",
                fix="define ComponentScaling(component_name=..., min_copies=..., max_copies=...) instead",
            ).at(scope.node.path)  # the path read only for a refusal (a jsii round trip)

    def guardrails_problems(self, deployment: object) -> list[TritonValidationError]:
        refusal = None if self.row is None else self.row.guardrails
        if refusal is None or deployment is None:
            return []
        supported = " or ".join(m.label for m in modes.MODES.values() if m.guardrails is None)
        return [
            refusal.error(
                prop="deployment",
                value=type(deployment).__name__,
                allowed=f"deployment guardrails on a {supported} endpoint",
                fix="leave deployment unset (SageMaker's default update)",
            )
        ]

    def auto_scale(
        self, scope: Construct, target: ScalingTarget, *, min_capacity: int, max_capacity: int
    ) -> TritonScaling:
        from cdk_triton.constructs.scaling import TritonScaling

        row = self.row
        return TritonScaling(
            scope,
            "Scaling",
            endpoint_name=target.endpoint_name,
            variant_name=target.variant_name,
            instance_type=target.instance_type,
            gpu_count=target.gpu_count,
            instance_count=target.instance_count,
            min_capacity=min_capacity,
            max_capacity=max_capacity,
            scalable_dimension=None if row is None else row.scaling_dimension,
            scale_to_zero=target.scale_to_zero,
        )

    def instance_warnings(
        self, instance_type: str, instance_count: int, artifacts: Any
    ) -> list[tuple[str, str]]:
        return []

    def verification_spec(self, target_model_parameter_path: str | None) -> dict[str, Any]:
        return {}

    def verification_parameter_path(self, target_model_parameter_path: str | None) -> str | None:
        return None

    def samples_verification(self) -> bool:
        return False


#: row name -> its construct behaviour, in registration order.
BEHAVIOURS: dict[str, ModeConstructs] = {}
#: The behaviour of an endpoint whose mode is unknown (imported without ``mode``).
UNKNOWN: ModeConstructs = Common()


def register(behaviour: ModeConstructs) -> ModeConstructs:
    """Add a mode's construct behaviour under its row's name (a name that is no row's: ValueError)."""
    if modes.lookup(behaviour.name) is None:
        raise ValueError(f"construct behaviour '{behaviour.name}' names no hosting mode ({modes.listed()})")
    if behaviour.name in BEHAVIOURS:
        raise ValueError(f"mode '{behaviour.name}' already has its construct behaviour")
    BEHAVIOURS[behaviour.name] = behaviour
    return behaviour


def unregister(name: str) -> None:
    """Remove a behaviour added with :func:`register`."""
    del BEHAVIOURS[name]


def behaviour(row: modes.HostingMode | None) -> ModeConstructs:
    """The construct behaviour of ``row`` (:data:`UNKNOWN` for None); KeyError for a row without one."""
    if row is None:
        return UNKNOWN
    try:
        return BEHAVIOURS[row.name]
    except KeyError:
        raise KeyError(
            f"hosting mode '{row.name}' has no construct behaviour: add cdk_triton/constructs/modes/<mode>.py "
            "and its import line in cdk_triton/constructs/modes/__init__.py"
        ) from None


def of_endpoint(
    row: modes.HostingMode | None, component_names: Sequence[str] | Mapping[str, str]
) -> ModeConstructs:
    """The behaviour of an endpoint: its row's, or, imported without a mode but with component names,
    the behaviour of the mode that has components."""
    if row is None and component_names:
        row = modes.only(components=True)
    return behaviour(row)


def _async_seconds(ep: Endpoint) -> int | None:
    """An asynchronous endpoint's invocation timeout in seconds (SageMaker's default when unset); None
    for a real-time endpoint (or one imported: its ``async_options`` are unknown)."""
    from cdk_triton.config.async_inference import DEFAULT_INVOCATION_TIMEOUT_S

    opts = ep.async_options
    if opts is None:
        return None
    timeout = opts.invocation_timeout
    return int(timeout.to_seconds()) if timeout is not None else DEFAULT_INVOCATION_TIMEOUT_S


def async_graphs(dashboard: Dashboard, ep: Endpoint) -> list[Widget]:
    """An asynchronous endpoint's backlog graph (the async metrics, dimension EndpointName); else none."""
    if _async_seconds(ep) is None:
        return []
    dims = ["EndpointName", ep.endpoint_name]
    return [
        dashboard.graph(
            "Asynchronous backlog",
            [m.widget_metric(spec, dims) for spec in m.ASYNC_METRICS],
        )
    ]


def define_async_alarms(alarms: Alarms, ep: Endpoint, options: AlarmOptions) -> None:
    """An asynchronous endpoint's alarm: its oldest queued request older than two invocation timeouts
    (requests wait longer than they may run: too few instances, or scaling from zero not working)."""
    seconds = _async_seconds(ep)
    if seconds is None:
        return
    alarms.alarm(
        "OldestAsyncRequest",
        f"ApproximateAgeOfOldestRequest above {2 * seconds} s (two invocation timeouts) on {ep.endpoint_name}",
        2 * seconds,
        **m.alarm_metric(m.APPROXIMATE_AGE_OF_OLDEST_REQUEST),
        statistic=m.APPROXIMATE_AGE_OF_OLDEST_REQUEST.statistic,
        period=options.period_s,
        dimensions=[{"name": "EndpointName", "value": ep.endpoint_name}],
    )


def rate_metrics(dims: list[dict[str, str]], period_s: int) -> list[dict[str, Any]]:
    """The metric math of a 5XX error rate (%) over ``dims`` (an endpoint's or a component's)."""

    def stat(spec: m.MetricDef, qid: str) -> dict[str, Any]:
        metric = {"namespace": spec.namespace, "metricName": spec.name, "dimensions": dims}
        return {
            "id": qid,
            "returnData": False,
            "metricStat": {"metric": metric, "period": period_s, "stat": spec.statistic},
        }

    return [
        {
            "id": "rate",
            "expression": "IF(inv > 0, 100 * err / inv, 0)",
            "label": "5XX error rate (%)",
            "returnData": True,
        },
        stat(m.INVOCATION_5XX_ERRORS, "err"),
        stat(m.INVOCATIONS, "inv"),
    ]
