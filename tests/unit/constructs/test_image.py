"""TritonImage: concrete regions, env-agnostic mapping + rule, custom ECR images."""

from __future__ import annotations

import json

import aws_cdk as cdk
from aws_cdk import aws_ecr as ecr
from aws_cdk.assertions import Match

from cdk_triton.constructs import ModelArtifacts, TritonEndpoint, TritonImage
from tests.unit.constructs.support import EXAMPLE, new_stack, only, template


def _endpoint(stack: cdk.Stack, image: TritonImage | None = None, cid: str = "Ep") -> TritonEndpoint:
    return TritonEndpoint(
        stack,
        cid,
        artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"),
        instance_type="ml.g5.xlarge",
        image=image,
    )


def test_concrete_region_resolves_uri_at_synth() -> None:
    stack = new_stack()
    _endpoint(stack)
    tpl = template(stack)
    model = only(tpl, "AWS::SageMaker::Model")
    assert model["Properties"]["PrimaryContainer"]["Image"] == (
        "763104351884.dkr.ecr.us-east-1.amazonaws.com/sagemaker-tritonserver:24.09-py3"
    )
    assert "Mappings" not in tpl.to_json()


def test_china_region_uses_cn_suffix() -> None:
    stack = new_stack(env=cdk.Environment(account="123456789012", region="cn-north-1"))
    _endpoint(stack)
    image = only(template(stack), "AWS::SageMaker::Model")["Properties"]["PrimaryContainer"]["Image"]
    assert image.endswith(".dkr.ecr.cn-north-1.amazonaws.com.cn/sagemaker-tritonserver:24.09-py3")


def test_version_other_than_manifest() -> None:
    stack = new_stack()
    _endpoint(stack, TritonImage.for_version("25.04"))
    image = only(template(stack), "AWS::SageMaker::Model")["Properties"]["PrimaryContainer"]["Image"]
    assert image.endswith("/sagemaker-tritonserver:25.04-py3")


def test_env_agnostic_uses_mapping_and_rules_assertion() -> None:
    stack = new_stack(env=None)
    _endpoint(stack, cid="A")
    _endpoint(stack, cid="B")
    tpl = template(stack)
    data = tpl.to_json()
    mapping = data["Mappings"]["TritonImageAccounts2409"]
    assert mapping["us-east-1"] == {"account": "763104351884"}
    assert len(mapping) == 26 and "eu-south-2" not in mapping
    rule = data["Rules"]["TritonImageRegion2409"]
    assertion = rule["Assertions"][0]
    assert assertion["Assert"]["Fn::Contains"][1] == {"Ref": "AWS::Region"}
    assert "us-east-1" in assertion["Assert"]["Fn::Contains"][0]
    assert "not published in this region" in assertion["AssertDescription"]
    image = json.dumps(only_model(tpl, "A")["Properties"]["PrimaryContainer"]["Image"])
    assert "Fn::FindInMap" in image and "AWS::URLSuffix" in image and "24.09-py3" in image
    assert len(data["Mappings"]) == 1  # shared by both models


def only_model(tpl, prefix: str):  # type: ignore[no-untyped-def]
    models = tpl.find_resources("AWS::SageMaker::Model")
    return next(v for k, v in models.items() if k.startswith(prefix))


def test_custom_ecr_image_grants_pull_on_that_repository() -> None:
    stack = new_stack()
    repo = ecr.Repository(stack, "Repo", image_scan_on_push=True)
    _endpoint(stack, TritonImage.from_ecr_repository(repo, "v1"))
    tpl = template(stack)
    model = only(tpl, "AWS::SageMaker::Model")
    assert "Fn::Join" in model["Properties"]["PrimaryContainer"]["Image"]
    assert ":v1" in json.dumps(model["Properties"]["PrimaryContainer"]["Image"])
    tpl.has_resource_properties(
        "AWS::IAM::ManagedPolicy",
        {
            "PolicyDocument": {
                "Statement": Match.array_with(
                    [
                        Match.object_like(
                            {
                                "Sid": "PullTritonImage",
                                "Action": [
                                    "ecr:BatchCheckLayerAvailability",
                                    "ecr:BatchGetImage",
                                    "ecr:GetDownloadUrlForLayer",
                                ],
                                "Resource": {"Fn::GetAtt": [Match.string_like_regexp("Repo"), "Arn"]},
                            }
                        )
                    ]
                )
            },
        },
    )


def test_sagemaker_image_pull_is_scoped_to_the_image_repository() -> None:
    stack = new_stack()
    _endpoint(stack)
    policy = only(template(stack), "AWS::IAM::ManagedPolicy")
    pull = next(
        s for s in policy["Properties"]["PolicyDocument"]["Statement"] if s["Sid"] == "PullTritonImage"
    )
    assert json.dumps(pull["Resource"]).endswith(
        ':ecr:us-east-1:763104351884:repository/sagemaker-tritonserver"]]}'
    )


def test_legacy_versions_resolve_from_the_legacy_accounts() -> None:
    """Images up to 23.05 live in per-region accounts (us-west-2 301217895009, us-east-1 785573368785)."""
    for region, account in (("us-west-2", "301217895009"), ("us-east-1", "785573368785")):
        stack = new_stack(env=cdk.Environment(account="123456789012", region=region))
        _endpoint(stack, TritonImage.for_version("23.02"))
        tpl = template(stack)
        image = only(tpl, "AWS::SageMaker::Model")["Properties"]["PrimaryContainer"]["Image"]
        assert image == f"{account}.dkr.ecr.{region}.amazonaws.com/sagemaker-tritonserver:23.02-py3"
        pull = next(
            s
            for s in only(tpl, "AWS::IAM::ManagedPolicy")["Properties"]["PolicyDocument"]["Statement"]
            if s["Sid"] == "PullTritonImage"
        )
        assert f":ecr:{region}:{account}:repository/sagemaker-tritonserver" in json.dumps(pull["Resource"])
    stack = new_stack(env=None)
    _endpoint(stack, TritonImage.for_version("23.02"))
    mapping = template(stack).to_json()["Mappings"]["TritonImageAccounts2302"]
    assert mapping["us-west-2"] == {"account": "301217895009"}
