"""The example app (app.py) synthesizes against the fixture manifest, passes cdk-nag and cfn-lint."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import aws_cdk as cdk
import pytest

from bench.equivalence import acknowledged, differences
from tests.unit.constructs.support import CFN_LINT, EXAMPLE, ROOT, load_module


def _load_app_module() -> ModuleType:
    return load_module(ROOT / "app.py", "cdk_triton_example_app")


def _synth(tmp: Path, **context: Any) -> dict[str, Any]:
    module = _load_app_module()
    app = cdk.App(
        outdir=str(tmp),
        context={"manifest": str(EXAMPLE), **context},
        builtin_cloud_formation_validation=False,
    )  # cfn-lint runs below
    module.build_app(app=app)
    app.synth()  # raises on unacknowledged cdk-nag findings
    report = tmp / "validation-report.json"
    if report.exists():
        data = json.loads(report.read_text())
        assert all(p["conclusion"] == "success" for p in data.get("pluginReports", [])), data
    tpl: dict[str, Any] = json.loads((tmp / "CdkTritonExample.template.json").read_text())
    return tpl


@pytest.fixture(scope="module")
def agnostic(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("app-agnostic")
    return out, _synth(out)


@pytest.fixture(scope="module")
def us_east_1(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("app-env")
    return out, _synth(out, region="us-east-1", account="123456789012")


def _of(tpl: dict[str, Any], rtype: str) -> list[dict[str, Any]]:
    return [r for r in tpl["Resources"].values() if r["Type"] == rtype]


def test_app_defines_both_endpoints_with_scaling(agnostic: tuple[Path, dict[str, Any]]) -> None:
    _, tpl = agnostic
    names = sorted(e["Properties"]["EndpointName"] for e in _of(tpl, "AWS::SageMaker::Endpoint"))
    assert names == ["classifier", "multi"]
    modes = sorted(m["Properties"]["PrimaryContainer"]["Mode"] for m in _of(tpl, "AWS::SageMaker::Model"))
    assert modes == ["MultiModel", "SingleModel"]
    for config in _of(tpl, "AWS::SageMaker::EndpointConfig"):
        assert config["Properties"]["ProductionVariants"][0]["InstanceType"] == "ml.g5.xlarge"
    policies = {
        json.dumps(p["Properties"]["TargetTrackingScalingPolicyConfiguration"], sort_keys=True)
        for p in _of(tpl, "AWS::ApplicationAutoScaling::ScalingPolicy")
    }
    gpu = next(json.loads(p) for p in policies if "GPUUtilization" in p)
    assert (gpu["TargetValue"], gpu["ScaleInCooldown"], gpu["ScaleOutCooldown"]) == (60, 600, 200)
    assert any("SageMakerVariantInvocationsPerInstance" in p for p in policies)


def test_app_has_dashboard_alarms_topic_and_metrics(agnostic: tuple[Path, dict[str, Any]]) -> None:
    _, tpl = agnostic
    assert len(_of(tpl, "AWS::CloudWatch::Dashboard")) == 1
    alarms = _of(tpl, "AWS::CloudWatch::Alarm")
    assert len(alarms) == 8  # 3 per endpoint + the MME's ModelCacheHit and ModelLoadingWaitTime alarms
    loading = sorted(
        a["Properties"].get("MetricName", "")
        for a in alarms
        if "Model" in a["Properties"].get("MetricName", "")
    )
    assert loading == ["ModelCacheHit", "ModelLatency", "ModelLatency", "ModelLoadingWaitTime"]
    [topic] = _of(tpl, "AWS::SNS::Topic")
    assert "KmsMasterKeyId" in topic["Properties"]
    assert all(a["Properties"].get("AlarmActions") for a in alarms)
    sme = next(
        m
        for m in _of(tpl, "AWS::SageMaker::Model")
        if m["Properties"]["PrimaryContainer"]["Mode"] == "SingleModel"
    )
    env = sme["Properties"]["PrimaryContainer"]["Environment"]
    assert env["SAGEMAKER_TRITON_PUBLISH_METRICS_TO_CLOUDWATCH"] == "true"
    assert env["SAGEMAKER_TRITON_CLOUDWATCH_METRIC_NAMESPACE"] == "Triton/classifier"
    assert "Rules" in tpl and "Mappings" in tpl  # env-agnostic image resolution


def test_app_verifies_the_endpoint_with_recorded_samples(agnostic: tuple[Path, dict[str, Any]]) -> None:
    _, tpl = agnostic  # custom_resources defaults to true; the fixture's multi endpoint records no sample
    [verification] = _of(tpl, "Custom::TritonVerification")
    assert verification["Properties"]["EndpointName"] == "classifier"
    assert [f["Properties"]["Runtime"] for f in _of(tpl, "AWS::Lambda::Function")] == ["python3.12"]


def test_app_in_us_east_1_resolves_images(us_east_1: tuple[Path, dict[str, Any]]) -> None:
    _, tpl = us_east_1
    images = {m["Properties"]["PrimaryContainer"]["Image"] for m in _of(tpl, "AWS::SageMaker::Model")}
    assert images == {"763104351884.dkr.ecr.us-east-1.amazonaws.com/sagemaker-tritonserver:24.09-py3"}
    assert "TritonImageRegion2409" not in tpl.get("Rules", {})


def test_app_templates_pass_cfn_lint(
    agnostic: tuple[Path, dict[str, Any]], us_east_1: tuple[Path, dict[str, Any]]
) -> None:
    files = [str(d / "CdkTritonExample.template.json") for d, _ in (agnostic, us_east_1)]
    proc = subprocess.run([sys.executable, "-c", CFN_LINT, *files], capture_output=True, text=True)
    assert proc.returncode == 0 and not proc.stdout.strip(), proc.stdout + proc.stderr


def test_app_nag_catches_an_unacknowledged_finding(tmp_path: Path) -> None:
    """The nag plugin is really on: a wildcard grant without acknowledgment fails the synth."""
    from aws_cdk import aws_iam as iam

    module = _load_app_module()
    app = cdk.App(
        outdir=str(tmp_path), context={"manifest": str(EXAMPLE)}, builtin_cloud_formation_validation=False
    )
    module.build_app(app=app)
    stack = app.node.find_child("CdkTritonExample")
    role = iam.Role(stack, "Loose", assumed_by=iam.AccountRootPrincipal())
    role.add_to_principal_policy(iam.PolicyStatement(actions=["s3:*"], resources=["*"]))
    with pytest.raises(RuntimeError, match="ValidationFailed"):
        app.synth()
    report = json.loads((tmp_path / "validation-report.json").read_text())
    rules = {v["ruleName"] for p in report["pluginReports"] for v in p["violations"]}
    assert "AwsSolutions-IAM5[Action::s3:*]" in rules
    assert not any(
        "CdkTritonExample/Classifier" in c["constructPath"] or "CdkTritonExample/Multi" in c["constructPath"]
        for p in report["pluginReports"]
        for v in p["violations"]
        for c in v["violatingConstructs"]
    )


def test_synth_bench_compares_equivalent_stacks(tmp_path: Path) -> None:
    """The benchmark's hand-written L1 stack defines the example app's template shape (no timing)."""
    bench = load_module(ROOT / "bench" / "synth_bench.py", "cdk_triton_synth_bench")
    app_module = _load_app_module()
    out_c, out_l1 = tmp_path / "c", tmp_path / "l1"
    constructs = bench.synth_constructs(app_module, EXAMPLE, str(out_c))
    l1 = bench.synth_l1(EXAMPLE, str(out_l1))
    assert bench.shape(constructs) == bench.shape(l1)
    assert differences({"S": constructs}, {"S": l1}) == []  # the same CloudFormation, logical ids aside
    assert acknowledged(out_c)["CdkTritonExample"] == acknowledged(out_l1)["HandWritten"]  # and cdk-nag acks
    assert (
        len(constructs["Resources"]) == 28 and len(constructs["Outputs"]) == 4
    )  # 26 + the MME's loading alarms


def test_synth_bench_compares_runs_within_their_round_both_orders_together() -> None:
    """A round's two runs are compared with each other, never with another round's (a shared machine's speed
    drifts between rounds), and two rounds of opposite order together cancel what running first costs."""
    bench = load_module(ROOT / "bench" / "synth_bench.py", "cdk_triton_synth_bench")
    # 1.1x, but the side that runs first pays 10 % (constructs first in even rounds: 1.21x, then 1.0x), on a
    # machine twice as slow in the last two rounds
    runs = {"constructs": [1.21, 1.1, 1.21, 1.1, 2.42, 2.2], "l1": [1.0, 1.1, 1.0, 1.1, 2.0, 2.2]}
    assert bench.pair_ratio(runs) == pytest.approx(1.1)
    assert bench.pair_ratio({"constructs": [1.2, 1.0, 9.0], "l1": [1.0, 1.0, 1.0]}) == pytest.approx(1.2**0.5)
    assert bench.pair_ratio({"constructs": [1.0], "l1": [1.0]}) is None  # no round of the other order


@pytest.mark.filterwarnings("ignore:Tried to parse AWS:UserWarning")
def test_app_in_us_east_1_creates_in_moto_cloudformation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """moto's in-process CloudFormation creates the SageMaker, IAM, SSM, KMS and SNS resources.

    moto's enum of instance types predates g5, so this uses ml.g4dn.xlarge; it skips autoscaling,
    alarms and the topic policy (not supported there) and names endpoints itself, which is why the
    app's outputs use GetAtt EndpointName.
    """
    moto = pytest.importorskip("moto")
    import boto3

    for var, value in (
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_DEFAULT_REGION", "us-east-1"),
    ):
        monkeypatch.setenv(var, value)
    tpl = _synth(
        tmp_path,
        region="us-east-1",
        account="123456789012",
        instance_type="ml.g4dn.xlarge",
        custom_resources="false",  # moto never runs custom-resource Lambdas
    )
    tpl.pop("Rules", None)  # CheckBootstrapVersion reads an SSM parameter the bootstrap stack would own
    tpl.pop("Parameters", None)
    with moto.mock_aws():
        cf = boto3.client("cloudformation", region_name="us-east-1")
        cf.create_stack(StackName="example", TemplateBody=json.dumps(tpl), Capabilities=["CAPABILITY_IAM"])
        stack = cf.describe_stacks(StackName="example")["Stacks"][0]
        assert stack["StackStatus"] == "CREATE_COMPLETE"
        outputs = {o["OutputKey"]: o["OutputValue"] for o in stack["Outputs"]}
        endpoints = {e["EndpointName"] for e in boto3.client("sagemaker").list_endpoints()["Endpoints"]}
        assert {outputs["ClassifierEndpointName"], outputs["MultiEndpointName"]} == endpoints
        param = boto3.client("ssm").get_parameters_by_path(Path="/cdk-triton/multi/target-models")
        assert json.loads(param["Parameters"][0]["Value"])["resnet_ts"] == "resnet_ts-ca978112ca1b.tar.gz"


def test_app_chooses_a_confirmed_host_and_pins_another_ami_when_told(
    agnostic: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    """24.09 on the default ml.g5 host (driver 470) is unconfirmed: the variant gets the AMI listed for g5
    whose driver (535) runs every CUDA 12 release; the context key pins another on both endpoints."""
    assert [
        c["Properties"]["ProductionVariants"][0]["InferenceAmiVersion"]
        for c in _of(agnostic[1], "AWS::SageMaker::EndpointConfig")
    ] == ["al2-ami-sagemaker-inference-gpu-2"] * 2
    pinned = _synth(tmp_path, nag=False, inference_ami_version="al2-ami-sagemaker-inference-gpu-2-1")
    assert [
        c["Properties"]["ProductionVariants"][0]["InferenceAmiVersion"]
        for c in _of(pinned, "AWS::SageMaker::EndpointConfig")
    ] == ["al2-ami-sagemaker-inference-gpu-2-1"] * 2


def _with_async_and_pools(tmp: Path) -> Path:
    """The fixture manifest plus the two endpoints build/models.yaml declares last (``classifier_async``
    with its ``async:`` block, ``classifier_pools`` with its ``instance_pools:``), as the build writes them."""
    data = json.loads(EXAMPLE.read_text())
    c = data["endpoints"]["classifier"]
    for key, extra in (
        ("classifier_async", {"async_inference": {"invocation_timeout_s": 300, "max_instances": 2}}),
        (
            "classifier_pools",
            {
                "instance_types": ["ml.g5.xlarge", "ml.g6.xlarge"],
                "instance_pools": {
                    "instance_types": ["ml.g5.xlarge", "ml.g6.xlarge"],
                    "provision_timeout_s": 900,
                },
            },
        ),
    ):
        s3_uri = c["s3_uri"].replace("/sme/classifier/", f"/sme/{key}/")
        data["endpoints"][key] = {**c, "name": key, "s3_uri": s3_uri, **extra}
    path = tmp / "manifest.json"
    path.write_text(json.dumps(data))
    for sample in ("request", "response"):  # the recorded sample, beside the manifest as the build writes it
        src = EXAMPLE.parent / c["sample"][sample]
        (tmp / src.relative_to(EXAMPLE.parent)).parent.mkdir(parents=True, exist_ok=True)
        (tmp / src.relative_to(EXAMPLE.parent)).write_bytes(src.read_bytes())
    return path


def test_app_with_an_async_and_a_pooled_endpoint_passes_nag_and_cfn_lint(tmp_path: Path) -> None:
    """The example's async endpoint and pooled variant: cdk-nag (``_synth`` fails on a finding) and cfn-lint
    clean; the pooled variant carries InstancePools, never InstanceType; the async one AsyncInferenceConfig and
    its verification. (moto's CloudFormation refuses a ProductionVariant without InstanceType, so the moto
    test above synthesizes from the fixture without them.)"""
    out = tmp_path / "out"
    tpl = _synth(out, manifest=str(_with_async_and_pools(tmp_path)))
    configs = [e["Properties"] for e in _of(tpl, "AWS::SageMaker::EndpointConfig")]
    [pooled] = [c["ProductionVariants"][0] for c in configs if "InstancePools" in c["ProductionVariants"][0]]
    assert "InstanceType" not in pooled
    assert [p["InstanceType"] for p in pooled["InstancePools"]] == ["ml.g5.xlarge", "ml.g6.xlarge"]
    assert pooled["VariantInstanceProvisionTimeoutInSeconds"] == 900
    [asynchronous] = [c for c in configs if "AsyncInferenceConfig" in c]
    assert asynchronous["ProductionVariants"][0]["InstanceType"] == "ml.g5.xlarge"
    names = sorted(e["Properties"]["EndpointName"] for e in _of(tpl, "AWS::SageMaker::Endpoint"))
    assert names == ["classifier", "classifier-async", "classifier-pools", "multi"]
    proc = subprocess.run(
        [sys.executable, "-c", CFN_LINT, str(out / "CdkTritonExample.template.json")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0 and not proc.stdout.strip(), proc.stdout + proc.stderr
