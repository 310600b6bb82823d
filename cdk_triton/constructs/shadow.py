"""Shadow variants: a candidate model takes a copy of live traffic beside the production variant.

``ShadowVariant`` is the endpoint's ``shadow=`` prop: the one ``ShadowProductionVariants`` entry of the
EndpointConfig, built by the one variant builder (``variant.py``) so it gets the same host decision as the
production variant. ``ShadowComparison`` defines the alarms that compare the shadow with the production
variant (latency and error rate) over the bake time; the promotion pipeline's Bake step watches them.

SageMaker's rules (shadow tests "Exclusions" page and the ``CreateEndpointConfig`` reference, read
2026-11-26): one production and one shadow variant per endpoint; no shadow on multi-model, serverless,
asynchronous or multi-container endpoints; rolling deployment guardrails exclude multi-variant endpoints
(blue/green stays allowed). The sampling share is the shadow's ``InitialVariantWeight`` against the
production variant's (production 1.0, shadow ``sampling_percentage / 100``): the API reference only says
weights are relative, the mapping is the one the shadow-test console writes (*unconfirmed* in the API
reference; the README says so).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import aws_cdk as cdk
from aws_cdk import aws_cloudwatch as cloudwatch
from constructs import Construct

from cdk_triton.config import modes
from cdk_triton.constructs import metrics
from cdk_triton.constructs.checks.names import check_names
from cdk_triton.constructs.errors import catalogued
from cdk_triton.constructs.variant import BuiltVariant, VariantFacts, build_variant
from cdk_triton.errors import TritonValidationError

if TYPE_CHECKING:
    from cdk_triton.constructs.deployment import DeploymentGuardrails
    from cdk_triton.constructs.model import TritonModel

__all__ = ["ShadowComparison", "ShadowVariant", "check_shadow", "build_shadow_variant"]

DEFAULT_SHADOW_VARIANT = "Shadow"


@dataclass(frozen=True, kw_only=True, slots=True)
class ShadowVariant:
    """The candidate that takes a copy of the production variant's traffic (responses discarded).

    Attributes:
        model: the candidate ``TritonModel`` (single-model artifacts).
        sampling_percentage: the share of requests copied to the shadow, 1..100. Default: 100.
        variant_name: Default: ``Shadow``.
        instance_type: Default: the endpoint's.
        instance_count: Default: the endpoint's.
    """

    model: TritonModel
    sampling_percentage: int = 100
    variant_name: str = DEFAULT_SHADOW_VARIANT
    instance_type: str | None = None
    instance_count: int | None = None


def check_shadow(
    shadow: ShadowVariant,
    *,
    production_variant: str,
    mode: modes.HostingMode,
    deployment: DeploymentGuardrails | None,
) -> list[TritonValidationError]:
    """The shadow's own rules (pure; the endpoint adds its path). ``mode``: the production variant's."""
    errs: list[TritonValidationError] = []
    refusal = mode.shadow or shadow.model.hosting_mode.shadow
    if refusal is not None:
        supported = " or ".join(m.label for m in modes.MODES.values() if m.shadow is None)
        errs.append(
            refusal.error(
                prop="shadow",
                value=shadow.model.node.path,
                allowed=f"a shadow on a {supported} endpoint",
                fix="compare MME builds by deploying the candidate to a second endpoint (a staging stage) "
                "and invoking both, or serve the candidate model from a single-model endpoint first",
            )
        )
    if not 1 <= shadow.sampling_percentage <= 100:
        errs.append(
            catalogued(
                "InvalidShadowSampling",
                prop="shadow.sampling_percentage",
                value=shadow.sampling_percentage,
                problem="is outside the share of requests SageMaker can copy",
                allowed="1..100",
                fix="pass sampling_percentage=100 to copy every request, or a smaller share",
            )
        )
    if shadow.variant_name == production_variant:
        errs.append(
            catalogued(
                "ShadowVariantNameClash",
                prop="shadow.variant_name",
                value=shadow.variant_name,
                problem="is the production variant's name",
                allowed=f"any other variant name than {production_variant!r}",
                fix="keep the default 'Shadow'",
            )
        )
    # the production variant's name rule, for the shadow's name ("a" is a valid endpoint name: no error of its own)
    errs += check_names("a", shadow.variant_name)
    if deployment is not None and deployment.rolling_batch is not None:
        errs.append(
            catalogued(
                "ShadowWithRollingUpdate",
                prop="deployment",
                value="rolling",
                problem="is a rolling update, which SageMaker excludes on endpoints with several variants "
                "(a shadow makes two)",
                allowed="a blue/green DeploymentGuardrails (all_at_once, canary, linear) or none while the shadow "
                "is present",
                fix="drop deployment= (or use a blue/green policy) on the shadow deploy; keep the rolling update "
                "for the promote deploy, which has the candidate as its only variant",
            )
        )
    return errs


def build_shadow_variant(
    shadow: ShadowVariant, *, instance_type: str, instance_count: int, base: VariantFacts
) -> BuiltVariant:
    """The shadow's ``ProductionVariant`` from the one builder: the endpoint's facts with the candidate's model."""
    return build_variant(
        VariantFacts(
            variant_name=shadow.variant_name,
            model_name=shadow.model.model_name,
            instance_type=shadow.instance_type or instance_type,
            instance_count=shadow.instance_count or instance_count,
            initial_variant_weight=shadow.sampling_percentage / 100,
            triton_version=shadow.model.triton_version,
            inference_ami_version=base.inference_ami_version,
            volume_size_gib=base.volume_size_gib,
            container_startup_health_check_timeout_seconds=base.container_startup_health_check_timeout_seconds,
            model_data_download_timeout_seconds=base.model_data_download_timeout_seconds,
        )
    )


class ShadowComparison(Construct):
    """Defines the alarms that compare a shadow variant with the production variant over a bake period.

    ``<endpoint>-shadow-latency``: the shadow's p90 ModelLatency above ``latency_ratio`` x production's;
    ``<endpoint>-shadow-errors``: the shadow's 5XX rate above production's plus ``error_rate_margin``.
    Both treat missing data as not breaching (a shadow without traffic raises nothing: the bake step also
    requires the shadow to exist). Add your alarm actions through ``alarms``.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        endpoint_name: str,
        production_variant: str,
        shadow_variant: str = DEFAULT_SHADOW_VARIANT,
        period: cdk.Duration | None = None,
        evaluation_periods: int = 3,
        latency_ratio: float = 1.2,
        error_rate_margin: float = 0.01,
    ) -> None:
        super().__init__(scope, construct_id)
        period = period or cdk.Duration.minutes(5)

        def metric(spec: metrics.MetricDef, variant: str, statistic: str) -> cloudwatch.Metric:
            return metrics.metric_of(spec, endpoint_name, variant, statistic=statistic, period=period)

        latency = cloudwatch.MathExpression(
            expression=f"IF(prod > 0, shadow / prod, 0) - {latency_ratio}",
            using_metrics={
                "shadow": metric(metrics.MODEL_LATENCY, shadow_variant, "p90"),
                "prod": metric(metrics.MODEL_LATENCY, production_variant, "p90"),
            },
            label="shadow p90 latency / production p90 latency - allowed ratio",
            period=period,
        )
        errors = cloudwatch.MathExpression(
            expression=f"IF(sinv > 0, serr / sinv, 0) - IF(pinv > 0, perr / pinv, 0) - {error_rate_margin}",
            using_metrics={
                "serr": metric(metrics.INVOCATION_5XX_ERRORS, shadow_variant, "Sum"),
                "sinv": metric(metrics.INVOCATIONS, shadow_variant, "Sum"),
                "perr": metric(metrics.INVOCATION_5XX_ERRORS, production_variant, "Sum"),
                "pinv": metric(metrics.INVOCATIONS, production_variant, "Sum"),
            },
            label="shadow 5XX rate - production 5XX rate - allowed margin",
            period=period,
        )
        self.alarm_names = [f"{endpoint_name}-shadow-latency", f"{endpoint_name}-shadow-errors"]
        self.alarms = [
            _alarm(self, "Latency", latency, self.alarm_names[0], evaluation_periods, "p90 latency"),
            _alarm(self, "Errors", errors, self.alarm_names[1], evaluation_periods, "5XX error rate"),
        ]


def _alarm(
    scope: Construct, cid: str, expr: cloudwatch.MathExpression, name: str, periods: int, what: str
) -> cloudwatch.Alarm:
    return cloudwatch.Alarm(
        scope,
        cid,
        alarm_name=name,
        metric=expr,
        threshold=0,
        evaluation_periods=periods,
        comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        alarm_description=f"cdk-triton: the shadow's {what} is worse than the production variant's",
    )


def shadow_property(built: BuiltVariant) -> dict[str, Any]:
    """The L1 property of the shadow (the same mapping shape as the production variant's)."""
    return built.production_variant
