"""Model -> Endpoint composition: TritonEndpoint(model=TritonModel(...)) beside the flat props."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest

from cdk_triton.constructs import ModelArtifacts, TritonEndpoint, TritonMetrics, TritonModel
from cdk_triton.constructs.model_props import MODEL_PROPS
from cdk_triton.errors import TritonValidationError
from tests.unit.constructs.support import ENV, EXAMPLE, new_stack, only, template


def _classifier() -> ModelArtifacts:
    return ModelArtifacts.from_manifest(EXAMPLE, "classifier")


def _normalized(stack: cdk.Stack, model_path: str) -> dict[str, Any]:
    """The template with each logical id replaced by its construct path (the model's under 'MODEL/')."""
    text = json.dumps(template(stack, collect=False).to_json())
    ids = {}
    for c in stack.node.find_all():
        if isinstance(c, cdk.CfnElement):
            path = c.node.path.replace(model_path + "/", "MODEL/")
            ids[stack.get_logical_id(c)] = path
    for lid in sorted(ids, key=len, reverse=True):
        text = re.sub(rf"\b{lid}\b", ids[lid], text)
    return json.loads(text)


def _example_flat(stack: cdk.Stack) -> TritonEndpoint:
    return TritonEndpoint(
        stack,
        "Classifier",
        artifacts=_classifier(),
        instance_type="ml.g5.xlarge",
        endpoint_name="classifier",
        metrics=TritonMetrics(),
    )


def _example_composed(stack: cdk.Stack) -> TritonEndpoint:
    model = TritonModel(
        stack,
        "ClassifierModel",
        artifacts=_classifier(),
        metrics=TritonMetrics(namespace="Triton/classifier"),
    )
    return TritonEndpoint(
        stack, "Classifier", model=model, instance_type="ml.g5.xlarge", endpoint_name="classifier"
    )


def test_model_path_synthesizes_the_flat_path_template() -> None:
    flat_stack, composed_stack = new_stack(), new_stack()
    flat, composed = _example_flat(flat_stack), _example_composed(composed_stack)
    for ep in (flat, composed):
        ep.auto_scale(min_capacity=1, max_capacity=4).scale_on_gpu_utilization(target_percent=60)
    assert flat.model.node.path == "TestStack/Classifier/Model"
    assert composed.model.node.path == "TestStack/ClassifierModel"
    assert composed.metrics_namespace == flat.metrics_namespace == "Triton/classifier"
    assert _normalized(flat_stack, flat.model.node.path) == _normalized(
        composed_stack, composed.model.node.path
    )


def _statements(stack: cdk.Stack, model: TritonModel) -> dict[str, dict[str, Any]]:
    policy = template(stack).find_resources("AWS::IAM::ManagedPolicy")
    doc = policy[stack.get_logical_id(model.execution_policy)]["Properties"]["PolicyDocument"]
    sids = [s["Sid"] for s in doc["Statement"]]
    assert len(sids) == len(set(sids)), sids  # IAM refuses a policy with a Sid twice
    return {s["Sid"]: s for s in doc["Statement"]}


def _group(resource: Any) -> str:
    """The log-group name in a resolved ARN ('...:log-group:/aws/sagemaker/Endpoints/<name>[:*]')."""
    return "".join(p for p in resource["Fn::Join"][1] if isinstance(p, str)).split("log-group:")[1]


def test_one_model_given_to_two_endpoints_grants_both_log_groups(tmp_path: Path) -> None:
    from cdk_nag import AwsSolutionsChecks

    app = cdk.App(outdir=str(tmp_path), builtin_cloud_formation_validation=False)
    stack = cdk.Stack(app, "Shared", env=ENV)
    model = TritonModel(stack, "Model", artifacts=_classifier())
    for name in ("blue", "green"):
        TritonEndpoint(stack, name.title(), model=model, instance_type="ml.g5.xlarge", endpoint_name=name)
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    app.synth()  # raises on an unacknowledged finding: both log groups' streams are acknowledged
    [report] = json.loads((tmp_path / "validation-report.json").read_text())["pluginReports"]
    suppressed = {v["ruleName"]: v for v in report["suppressedViolations"]}
    for name in ("blue", "green"):
        [rule] = [r for r in suppressed if f"Endpoints/{name}:*" in r]
        assert suppressed[rule]["violatingConstructs"][0]["constructPath"] == "Shared/Model/ExecutionPolicy"

    statements = _statements(stack, model)
    assert [_group(r) for r in statements["EndpointLogGroup"]["Resource"]] == [
        "/aws/sagemaker/Endpoints/blue",
        "/aws/sagemaker/Endpoints/green",
    ]
    assert [_group(r) for r in statements["EndpointLogStreams"]["Resource"]] == [
        "/aws/sagemaker/Endpoints/blue:*",
        "/aws/sagemaker/Endpoints/green:*",
    ]
    tpl = template(stack)
    assert len(tpl.find_resources("AWS::SageMaker::Model")) == 1
    configs = tpl.find_resources("AWS::SageMaker::EndpointConfig").values()
    model_ref = {"Fn::GetAtt": [stack.get_logical_id(model.resource), "ModelName"]}
    assert [c["Properties"]["ProductionVariants"][0]["ModelName"] for c in configs] == [model_ref] * 2


def test_a_model_in_another_stack_of_the_same_environment_is_exported_to_the_endpoint() -> None:
    app = cdk.App(builtin_cloud_formation_validation=False)
    models, serving = cdk.Stack(app, "Models", env=ENV), cdk.Stack(app, "Serving", env=ENV)
    model = TritonModel(models, "Model", artifacts=_classifier())
    TritonEndpoint(serving, "Ep", model=model, instance_type="ml.g5.xlarge", endpoint_name="classifier")
    config = only(template(serving), "AWS::SageMaker::EndpointConfig")
    assert "Fn::ImportValue" in config["Properties"]["ProductionVariants"][0]["ModelName"]
    groups = [_group(r) for r in [_statements(models, model)["EndpointLogGroup"]["Resource"]]]
    assert groups == ["/aws/sagemaker/Endpoints/classifier"]  # granted in the model's stack
    assert serving.dependencies == [models]


def test_a_model_in_another_region_is_refused() -> None:
    app = cdk.App(builtin_cloud_formation_validation=False)
    far = cdk.Stack(app, "Far", env=cdk.Environment(account=ENV.account, region="eu-west-1"))
    near = cdk.Stack(app, "Near", env=ENV)
    model = TritonModel(far, "Model", artifacts=_classifier())
    with pytest.raises(TritonValidationError) as info:
        TritonEndpoint(near, "Ep", model=model, instance_type="ml.g5.xlarge")
    err = info.value
    assert (err.code, err.prop, err.value, err.path) == (
        "ModelInOtherEnvironment",
        "model",
        "Far/Model",
        "Near/Ep",
    )
    assert "region eu-west-1" in err.problem and "region us-east-1" in err.problem


def test_model_and_model_props_together_name_every_prop_given() -> None:
    stack = new_stack()
    model = TritonModel(stack, "M", artifacts=_classifier())
    with pytest.raises(TritonValidationError) as info:
        TritonEndpoint(
            stack,
            "Ep",
            model=model,
            instance_type="ml.g5.xlarge",
            artifacts=_classifier(),
            metrics=TritonMetrics(),
            network_isolation=True,
        )
    err = info.value
    assert err.code == "ModelGivenTwice" and err.path == "TestStack/Ep"
    assert err.prop == "artifacts, metrics, network_isolation" and err.value == "TestStack/M"
    assert "artifacts, metrics, network_isolation" in err.fix


def test_a_keyword_that_is_no_prop_is_refused_like_python_does() -> None:
    stack = new_stack()
    with pytest.raises(TypeError, match="TritonEndpoint.. got an unexpected keyword argument 'metric'"):
        TritonEndpoint(stack, "Ep", artifacts=_classifier(), instance_type="ml.g5.xlarge", metric=None)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="TritonModel.. got an unexpected keyword argument 'instance_type'"):
        TritonModel(stack, "M", artifacts=_classifier(), instance_type="ml.g5.xlarge")  # type: ignore[call-arg]


def test_the_model_props_are_written_once() -> None:
    """TritonModel and TritonEndpoint take TritonModelProps; neither repeats a name of it."""
    import inspect

    for cls in (TritonModel, TritonEndpoint):
        named = set(inspect.signature(cls.__init__).parameters)
        assert not named & MODEL_PROPS, (cls.__name__, named & MODEL_PROPS)
    assert {
        "image",
        "role",
        "server_options",
        "environment",
        "metrics",
        "vpc",
        "vpc_subnets",
        "security_groups",
        "network_isolation",
        "acknowledged_advisories",
    } == MODEL_PROPS


def test_a_given_model_is_verified_with_its_own_recorded_samples() -> None:
    stack = new_stack()
    model = TritonModel(stack, "M", artifacts=_classifier())
    ep = TritonEndpoint(stack, "Ep", model=model, instance_type="ml.g5.xlarge")
    verification = ep.add_verification()
    assert verification.node.path.startswith("TestStack/Ep/Verification")
    assert len(template(stack).find_resources("Custom::TritonVerification")) == 1


def test_a_given_model_keeps_its_own_metrics_namespace() -> None:
    stack = new_stack()
    model = TritonModel(stack, "Shared", artifacts=_classifier(), metrics=TritonMetrics())
    ep = TritonEndpoint(stack, "Ep", model=model, instance_type="ml.g5.xlarge", endpoint_name="classifier")
    assert (
        model.metrics_namespace is not None
        and model.metrics_namespace == f"Triton/{cdk.Names.unique_id(model)}"
    )
    assert ep.metrics_namespace == model.metrics_namespace  # one environment for every endpoint of the model
    assert model.environment["SAGEMAKER_TRITON_CLOUDWATCH_METRIC_NAMESPACE"] == model.metrics_namespace


def test_an_endpoints_own_model_can_serve_a_second_endpoint() -> None:
    stack = new_stack()
    first = TritonEndpoint(
        stack, "First", artifacts=_classifier(), instance_type="ml.g5.xlarge", endpoint_name="one"
    )
    TritonEndpoint(stack, "Second", model=first.model, instance_type="ml.g5.xlarge", endpoint_name="two")
    groups = [_group(r) for r in _statements(stack, first.model)["EndpointLogGroup"]["Resource"]]
    assert groups == ["/aws/sagemaker/Endpoints/one", "/aws/sagemaker/Endpoints/two"]
    acks = json.dumps([m.data for m in first.model.node.metadata])  # the second endpoint's, on the model
    assert "Endpoints/two:*" in acks and "Endpoints/one:*" not in acks
