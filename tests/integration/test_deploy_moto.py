"""Deploy the example app with the real CDK CLI to a moto server on 127.0.0.1.

moto's CloudFormation creates the SageMaker Model, EndpointConfig and Endpoint, IAM, KMS, SNS and
the dashboard; it skips Application Auto Scaling and alarms (template assertions cover those) and
never runs custom resources. Only the create path is tested (moto's updates leave wrong state).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CDK = ROOT / "node_modules" / ".bin" / "cdk"
ACCOUNT = "123456789012"
REGION = "us-east-1"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CDK.exists(), reason="the CDK CLI is not installed (npm ci)"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def moto_endpoint() -> Iterator[str]:
    from moto.sagemaker import models as sm_models
    from moto.server import ThreadedMotoServer

    # moto's instance-type enum predates g5; the real service accepts it (cfn-lint checks the name).
    original = sm_models.FakeEndpointConfig.validate_instance_type
    sm_models.FakeEndpointConfig.validate_instance_type = lambda self, instance_type: None  # type: ignore[method-assign]
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://localhost:{port}"  # 'localhost': with 127.0.0.1 moto reads "127" as a bucket
    finally:
        import urllib.request

        # moto's state is per process: leave nothing for the other moto-based tests of this session
        urllib.request.urlopen(
            urllib.request.Request(f"http://127.0.0.1:{port}/moto-api/reset", method="POST")
        )
        server.stop()
        sm_models.FakeEndpointConfig.validate_instance_type = original  # type: ignore[method-assign]


@pytest.fixture(scope="module")
def aws_env(moto_endpoint: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        AWS_ENDPOINT_URL=moto_endpoint,
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_REGION=REGION,
        AWS_DEFAULT_REGION=REGION,
        JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION="20",
        CDK_DISABLE_VERSION_CHECK="1",
    )
    return env


def _cdk(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(CDK), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=420)
    assert proc.returncode == 0, f"cdk {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    return proc


@pytest.fixture(scope="module")
def deployed(aws_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    manifest = ROOT / "tests" / "fixtures" / "manifests" / "example.json"
    out = tmp_path_factory.mktemp("cdk-out")
    shutil.rmtree(out, ignore_errors=True)
    ctx = [
        "-c",
        f"manifest={manifest}",
        "-c",
        f"region={REGION}",
        "-c",
        f"account={ACCOUNT}",
        "-c",
        "custom_resources=false",
        "-o",
        str(out),
    ]
    _cdk(["bootstrap", f"aws://{ACCOUNT}/{REGION}", *ctx], aws_env, ROOT)
    _cdk(["deploy", "--all", "--require-approval", "never", "--progress", "events", *ctx], aws_env, ROOT)
    aws_env["CDK_OUT"] = str(out)
    return aws_env


def test_custom_resources_false_leaves_out_the_verification(deployed: dict[str, str]) -> None:
    """moto never runs custom-resource Lambdas: the app's deploy verification must not be there at all."""
    tpl = json.loads((Path(deployed["CDK_OUT"]) / "CdkTritonExample.template.json").read_text())
    types = {r["Type"] for r in tpl["Resources"].values()}
    assert "Custom::TritonVerification" not in types and "AWS::Lambda::Function" not in types
    assert not any("Verification" in logical_id for logical_id in tpl["Resources"])
    summaries = _client("cloudformation", deployed).list_stack_resources(StackName="CdkTritonExample")[
        "StackResourceSummaries"
    ]
    assert summaries and not any("Verification" in r["LogicalResourceId"] for r in summaries)


def _client(service: str, env: dict[str, str]):  # type: ignore[no-untyped-def]
    import boto3

    return boto3.client(
        service,
        endpoint_url=env["AWS_ENDPOINT_URL"],
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def test_deploy_creates_models_endpoint_configs_and_endpoints(deployed: dict[str, str]) -> None:
    sm = _client("sagemaker", deployed)
    models = {m["ModelName"]: sm.describe_model(ModelName=m["ModelName"]) for m in sm.list_models()["Models"]}
    assert len(models) == 2
    containers = {name: (d.get("PrimaryContainer") or d["Containers"][0]) for name, d in models.items()}
    images = {c["Image"] for c in containers.values()}
    assert images == {"763104351884.dkr.ecr.us-east-1.amazonaws.com/sagemaker-tritonserver:24.09-py3"}

    manifest = json.loads((ROOT / "tests" / "fixtures" / "manifests" / "example.json").read_text())
    mme = next(c for c in containers.values() if c.get("Mode") == "MultiModel")
    assert mme["ModelDataUrl"] == manifest["endpoints"]["multi"]["s3_prefix"]
    sme = next(c for c in containers.values() if c.get("Mode") != "MultiModel")
    assert sme["Environment"]["SAGEMAKER_TRITON_DEFAULT_MODEL_NAME"] == "classifier"
    assert sme["Environment"]["SAGEMAKER_TRITON_PUBLISH_METRICS_TO_CLOUDWATCH"] == "true"
    sme_uri = manifest["endpoints"]["classifier"]["s3_uri"]
    source = sme.get("ModelDataSource", {}).get("S3DataSource", {})
    assert sme.get("ModelDataUrl") == sme_uri or source.get("S3Uri") == sme_uri

    configs = sm.list_endpoint_configs()["EndpointConfigs"]
    assert len(configs) == 2
    for cfg in configs:
        desc = sm.describe_endpoint_config(EndpointConfigName=cfg["EndpointConfigName"])
        assert [v["InstanceType"] for v in desc["ProductionVariants"]] == ["ml.g5.xlarge"]
        assert "KmsKeyId" not in desc  # g5 has local NVMe: KMS on the config would fail there

    # moto ignores the EndpointName property and names endpoints after their logical ids
    endpoints = {e["EndpointName"] for e in sm.list_endpoints()["Endpoints"]}
    assert len(endpoints) == 2
    assert sorted(n.split("-")[1][:5] for n in endpoints) == ["Class", "Multi"]
    config_names = {c["EndpointConfigName"] for c in configs}
    for name in endpoints:
        assert sm.describe_endpoint(EndpointName=name)["EndpointConfigName"] in config_names


def test_deploy_creates_least_privilege_execution_roles(deployed: dict[str, str]) -> None:
    sm = _client("sagemaker", deployed)
    iam = _client("iam", deployed)
    for m in sm.list_models()["Models"]:
        role_arn = sm.describe_model(ModelName=m["ModelName"])["ExecutionRoleArn"]
        role_name = role_arn.rsplit("/", 1)[1]
        attached = iam.list_attached_role_policies(RoleName=role_name)["AttachedPolicies"]
        assert not any(p["PolicyArn"].startswith("arn:aws:iam::aws:policy/") for p in attached)
        statements = []
        for p in attached:
            version = iam.get_policy(PolicyArn=p["PolicyArn"])["Policy"]["DefaultVersionId"]
            doc = iam.get_policy_version(PolicyArn=p["PolicyArn"], VersionId=version)["PolicyVersion"][
                "Document"
            ]
            statements += doc["Statement"]
        for name in iam.list_role_policies(RoleName=role_name)["PolicyNames"]:
            statements += iam.get_role_policy(RoleName=role_name, PolicyName=name)["PolicyDocument"][
                "Statement"
            ]
        actions = [
            a for s in statements for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
        ]
        assert "s3:GetObject" in actions
        assert "*" not in actions and not any(a.endswith(":*") for a in actions)
        get = next(
            s
            for s in statements
            if "s3:GetObject" in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])
        )
        resources = get["Resource"] if isinstance(get["Resource"], list) else [get["Resource"]]
        assert all(r.startswith("arn:aws:s3:::example-artifacts-123456789012/cdk-triton/") for r in resources)
