"""Deploy verification: the function, its exact grants, the custom resource, its logical-id rule, cdk-nag."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Match

from cdk_triton.config.manifest import Manifest
from cdk_triton.constructs import ModelArtifacts, TritonEndpoint
from cdk_triton.constructs.verification import (
    HANDLER_DIR,
    RESOURCE_TYPE,
    VerificationCheck,
    recorded_samples,
)
from tests.unit.constructs.support import EXAMPLE, MANIFESTS, ROOT, manifest_with, new_stack, only, template

KEY_ARN = "arn:aws:kms:us-east-1:123456789012:key/11111111-2222-3333-4444-555555555555"
SAMPLE = {"request": "samples/classifier.request.json", "response": "samples/classifier.response.json"}


def _sha12() -> str:
    texts = [(MANIFESTS / SAMPLE[k]).read_text("utf-8") for k in ("request", "response")]
    return hashlib.sha256("\0".join(texts).encode()).hexdigest()[:12]


def _samples_uri(name: str) -> str:
    return f"s3://example-artifacts-123456789012/cdk-triton/samples/{_sha12()}/{name}"


def _mme_manifest(**extra: Any) -> Manifest:
    def mutate(d: dict[str, Any]) -> None:
        for tm in d["endpoints"]["multi"]["target_models"].values():
            tm["sample"] = {**SAMPLE, "atol": 0.01}
        d["artifact_location"].update(extra)

    return manifest_with(mutate)


def _verified(
    endpoint: str = "classifier", manifest: Any = EXAMPLE, **kw: Any
) -> tuple[cdk.Stack, TritonEndpoint]:
    stack = new_stack()
    ep = TritonEndpoint(
        stack,
        "Ep",
        artifacts=ModelArtifacts.from_manifest(manifest, endpoint),
        instance_type=kw.pop("instance_type", "ml.g5.xlarge"),
        endpoint_name=endpoint,
        **kw.pop("endpoint_props", {}),
    )
    ep.add_verification(**kw)
    return stack, ep


def _logical_id(stack: cdk.Stack) -> str:
    [lid] = template(stack, collect=False).find_resources(RESOURCE_TYPE)
    return str(lid)


def _arn(suffix: str) -> dict[str, Any]:
    return {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, suffix]]}


def test_sme_function_runtime_timeout_logs_and_no_managed_policy() -> None:
    stack, _ = _verified(deadline=cdk.Duration.minutes(5))
    tpl = template(stack)
    fn = only(tpl, "AWS::Lambda::Function")
    props = fn["Properties"]
    assert (props["Runtime"], props["Handler"], props["Timeout"]) == ("python3.12", "index.handler", 360)
    [log_group_id] = tpl.find_resources("AWS::Logs::LogGroup", {"Properties": {"RetentionInDays": 30}})
    assert props["LoggingConfig"] == {"LogGroup": {"Ref": log_group_id}}
    roles = tpl.find_resources("AWS::IAM::Role")
    lambda_role = next(
        r
        for r in roles.values()
        if "lambda.amazonaws.com" in json.dumps(r["Properties"]["AssumeRolePolicyDocument"])
    )
    assert (
        "ManagedPolicyArns" not in lambda_role["Properties"] and "Policies" not in lambda_role["Properties"]
    )
    assert "AWSLambdaBasicExecutionRole" not in json.dumps(tpl.to_json())
    assert (HANDLER_DIR / "index.py").is_file()


def test_sme_policy_statements_are_exact() -> None:
    stack, ep = _verified()
    tpl = template(stack)
    endpoint_id = stack.resolve(ep.resource.ref)["Ref"]
    [log_group_id] = tpl.find_resources("AWS::Logs::LogGroup", {"Properties": {"RetentionInDays": 30}})
    policy = next(
        p
        for p in tpl.find_resources("AWS::IAM::ManagedPolicy").values()
        if "verification" in p["Properties"]["Description"]
    )
    assert policy["Properties"]["PolicyDocument"]["Statement"] == [
        {
            "Sid": "InvokeEndpoint",
            "Effect": "Allow",
            "Action": "sagemaker:InvokeEndpoint",
            "Resource": {"Ref": endpoint_id},
        },
        {
            "Sid": "ReadSamples",
            "Effect": "Allow",
            "Action": "s3:GetObject",
            "Resource": _arn(":s3:::example-artifacts-123456789012/cdk-triton/samples/*"),
        },
        {
            "Sid": "WriteOwnLogs",
            "Effect": "Allow",
            "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
            "Resource": {"Fn::GetAtt": [log_group_id, "Arn"]},
        },
    ]


def test_sme_custom_resource_properties_and_depends_on_the_endpoint() -> None:
    stack, ep = _verified(warm_up=())
    tpl = template(stack)
    endpoint_id = stack.resolve(ep.resource.ref)["Ref"]
    fn_id = next(iter(tpl.find_resources("AWS::Lambda::Function")))
    cr = only(tpl, RESOURCE_TYPE)
    assert cr["Properties"] == {
        "ServiceToken": {"Fn::GetAtt": [fn_id, "Arn"]},
        "EndpointName": "classifier",
        "Mode": "SingleModel",
        "Checks": [
            {
                "Model": "classifier",
                "Request": _samples_uri("classifier.request.json"),
                "Response": _samples_uri("classifier.response.json"),
                "Atol": "0.0001",
                "Rtol": "0.001",
            }
        ],
        "DeadlineSeconds": "600",
    }
    assert cr["DependsOn"] == [endpoint_id]
    assert _logical_id(stack).startswith("EpVerificationVerify")


def test_mme_checks_every_target_model_with_ssm_and_kms_grants() -> None:
    stack, ep = _verified("multi", _mme_manifest(kms_key_arn=KEY_ARN), warm_up=["resnet_ts"])
    tpl = template(stack)
    cr = only(tpl, RESOURCE_TYPE)["Properties"]
    assert cr["Mode"] == "MultiModel"
    assert cr["TargetModelParameterPath"] == "/cdk-triton/multi/target-models"
    assert cr["WarmUp"] == ["resnet_ts"]
    assert [(c["Model"], c["Atol"], c["Rtol"]) for c in cr["Checks"]] == [
        ("classifier", "0.01", "0.0001"),
        ("resnet_ts", "0.01", "0.0001"),
    ]
    tpl.has_resource_properties(
        "AWS::IAM::ManagedPolicy",
        {
            "Description": Match.string_like_regexp("verification"),
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        {
                            "Sid": "DecryptSamples",
                            "Effect": "Allow",
                            "Action": "kms:Decrypt",
                            "Resource": KEY_ARN,
                        },
                        {
                            "Sid": "ReadTargetModelMap",
                            "Effect": "Allow",
                            "Action": "ssm:GetParametersByPath",
                            "Resource": _arn(
                                ":ssm:us-east-1:123456789012:parameter/cdk-triton/multi/target-models"
                            ),
                        },
                    ]
                )
            },
        },
    )
    assert ep.target_model_parameter_path == cr["TargetModelParameterPath"]


def test_logical_id_is_stable_when_nothing_changes() -> None:
    assert _logical_id(_verified()[0]) == _logical_id(_verified()[0])


@pytest.mark.parametrize(
    "change",
    ["model_data", "instance_count", "tolerance", "deadline", "target_model"],
)
def test_logical_id_changes_with_what_is_verified(change: str) -> None:
    endpoint, kw = ("multi" if change == "target_model" else "classifier"), {}

    def mutate(d: dict[str, Any]) -> None:
        if change == "model_data":
            ep = d["endpoints"][
                "classifier"
            ]  # another repository: its key carries its digest (manifest trust)
            ep["s3_uri"] = ep["s3_uri"].replace("dc9c", "ffff")
            ep["sha256"] = "ffff" + ep["sha256"][4:]
        if change == "tolerance":
            d["endpoints"]["classifier"]["sample"]["atol"] = 0.5
        if change == "target_model":
            for tm in d["endpoints"]["multi"]["target_models"].values():
                tm["sample"] = dict(SAMPLE)
            # another archive: its name carries the first 12 hex digits of its sha256 (manifest trust)
            tm = d["endpoints"]["multi"]["target_models"]["resnet_ts"]
            tm["sha256"] = "0" * 64
            tm["target_model"] = "resnet_ts-000000000000.tar.gz"
            tm["s3_uri"] = d["endpoints"]["multi"]["s3_prefix"] + tm["target_model"]
            tm["local_path"] = "mme/multi/" + tm["target_model"]

    base = _mme_manifest() if change == "target_model" else EXAMPLE
    if change == "instance_count":
        kw = {"endpoint_props": {"instance_count": 2}}
    if change == "deadline":
        kw = {"deadline": cdk.Duration.minutes(5)}
    before = _logical_id(_verified(endpoint, base)[0])
    after = _logical_id(_verified(endpoint, manifest_with(mutate), **kw)[0])
    assert before != after


def test_explicit_checks_for_artifacts_without_a_manifest() -> None:
    from aws_cdk import aws_s3 as s3

    stack = new_stack()
    bucket = s3.Bucket.from_bucket_name(stack, "B", "models-123456789012")
    ep = TritonEndpoint(
        stack,
        "Ep",
        artifacts=ModelArtifacts.from_bucket(bucket, "repo/model.tar.gz", default_model="m"),
        instance_type="ml.g5.xlarge",
    )
    check = VerificationCheck(
        model="m",
        request_s3_uri="s3://models-123456789012/probe/m.request.json",
        response_s3_uri="s3://models-123456789012/probe/m.response.json",
    )
    ep.add_verification(checks=[check])
    tpl = template(stack)
    assert only(tpl, RESOURCE_TYPE)["Properties"]["Checks"][0]["Atol"] == "1e-05"
    tpl.has_resource_properties(
        "AWS::IAM::ManagedPolicy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        {
                            "Sid": "ReadSamples",
                            "Effect": "Allow",
                            "Action": "s3:GetObject",
                            "Resource": [
                                _arn(":s3:::models-123456789012/probe/m.request.json"),
                                _arn(":s3:::models-123456789012/probe/m.response.json"),
                            ],
                        }
                    ]
                )
            }
        },
    )


def test_recorded_samples_of_the_example() -> None:
    manifest = manifest_with()
    assert list(recorded_samples(manifest, "classifier")) == ["classifier"]
    assert recorded_samples(manifest, "multi") == {}
    assert sorted(recorded_samples(_mme_manifest(), "multi")) == ["classifier", "resnet_ts"]


def test_verification_passes_cdk_nag_aws_solutions(tmp_path: Path) -> None:
    from cdk_nag import AwsSolutionsChecks

    app = cdk.App(outdir=str(tmp_path), builtin_cloud_formation_validation=False)
    stack = cdk.Stack(app, "VerifyNag", env=cdk.Environment(account="123456789012", region="us-east-1"))
    for cid, endpoint, manifest in (
        ("Sme", "classifier", EXAMPLE),
        ("Mme", "multi", _mme_manifest(kms_key_arn=KEY_ARN)),
    ):
        TritonEndpoint(
            stack,
            cid,
            artifacts=ModelArtifacts.from_manifest(manifest, endpoint),
            instance_type="ml.g5.xlarge",
            endpoint_name=cid.lower(),
        ).add_verification()
    cdk.Validations.of(app).add_plugins(AwsSolutionsChecks(app))
    app.synth()  # raises on an unacknowledged finding
    data = json.loads((tmp_path / "validation-report.json").read_text())
    assert [v for p in data["pluginReports"] for v in p["violations"]] == []
    acknowledged = {
        (v["ruleName"], c["constructPath"])
        for p in data["pluginReports"]
        for v in p["suppressedViolations"]
        for c in v["violatingConstructs"]
        if "/Verification/" in c["constructPath"]
    }
    samples = "arn:<AWS::Partition>:s3:::example-artifacts-123456789012/cdk-triton/samples/*"
    assert acknowledged == {
        (f"AwsSolutions-IAM5[Resource::{samples}]", f"VerifyNag/{ep}/Verification/Policy")
        for ep in ("Sme", "Mme")
    } | {("AwsSolutions-L1", f"VerifyNag/{ep}/Verification/Handler/Resource") for ep in ("Sme", "Mme")}


def test_app_without_custom_resources_has_no_verification(tmp_path: Path) -> None:
    from tests.unit.constructs.test_app import _synth

    tpl = _synth(tmp_path, custom_resources="false")
    types = {r["Type"] for r in tpl["Resources"].values()}
    assert RESOURCE_TYPE not in types and "AWS::Lambda::Function" not in types
    assert "Verification" not in json.dumps(tpl)
    assert (ROOT / "app.py").is_file()


def test_the_handler_asset_is_lambda_verify_and_ships_with_the_package() -> None:
    import tomllib

    from cdk_triton.constructs.verification import HANDLER_DIR

    root = Path(__file__).resolve().parents[3]
    assert (root / "lambda" / "verify").resolve() == HANDLER_DIR and (HANDLER_DIR / "index.py").is_file()
    data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "handlers/verify/index.py" in data["cdk_triton.constructs"]
