"""Shadow variants: the candidate as the one ShadowProductionVariants entry, the comparison alarms, the rules."""

from __future__ import annotations

import pytest
from aws_cdk import assertions

from cdk_triton.constructs import DeploymentGuardrails, ModelArtifacts, TritonEndpoint, TritonModel
from cdk_triton.constructs.shadow import ShadowComparison, ShadowVariant
from cdk_triton.errors import TritonValidationError
from tests.unit.constructs.support import EXAMPLE, new_stack, only, template


def _models(stack: object) -> tuple[TritonModel, TritonModel]:
    live = TritonModel(stack, "Live", artifacts=ModelArtifacts.from_manifest(str(EXAMPLE), "classifier"))
    candidate = TritonModel(
        stack, "Candidate", artifacts=ModelArtifacts.from_manifest(str(EXAMPLE), "classifier")
    )
    return live, candidate


def test_candidate_is_the_one_shadow_variant_with_its_sampling_share() -> None:
    stack = new_stack()
    live, candidate = _models(stack)
    TritonEndpoint(
        stack,
        "Endpoint",
        model=live,
        instance_type="ml.g5.xlarge",
        endpoint_name="prod-classifier",
        shadow=ShadowVariant(model=candidate, sampling_percentage=40),
    )
    ShadowComparison(stack, "Compare", endpoint_name="prod-classifier", production_variant="AllTraffic")
    tpl = template(stack)
    config = only(tpl, "AWS::SageMaker::EndpointConfig")["Properties"]
    [prod], [shadow] = config["ProductionVariants"], config["ShadowProductionVariants"]
    assert prod["VariantName"] == "AllTraffic" and prod["InitialVariantWeight"] == 1
    assert shadow["VariantName"] == "Shadow" and shadow["InitialVariantWeight"] == 0.4
    assert shadow["ModelName"] != prod["ModelName"]
    # the same builder: the shadow gets the production variant's host decision and sizing
    assert {
        k: v for k, v in shadow.items() if k not in ("VariantName", "ModelName", "InitialVariantWeight")
    } == {k: v for k, v in prod.items() if k not in ("VariantName", "ModelName", "InitialVariantWeight")}
    alarms = tpl.find_resources("AWS::CloudWatch::Alarm")
    names = sorted(a["Properties"]["AlarmName"] for a in alarms.values())
    assert names == ["prod-classifier-shadow-errors", "prod-classifier-shadow-latency"]
    tpl.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "AlarmName": "prod-classifier-shadow-latency",
            "Metrics": assertions.Match.array_with(
                [assertions.Match.object_like({"Expression": "IF(prod > 0, shadow / prod, 0) - 1.2"})]
            ),
        },
    )


def test_without_shadow_the_endpoint_config_has_no_shadow_variants() -> None:
    stack = new_stack()
    TritonEndpoint(
        stack,
        "E",
        artifacts=ModelArtifacts.from_manifest(str(EXAMPLE), "classifier"),
        instance_type="ml.g5.xlarge",
    )
    assert (
        "ShadowProductionVariants"
        not in only(template(stack, collect=False), "AWS::SageMaker::EndpointConfig")["Properties"]
    )


def test_fails_shadow_on_a_multi_model_endpoint_naming_the_alternative() -> None:
    stack = new_stack()
    live = TritonModel(stack, "Live", artifacts=ModelArtifacts.from_manifest(str(EXAMPLE), "multi"))
    candidate = TritonModel(stack, "Candidate", artifacts=ModelArtifacts.from_manifest(str(EXAMPLE), "multi"))
    with pytest.raises(TritonValidationError) as err:
        TritonEndpoint(
            stack, "E", model=live, instance_type="ml.g5.xlarge", shadow=ShadowVariant(model=candidate)
        )
    assert "ShadowOnMultiModel" in str(err.value) and "second endpoint" in str(err.value)
    assert "TestStack/E" in str(err.value)


def test_fails_rolling_guardrails_beside_a_shadow_but_allows_blue_green() -> None:
    stack = new_stack()
    live, candidate = _models(stack)
    with pytest.raises(TritonValidationError, match="ShadowWithRollingUpdate"):
        TritonEndpoint(
            stack,
            "E",
            model=live,
            instance_type="ml.g5.xlarge",
            instance_count=2,
            deployment=DeploymentGuardrails.rolling(percent=50),
            shadow=ShadowVariant(model=candidate),
        )
    TritonEndpoint(
        stack,
        "F",
        model=live,
        instance_type="ml.g5.xlarge",
        deployment=DeploymentGuardrails.all_at_once(),
        shadow=ShadowVariant(model=candidate),
    )


@pytest.mark.parametrize(
    ("shadow_kwargs", "code"),
    [
        ({"sampling_percentage": 0}, "InvalidShadowSampling"),
        ({"variant_name": "AllTraffic"}, "ShadowVariantNameClash"),
        ({"variant_name": "bad_name"}, "InvalidVariantName"),
    ],
)
def test_fails_bad_shadow_props(shadow_kwargs: dict[str, object], code: str) -> None:
    stack = new_stack()
    live, candidate = _models(stack)
    with pytest.raises(TritonValidationError, match=code):
        TritonEndpoint(
            stack,
            "E",
            model=live,
            instance_type="ml.g5.xlarge",
            shadow=ShadowVariant(model=candidate, **shadow_kwargs),
        )  # type: ignore[arg-type]
