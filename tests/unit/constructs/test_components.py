"""The inference-components endpoint: variant without a model, one component per archive, copies and scaling.

One module-scoped stack per shape (default, tuned, rolling) shared across assertions; the refusals
each synthesize nothing (they raise in the constructor). The example app with a components entry runs
once under the five cdk-nag packs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam

from cdk_triton.config import advisories
from cdk_triton.config.manifest import Manifest
from cdk_triton.constructs import (
    ComponentOptions,
    DeploymentGuardrails,
    ModelArtifacts,
    TritonComponentsEndpoint,
    TritonEndpoint,
)
from cdk_triton.constructs.scaling import ComponentScaling
from cdk_triton.errors import TritonValidationError
from tests.acknowledgments import CRITICAL
from tests.unit.constructs.support import (
    MIB,
    REGISTRY,
    ROOT,
    load_example,
    load_module,
    manifest_with,
    new_stack,
    template,
    with_components,
)


@pytest.fixture(scope="module")
def manifest() -> Manifest:
    return manifest_with(with_components)


def _endpoint(manifest: Manifest, stack: cdk.Stack | None = None, **kw: Any) -> TritonComponentsEndpoint:
    kw.setdefault("instance_type", "ml.g5.xlarge")
    return TritonComponentsEndpoint(
        stack or new_stack(),
        "Components",
        artifacts=ModelArtifacts.from_manifest(manifest, "components"),
        **kw,
    )


def _of(tpl: dict[str, Any], rtype: str) -> dict[str, dict[str, Any]]:
    return {k: v for k, v in tpl["Resources"].items() if v["Type"] == rtype}


@pytest.fixture(scope="module")
def default(manifest: Manifest) -> tuple[TritonComponentsEndpoint, dict[str, Any]]:
    stack = new_stack()
    ep = _endpoint(manifest, stack, endpoint_name="prod-components")
    ep.grant_invoke(iam.Role(stack, "Caller", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com")))
    return ep, template(stack).to_json()


def test_variant_has_no_model_and_managed_scaling_down_to_zero(default: Any) -> None:
    ep, tpl = default
    (config,) = _of(tpl, "AWS::SageMaker::EndpointConfig").values()
    (variant,) = config["Properties"]["ProductionVariants"]
    assert "ModelName" not in variant
    # every component may reach 0 copies -> min 0; max: 2 + 3 copies of 1 GPU each on 1-GPU instances
    assert variant["ManagedInstanceScaling"] == {
        "Status": "ENABLED",
        "MinInstanceCount": 0,
        "MaxInstanceCount": 5,
    }
    assert variant["RoutingConfig"] == {"RoutingStrategy": "LEAST_OUTSTANDING_REQUESTS"}
    assert variant["InitialInstanceCount"] == 2  # one copy each, one GPU each
    assert "ExecutionRoleArn" in config["Properties"] and "KmsKeyId" not in config["Properties"]  # g5: NVMe
    assert (ep.min_instances, ep.max_instances, ep.instance_count) == (0, 5, 2)


def test_one_component_per_archive_on_its_own_model_and_role(default: Any) -> None:
    ep, tpl = default
    components = _of(tpl, "AWS::SageMaker::InferenceComponent")
    models = _of(tpl, "AWS::SageMaker::Model")
    assert len(components) == len(models) == 2
    by_name = {c["Properties"]["InferenceComponentName"]: c["Properties"] for c in components.values()}
    assert sorted(by_name) == ["prod-components-classifier", "prod-components-resnet-ts"]
    assert ep.component_names == {
        "classifier": "prod-components-classifier",
        "resnet_ts": "prod-components-resnet-ts",
    }
    for props in by_name.values():
        model_id = props["Specification"]["ModelName"]["Fn::GetAtt"][0]
        container = models[model_id]["Properties"]["PrimaryContainer"]
        assert container["Mode"] == "SingleModel"
        assert (
            container["ModelDataUrl"].startswith("s3://") and "/ic/components/" in container["ModelDataUrl"]
        )
        assert props["RuntimeConfig"] == {"CopyCount": 1}  # never below the scaling minimum (0)
        assert (
            props["Specification"]["ComputeResourceRequirements"]["NumberOfAcceleratorDevicesRequired"] == 1
        )
    classifier = by_name["prod-components-classifier"]["Specification"]
    assert classifier["DataCacheConfig"] == {"EnableCaching": True}
    # 2 GiB Triton + classifier (100 MiB) + preprocess (200 MiB) + resnet (300 MiB), + 20 %
    assert classifier["ComputeResourceRequirements"]["MinMemoryRequiredInMb"] == -(-(2048 + 600) * 12 // 10)
    # each model's role reads its own archive only (not the prefix)
    policies = [
        p["Properties"]["PolicyDocument"]["Statement"] for p in _of(tpl, "AWS::IAM::ManagedPolicy").values()
    ]
    reads = [s["Resource"] for st in policies for s in st if s["Sid"] == "ReadModelArtifacts"]
    assert len(reads) == 2 and all(r["Fn::Join"][1][-1].endswith(".tar.gz") for r in reads)
    groups = [json.dumps(s["Resource"]) for st in policies for s in st if s["Sid"] == "ComponentLogGroup"]
    assert len(groups) == 2 and all(
        "/aws/sagemaker/InferenceComponents/prod-components-" in g for g in groups
    )


def test_copies_scale_to_zero_and_back(default: Any) -> None:
    _, tpl = default
    targets = _of(tpl, "AWS::ApplicationAutoScaling::ScalableTarget")
    assert sorted(
        (t["Properties"]["MinCapacity"], t["Properties"]["MaxCapacity"]) for t in targets.values()
    ) == [
        (0, 2),
        (0, 3),
    ]
    for t in targets.values():
        assert t["Properties"]["ScalableDimension"] == "sagemaker:inference-component:DesiredCopyCount"
        assert t["Properties"]["ResourceId"].startswith("inference-component/prod-components-")
        assert len(t["DependsOn"]) == 1  # the component: the resource id names it by a plain string
    policies = [p["Properties"] for p in _of(tpl, "AWS::ApplicationAutoScaling::ScalingPolicy").values()]
    tracking = [p for p in policies if p["PolicyType"] == "TargetTrackingScaling"]
    steps = [p for p in policies if p["PolicyType"] == "StepScaling"]
    assert len(tracking) == len(steps) == 2
    assert {
        p["TargetTrackingScalingPolicyConfiguration"]["PredefinedMetricSpecification"]["PredefinedMetricType"]
        for p in tracking
    } == {"SageMakerInferenceComponentConcurrentRequestsPerCopyHighResolution"}
    assert steps[0]["StepScalingPolicyConfiguration"]["StepAdjustments"] == [
        {"MetricIntervalLowerBound": 0, "ScalingAdjustment": 1}
    ]
    alarms = [a["Properties"] for a in _of(tpl, "AWS::CloudWatch::Alarm").values()]
    assert {a["MetricName"] for a in alarms} == {"NoCapacityInvocationFailures"}
    assert all(a["Dimensions"][0]["Name"] == "InferenceComponentName" and a["AlarmActions"] for a in alarms)


def test_name_map_and_grant_invoke(default: Any) -> None:
    _, tpl = default
    (param,) = _of(tpl, "AWS::SSM::Parameter").values()
    assert param["Properties"]["Name"] == "/cdk-triton/prod-components/components/000"
    assert json.loads(param["Properties"]["Value"]) == {
        "classifier": "prod-components-classifier",
        "resnet_ts": "prod-components-resnet-ts",
    }
    statements = [
        s
        for p in _of(tpl, "AWS::IAM::Policy").values()
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]
    assert [s["Action"] for s in statements] == ["sagemaker:InvokeEndpoint"]
    assert statements[0]["Resource"] == {"Ref": "Components47415452"}


def test_options_override_the_manifest_and_derivation(manifest: Manifest) -> None:
    stack = new_stack()
    _endpoint(
        manifest,
        stack,
        instance_type="ml.g5.12xlarge",
        components={
            "resnet_ts": ComponentOptions(
                copies=2, min_copies=1, max_copies=4, accelerators=2, cpu_cores=4, min_memory_mb=4096,
                max_memory_mb=8192, startup_timeout=cdk.Duration.minutes(20), invocations_per_copy=100,
            )
        },
        min_instances=1,
        routing_strategy="RANDOM",
    )  # fmt: skip
    tpl = template(stack).to_json()
    spec = next(
        c["Properties"]
        for c in _of(tpl, "AWS::SageMaker::InferenceComponent").values()
        if c["Properties"]["InferenceComponentName"].endswith("resnet-ts")
    )
    assert spec["RuntimeConfig"] == {"CopyCount": 2}
    assert spec["Specification"]["ComputeResourceRequirements"] == {
        "MinMemoryRequiredInMb": 4096,
        "MaxMemoryRequiredInMb": 8192,
        "NumberOfAcceleratorDevicesRequired": 2,
        "NumberOfCpuCoresRequired": 4,
    }
    assert spec["Specification"]["StartupParameters"] == {"ContainerStartupHealthCheckTimeoutInSeconds": 1200}
    tracking = [
        p["Properties"]["TargetTrackingScalingPolicyConfiguration"]
        for p in _of(tpl, "AWS::ApplicationAutoScaling::ScalingPolicy").values()
        if p["Properties"]["PolicyType"] == "TargetTrackingScaling"
    ]
    assert {"PredefinedMetricType": "SageMakerInferenceComponentInvocationsPerCopy"} in [
        t["PredefinedMetricSpecification"] for t in tracking
    ]
    (variant,) = next(iter(_of(tpl, "AWS::SageMaker::EndpointConfig").values()))["Properties"][
        "ProductionVariants"
    ]
    assert variant["RoutingConfig"] == {"RoutingStrategy": "RANDOM"}
    assert variant["ManagedInstanceScaling"]["MinInstanceCount"] == 1
    # 4 GPUs: resnet_ts 4 x 2 + classifier 2 x 1 = 10 GPUs at the maxima -> 3 instances
    assert variant["ManagedInstanceScaling"]["MaxInstanceCount"] == 3


def test_rolling_update_is_rolled_back_by_the_endpoint_alarm(manifest: Manifest) -> None:
    stack = new_stack()
    two = ComponentOptions(copies=2)  # a batch is 5..50 % of the copies: 1 of 2
    ep = _endpoint(
        manifest,
        stack,
        components={"classifier": two, "resnet_ts": two},
        deployment=DeploymentGuardrails.rolling(instance_count=1),
    )
    tpl = template(stack).to_json()
    assert ep.rollback_alarm is not None
    for c in _of(tpl, "AWS::SageMaker::InferenceComponent").values():
        config = c["Properties"]["DeploymentConfig"]
        assert config["RollingUpdatePolicy"]["MaximumBatchSize"] == {"Type": "COPY_COUNT", "Value": 1}
        assert config["AutoRollbackConfiguration"]["Alarms"] == [
            {"AlarmName": {"Ref": stack.get_logical_id(ep.rollback_alarm)}}
        ]


def _code(err: TritonValidationError) -> set[str]:
    return {e.code for e in getattr(err, "errors", [err])}


@pytest.mark.parametrize(
    ("kw", "code"),
    [
        ({"components": {"resnet_ts": ComponentOptions(min_memory_mb=64 * 1024)}}, "ComponentDoesNotFit"),
        ({"components": {"resnet_ts": ComponentOptions(accelerators=2)}}, "ComponentDoesNotFit"),
        ({"max_instances": 3}, "CopiesExceedInstances"),
        ({"components": {"bert": ComponentOptions(copies=1)}}, "UnknownComponent"),
        ({"components": {"resnet_ts": ComponentOptions(copies=4, max_copies=3)}}, "InvalidCopyCount"),
        ({"components": {"resnet_ts": ComponentOptions(copies=0, min_copies=1)}}, "InvalidCopyCount"),
        (
            {"components": {"resnet_ts": ComponentOptions(min_copies=1)}, "min_instances": 0},
            "InvalidInstanceScaling",
        ),
        ({"routing_strategy": "ROUND_ROBIN"}, "ComponentModeNotSupported"),
        ({"deployment": DeploymentGuardrails.canary()}, "InvalidDeploymentPolicy"),
        ({"deployment": DeploymentGuardrails.rolling(instance_count=1)}, "InvalidTrafficStep"),
    ],
)
def test_fails_on_what_sagemaker_would_refuse(manifest: Manifest, kw: dict[str, Any], code: str) -> None:
    with pytest.raises(TritonValidationError) as info:
        _endpoint(manifest, **kw)
    assert code in _code(info.value)
    assert "Components" in str(info.value)  # located at the construct


def test_fails_when_a_gpus_placement_exceeds_the_component(manifest: Manifest) -> None:
    def mutate(data: dict[str, Any]) -> None:
        with_components(data)
        data["models"]["resnet"]["config"]["instance_group"] = [{"kind": "KIND_GPU", "count": 1, "gpus": [1]}]

    with pytest.raises(TritonValidationError) as info:
        _endpoint(manifest_with(mutate), instance_type="ml.g5.12xlarge")
    assert _code(info.value) == {"ComponentGpuPlacement"}
    assert "accelerators=2" in str(info.value)


def test_fails_on_a_single_model_repository_and_on_instance_autoscaling(manifest: Manifest) -> None:
    with pytest.raises(TritonValidationError) as info:
        TritonComponentsEndpoint(
            new_stack(),
            "Sme",
            artifacts=ModelArtifacts.from_manifest(manifest, "classifier"),
            instance_type="ml.g5.xlarge",
        )
    assert _code(info.value) == {"ComponentModeNotSupported"}
    ep = _endpoint(manifest)
    with pytest.raises(TritonValidationError) as info:
        ep.auto_scale(max_capacity=2)
    assert _code(info.value) == {"AutoScaleOnComponentsEndpoint"}


def test_component_scaling_range_and_floor() -> None:
    stack = new_stack()
    kept = ComponentScaling(stack, "Kept", component_name="c", min_copies=1, max_copies=2)
    assert kept.scale_from_zero_alarm is None
    with pytest.raises(TritonValidationError) as info:
        ComponentScaling(stack, "Bad", component_name="c", min_copies=3, max_copies=2)
    assert _code(info.value) == {"InvalidCopyCount"}
    with pytest.raises(TritonValidationError) as info:
        kept.scale_on_concurrent_requests_per_copy(0)
    assert _code(info.value) == {"InvalidTargetValue"}


def test_an_mme_entry_serves_as_components_too() -> None:
    """The MME's archives are the components' archives: the same manifest entry gives either mode."""
    data = load_example()
    for m in data["models"].values():
        m.update(memory_bytes=50 * MIB)
    mme = manifest_with(lambda d: d.update(data))
    stack = new_stack()
    TritonEndpoint(
        stack, "Multi", artifacts=ModelArtifacts.from_manifest(mme, "multi"), instance_type="ml.g5.xlarge"
    )
    ep = TritonComponentsEndpoint(
        stack,
        "Components",
        artifacts=ModelArtifacts.from_manifest(mme, "multi"),
        instance_type="ml.g5.xlarge",
    )
    assert sorted(ep.components) == ["classifier", "resnet_ts"]
    assert ep.min_instances == 1  # no copy scaling: the components keep their copies


# ---------------------------------------------------------------------------- the example app


@pytest.fixture(scope="module")
def examplewith_components(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """app.py over a manifest with a ``components`` entry, under the five cdk-nag packs (custom resources off:
    the manifest copy has no sample files beside it)."""
    import cdk_nag

    work = tmp_path_factory.mktemp("app-components")
    data = load_example()
    with_components(data)
    for ic in data["endpoints"]["components"]["components"].values():  # models.yaml leaves the bounds unset
        ic.pop("min_copies", None)
        ic.pop("max_copies", None)
    path = work / "manifest.json"
    path.write_text(json.dumps(data))
    out = work / "cdk.out"
    app = cdk.App(
        outdir=str(out),
        context={"manifest": str(path), "custom_resources": "false", "endpoint_prefix": "dev-"},
        builtin_cloud_formation_validation=False,
    )
    load_module(ROOT / "app.py", "cdk_triton_example_app_components").build_app(app=app)
    cdk.Validations.of(app).add_plugins(
        cdk_nag.HIPAASecurityChecks(app),
        cdk_nag.NIST80053R4Checks(app),
        cdk_nag.NIST80053R5Checks(app),
        cdk_nag.PCIDSS321Checks(app),
    )
    app.synth()  # raises on any unacknowledged finding
    report = json.loads((out / "validation-report.json").read_text())
    tpl_path = out / "CdkTritonExample.template.json"
    REGISTRY.add_file(tpl_path)
    return {"report": report, "template": json.loads(tpl_path.read_text())}


def test_example_app_components_endpoint_passes_the_five_packs(
    examplewith_components: dict[str, Any],
) -> None:
    report, tpl = examplewith_components["report"], examplewith_components["template"]
    assert {p["pluginName"]: p["conclusion"] for p in report["pluginReports"]} == {
        pack: "success"
        for pack in ("AwsSolutions", "HIPAA.Security", "NIST.800.53.R4", "NIST.800.53.R5", "PCI.DSS.321")
    }
    names = sorted(
        c["Properties"]["InferenceComponentName"]
        for c in _of(tpl, "AWS::SageMaker::InferenceComponent").values()
    )
    assert names == ["dev-components-classifier", "dev-components-resnet-ts"]  # prefixed per stage
    targets = _of(tpl, "AWS::ApplicationAutoScaling::ScalableTarget")
    assert sorted(
        t["Properties"]["MinCapacity"] for t in targets.values() if "inference-component" in json.dumps(t)
    ) == [0, 0]


def test_verification_invokes_each_component_by_its_name(manifest: Manifest) -> None:
    stack = new_stack()
    ep = _endpoint(manifest, stack, endpoint_name="prod-components")
    verification = ep.add_verification()
    tpl = template(stack).to_json()
    (custom,) = [
        r["Properties"] for r in tpl["Resources"].values() if r["Type"] == "Custom::TritonVerification"
    ]
    assert custom["Mode"] == "InferenceComponents" and "TargetModelParameterPath" not in custom
    assert custom["Components"] == ep.component_names  # the handler's map: logical -> InferenceComponentName
    assert {c["Model"] for c in custom["Checks"]} == {c.model for c in verification.checks} == {"classifier"}
    describe = [s for s in verification.policy_statements if s["Sid"] == "DescribeComponents"]
    assert describe and len(describe[0]["Resource"]) == 2  # each component: its copy count (zero: skipped)


def test_pipeline_verify_spec_names_the_components_of_the_deployed_endpoint(manifest: Manifest) -> None:
    from cdk_triton.pipeline.verify_checks import verify_checks

    spec = verify_checks(manifest, "components", endpoint_name="dev-components")
    assert spec["Mode"] == "InferenceComponents" and "TargetModelParameterPath" not in spec
    assert spec["Components"] == {
        "classifier": "dev-components-classifier",
        "resnet_ts": "dev-components-resnet-ts",
    }
    assert [c["Model"] for c in spec["Checks"]] == ["classifier"]


def test_an_imported_components_endpoint_refuses_instance_autoscaling(default: Any) -> None:
    ep, _ = default
    assert ep.attributes.mode == "InferenceComponents"
    other = new_stack("Other")
    imported = TritonEndpoint.from_endpoint_attributes(other, "Imported", ep.attributes)
    with pytest.raises(TritonValidationError) as info:
        imported.auto_scale(max_capacity=2)
    assert info.value.code == "AutoScaleOnComponentsEndpoint"
    assert imported.metric_invocations().dimensions == {
        "EndpointName": "prod-components",
        "VariantName": "AllTraffic",
    }


def test_hardened_components_pass_the_five_packs(tmp_path: Path) -> None:
    """VPC with a given security group, Triton metrics under a customer key, an EBS-only type with a
    customer volume key, copy scaling to zero, a deploy verification: no finding left in any pack."""
    import cdk_nag
    from aws_cdk import aws_ec2 as ec2
    from aws_cdk import aws_kms as kms

    from cdk_triton.constructs import TritonMetrics
    from tests.unit.constructs.scenarios import _vpc
    from tests.unit.constructs.support import ENV

    app = cdk.App(
        outdir=str(tmp_path),
        builtin_cloud_formation_validation=False,
        context={advisories.CONTEXT_KEY: dict(CRITICAL)},  # the suite's one acknowledgment
    )
    stack = cdk.Stack(app, "HardenedComponents", env=ENV)
    logs_key = kms.Key(stack, "LogsKey", enable_key_rotation=True)
    ep = TritonComponentsEndpoint(
        stack,
        "Components",
        artifacts=ModelArtifacts.from_manifest(manifest_with(with_components), "components"),
        instance_type="ml.p3.2xlarge",  # EBS-only: a customer volume key
        endpoint_name="components",
        volume_encryption_key=kms.Key(stack, "VolumeKey", enable_key_rotation=True),
        vpc=_vpc(stack),
        security_groups=[ec2.SecurityGroup.from_security_group_id(stack, "Sg", "sg-0123456789abcdef0")],
        metrics=TritonMetrics(encryption_key=logs_key),
    )
    ep.add_verification(log_encryption_key=logs_key)
    cdk.Validations.of(app).add_plugins(
        cdk_nag.AwsSolutionsChecks(app),
        cdk_nag.HIPAASecurityChecks(app),
        cdk_nag.NIST80053R4Checks(app),
        cdk_nag.NIST80053R5Checks(app),
        cdk_nag.PCIDSS321Checks(app),
    )
    app.synth()  # raises on any unacknowledged finding
    report = json.loads((tmp_path / "validation-report.json").read_text())
    assert {p["conclusion"] for p in report["pluginReports"]} == {"success"}
    REGISTRY.add_file(tmp_path / "HardenedComponents.template.json")
    tpl = json.loads((tmp_path / "HardenedComponents.template.json").read_text())
    (config,) = _of(tpl, "AWS::SageMaker::EndpointConfig").values()
    assert "KmsKeyId" in config["Properties"]
    namespaces = {
        v
        for m in _of(tpl, "AWS::SageMaker::Model").values()
        for k, v in m["Properties"]["PrimaryContainer"]["Environment"].items()
        if k == "SAGEMAKER_TRITON_CLOUDWATCH_METRIC_NAMESPACE"
    }
    assert namespaces == {"Triton/components-classifier", "Triton/components-resnet-ts"}
    assert all("VpcConfig" in m["Properties"] for m in _of(tpl, "AWS::SageMaker::Model").values())


def test_dashboard_and_alarms_of_a_components_endpoint(manifest: Manifest) -> None:
    from cdk_triton.constructs import TritonAlarms, TritonDashboard, TritonMetrics

    stack = new_stack()
    ep = _endpoint(
        manifest,
        stack,
        endpoint_name="prod-components",
        metrics=TritonMetrics(),
        deployment=DeploymentGuardrails.rolling(percent=50),
        components={"classifier": ComponentOptions(copies=2), "resnet_ts": ComponentOptions(copies=2)},
    )
    TritonDashboard(stack, "Dashboard", endpoints=[ep])
    TritonAlarms(stack, "Alarms", endpoint=ep, create_topic=True)
    tpl = template(stack).to_json()
    (dash,) = _of(tpl, "AWS::CloudWatch::Dashboard").values()
    body = json.dumps(dash["Properties"]["DashboardBody"])
    for text in (
        "inference components (2)",
        "InferenceComponentName",
        "prod-components-resnet-ts",
        "NoCapacityInvocationFailures",
        "GPUUtilizationNormalized",
        "Triton/prod-components-classifier",
    ):
        assert text in body, text
    assert ep.rollback_alarm is not None and ep.rollback_alarm.alarm_actions  # notifies the alarm topic


def test_a_component_memory_below_its_models_warns_and_below_their_weights_fails() -> None:
    """Issue 30: ``min_memory_mb`` a tenth of the recorded memory synthesized without a word."""
    from aws_cdk.assertions import Annotations, Match

    def heavy(data: dict[str, Any]) -> None:
        with_components(data)
        for m in data["models"].values():
            m.update(memory_bytes=2048 * MIB, size_bytes=150 * MIB)

    big = manifest_with(heavy)
    archive = big.endpoint("components").target_models["resnet_ts"].models
    stack = new_stack()
    _endpoint(big, stack, components={"resnet_ts": ComponentOptions(min_memory_mb=len(archive) * 2048 // 10)})
    warnings = Annotations.from_stack(stack).find_warning(
        "*", Match.string_like_regexp("ComponentMemoryBelowModel")
    )
    assert warnings and "resnet_ts" in str(warnings[0]) and "memory_bytes" in str(warnings[0])
    with pytest.raises(TritonValidationError) as err:
        _endpoint(big, components={"resnet_ts": ComponentOptions(min_memory_mb=128)})
    assert "ComponentMemoryTooSmall" in _code(err.value) and "weights" in str(err.value)
