"""InferenceComponents' construct behaviour: per component graphs and alarms (dimension
InferenceComponentName); the variant's instances do not auto-scale (the row's refusal), the copies do
(``scaling.ComponentScaling`` on the row's ``scaling_dimension``)."""

from __future__ import annotations

from typing import Any

from constructs import Construct

from cdk_triton.config import modes
from cdk_triton.constructs import metrics as m
from cdk_triton.constructs._tokens import stack_info
from cdk_triton.constructs.modes.table import (
    AlarmOptions,
    Alarms,
    Common,
    Dashboard,
    Endpoint,
    Widget,
    rate_metrics,
    register,
)


class InferenceComponents(Common):
    row = modes.INFERENCE_COMPONENTS

    def dashboard_graphs(self, dashboard: Dashboard, ep: Endpoint, dims: list[str]) -> list[Widget]:
        """Triton's graphs, then per component (dimension InferenceComponentName): invocations and
        no-capacity failures, p99 model latency, the utilization normalized to what each copy reserved,
        and Triton's graphs of each component's model."""
        graphs = super().dashboard_graphs(dashboard, ep, dims)
        names = list(dict(ep.component_names).values())
        if not names:
            return graphs

        def each(spec: m.MetricDef, stat: str | None = None, **opts: Any) -> list[list[Any]]:
            return [
                m.widget_metric(spec, ["InferenceComponentName", n], stat, label=n, **opts) for n in names
            ]

        graphs += dashboard.paired_graphs(
            each,
            [
                (
                    "Components: invocations / no-capacity failures",
                    m.INVOCATIONS,
                    None,
                    m.NO_CAPACITY_INVOCATION_FAILURES,
                ),
                ("Components: ModelLatency p99 (us)", m.MODEL_LATENCY, "p99", None),
                (
                    "Components: GPU / CPU utilization (% of the reservation)",
                    m.COMPONENT_GPU_UTILIZATION,
                    None,
                    m.COMPONENT_CPU_UTILIZATION,
                ),
            ],
        )
        for c in dict(ep.components).values():  # Triton's own metrics: one namespace per component's model
            if c.model.metrics_namespace:
                graphs += dashboard.triton_graphs(c.model.metrics_namespace)
        return graphs

    def define_alarms(self, alarms: Alarms, ep: Endpoint, options: AlarmOptions) -> None:
        """Per component (logical name -> its alarms in ``component_alarms``): error rate, p99 latency,
        no capacity; the error-rate alarm added to the component's rollback alarms."""
        if not options.component_alarms:
            return
        names: dict[str, str] = dict(ep.component_names)
        defined: dict[str, Any] = dict(ep.components)
        rate, latency_ms, period_s = options.error_rate_percent, options.latency_ms, options.period_s
        owner: Any = alarms
        here = stack_info(owner).node.path
        holder = Construct(owner, "Components") if names else owner
        for logical, real in sorted(names.items()):
            scope = Construct(holder, logical)
            dims = [{"name": "InferenceComponentName", "value": real}]
            found = [
                alarms.alarm(
                    "ErrorRate",
                    f"5XX errors above {rate} % of invocations of component {real}",
                    rate,
                    scope=scope,
                    metrics=rate_metrics(dims, period_s),
                ),
                alarms.alarm(
                    "ModelLatencyP99",
                    f"p99 ModelLatency above {latency_ms} ms on component {real}",
                    latency_ms * 1000,
                    scope=scope,
                    **m.alarm_metric(m.MODEL_LATENCY),
                    extended_statistic=m.MODEL_LATENCY.statistic,
                    period=period_s,
                    dimensions=dims,
                ),
            ]
            component = defined.get(logical)
            scaling = component.scaling if component is not None else None
            if (
                options.no_capacity_alarms
                and component is not None
                and (scaling is None or scaling.scale_from_zero_alarm is None)
            ):
                found.append(
                    alarms.alarm(
                        "NoCapacity",
                        f"requests to component {real} found no copy to take them (NoCapacityInvocationFailures)",
                        0,
                        scope=scope,
                        **m.alarm_metric(m.NO_CAPACITY_INVOCATION_FAILURES),
                        statistic=m.NO_CAPACITY_INVOCATION_FAILURES.statistic,
                        period=period_s,
                        dimensions=dims,
                    )
                )
            if (
                options.component_rollback
                and component is not None
                and stack_info(component).node.path == here
            ):
                component.add_rollback_alarm(found[0].ref)
            alarms.component_alarms[logical] = found


INFERENCE_COMPONENTS = register(InferenceComponents())
