"""TritonModel: artifacts, least-privilege role, server options, Triton metrics, VPC."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Annotations, Match

from cdk_triton.config.server_options import PingMode, ServerOptions
from cdk_triton.constructs import ModelArtifacts, TritonEndpoint, TritonImage, TritonMetrics, TritonModel
from tests.unit.constructs.support import EXAMPLE, TENSORRT, manifest_with, new_stack, only, template


def _statements(tpl: Any) -> list[dict[str, Any]]:
    policy = only(tpl, "AWS::IAM::ManagedPolicy")
    return list(policy["Properties"]["PolicyDocument"]["Statement"])


def _by_sid(tpl: Any) -> dict[str, dict[str, Any]]:
    return {s["Sid"]: s for s in _statements(tpl)}


def _container(tpl: Any) -> dict[str, Any]:
    return dict(only(tpl, "AWS::SageMaker::Model")["Properties"]["PrimaryContainer"])


def _clf_endpoint(stack: cdk.Stack, **kw: Any) -> TritonEndpoint:
    """The example's classifier on ml.g5.xlarge as the endpoint named ``clf`` (construct id ``Ep``)."""
    return TritonEndpoint(
        stack,
        "Ep",
        artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"),
        instance_type="ml.g5.xlarge",
        endpoint_name="clf",
        **kw,
    )


def test_sme_directory_uses_uncompressed_s3_prefix_and_default_model() -> None:
    stack = new_stack()
    TritonModel(stack, "M", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"))
    c = _container(template(stack))
    assert c["Mode"] == "SingleModel"
    assert c["ModelDataSource"] == {
        "S3DataSource": {
            "S3Uri": "s3://example-artifacts-123456789012/cdk-triton/sme/classifier/dc9c5edb8b2d479e/",
            "S3DataType": "S3Prefix",
            "CompressionType": "None",
        }
    }
    assert "ModelDataUrl" not in c
    assert c["Environment"]["SAGEMAKER_TRITON_DEFAULT_MODEL_NAME"] == "classifier"  # the ensemble proper
    assert "SAGEMAKER_MULTI_MODEL" not in c["Environment"]


def test_sme_tar_gz_uses_model_data_url() -> None:
    stack = new_stack()
    TritonModel(stack, "M", artifacts=ModelArtifacts.from_manifest(TENSORRT, "trt"))
    c = _container(template(stack))
    assert (
        c["ModelDataUrl"] == "s3://example-artifacts-123456789012/cdk-triton/sme/trt/e3b98a4da31a127d.tar.gz"
    )
    assert c["Environment"]["SAGEMAKER_TRITON_DEFAULT_MODEL_NAME"] == "resnet_trt"


def test_mme_uses_multi_model_mode_and_prefix() -> None:
    stack = new_stack()
    TritonModel(stack, "M", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "multi"))
    c = _container(template(stack))
    assert c["Mode"] == "MultiModel"
    assert c["ModelDataUrl"] == "s3://example-artifacts-123456789012/cdk-triton/mme/multi/"
    assert c["Environment"] == {"SAGEMAKER_MULTI_MODEL": "true"}


def test_endpoint_stack_never_owns_the_artifact_bucket() -> None:
    stack = new_stack()
    TritonModel(stack, "M", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"))
    tpl = template(stack)
    tpl.resource_count_is("AWS::S3::Bucket", 0)
    tpl.resource_count_is("AWS::S3::BucketPolicy", 0)


def test_not_uploaded_manifest_warns() -> None:
    stack = new_stack()
    TritonModel(stack, "M", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"))
    warnings = Annotations.from_stack(stack).find_warning("*", Match.string_like_regexp("not uploaded yet"))
    assert len(warnings) == 1


def test_uploaded_manifest_does_not_warn() -> None:
    stack = new_stack()
    TritonModel(stack, "M", artifacts=ModelArtifacts.from_manifest(TENSORRT, "trt"))
    assert not Annotations.from_stack(stack).find_warning("*", Match.string_like_regexp("not uploaded"))


def test_role_reads_exactly_the_artifact_prefix_in_one_statement() -> None:
    stack = new_stack()
    TritonModel(stack, "M", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "multi"))
    tpl = template(stack)
    sids = _by_sid(tpl)
    read = sids["ReadModelArtifacts"]
    assert read["Action"] == "s3:GetObject"
    assert (
        read["Resource"]["Fn::Join"][1][-1] == ":s3:::example-artifacts-123456789012/cdk-triton/mme/multi/*"
    )
    listing = sids["ListModelArtifacts"]
    assert listing["Action"] == "s3:ListBucket"
    assert listing["Condition"] == {"StringLike": {"s3:prefix": ["cdk-triton/mme/multi/*"]}}
    assert [s for s in _statements(tpl) if "s3:GetObject" in json.dumps(s["Action"])] == [read]


def test_role_has_no_managed_aws_policies_no_inline_policies_and_no_star_actions() -> None:
    stack = new_stack()
    TritonModel(
        stack, "M", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"), metrics=TritonMetrics()
    )
    tpl = template(stack)
    role = only(tpl, "AWS::IAM::Role")
    assert "ManagedPolicyArns" not in role["Properties"] and "Policies" not in role["Properties"]
    tpl.resource_count_is("AWS::IAM::Policy", 0)
    for st in _statements(tpl):
        actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
        assert all("*" not in a for a in actions), st
        if st["Resource"] == "*":
            assert st["Sid"] in ("EcrAuthorizationToken", "PutTritonMetrics"), st
    tpl.has_resource("AWS::SageMaker::Model", {"DependsOn": [Match.string_like_regexp("ExecutionPolicy")]})


def test_kms_decrypt_when_manifest_artifacts_are_encrypted() -> None:
    arn = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"

    def enc(d: dict[str, Any]) -> None:
        d["artifact_location"]["kms_key_arn"] = arn

    stack = new_stack()
    TritonModel(stack, "M", artifacts=ModelArtifacts.from_manifest(manifest_with(enc), "classifier"))
    assert _by_sid(template(stack))["DecryptModelArtifacts"] == {
        "Sid": "DecryptModelArtifacts",
        "Action": "kms:Decrypt",
        "Effect": "Allow",
        "Resource": arn,
    }


def test_no_kms_grant_for_unencrypted_artifacts() -> None:
    stack = new_stack()
    TritonModel(stack, "M", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"))
    assert "DecryptModelArtifacts" not in _by_sid(template(stack))


def test_supplied_role_gets_the_same_grants() -> None:
    stack = new_stack()
    role = iam.Role.from_role_arn(stack, "Existing", "arn:aws:iam::123456789012:role/my-sagemaker-role")
    model = TritonModel(stack, "M", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"), role=role)
    tpl = template(stack)
    tpl.resource_count_is("AWS::IAM::Role", 0)
    policy = only(tpl, "AWS::IAM::ManagedPolicy")
    assert policy["Properties"]["Roles"] == ["my-sagemaker-role"]
    assert {"ReadModelArtifacts", "ListModelArtifacts", "PullTritonImage"} <= set(_by_sid(tpl))
    assert only(tpl, "AWS::SageMaker::Model")["Properties"]["ExecutionRoleArn"] == role.role_arn
    assert model.role is role


def test_server_options_render_the_environment_and_raw_variables_pass() -> None:
    stack = new_stack()
    TritonModel(
        stack,
        "M",
        artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"),
        server_options=ServerOptions(
            thread_count=16,
            ping_mode=PingMode.LIVE,
            model_namespacing=False,
            response_cache_byte_size=1 << 20,
        ),
        environment={"OMP_NUM_THREADS": "2"},
    )
    env = _container(template(stack))["Environment"]
    assert env == {
        "SAGEMAKER_TRITON_DEFAULT_MODEL_NAME": "classifier",
        "SAGEMAKER_TRITON_OVERRIDE_PING_MODE": "live",
        "SAGEMAKER_TRITON_DISABLE_MODEL_NAMESPACING": "false",
        "SAGEMAKER_TRITON_THREAD_COUNT": "16",
        "SAGEMAKER_TRITON_ADDITIONAL_ARGS": "--cache-config=local,size=1048576",
        "OMP_NUM_THREADS": "2",
    }


@pytest.mark.parametrize(
    "artifacts",
    [
        lambda stack: ModelArtifacts.from_manifest(EXAMPLE, "classifier"),
        lambda stack: ModelArtifacts.from_bucket(
            s3.Bucket.from_bucket_name(stack, "B", "models-123456789012"), "repo/v1/"
        ),
    ],
    ids=["explicit_wins_over_manifest", "artifacts_do_not_name_it"],
)
def test_sme_default_model_from_server_options(artifacts: Callable[[cdk.Stack], ModelArtifacts]) -> None:
    stack = new_stack()
    TritonModel(
        stack,
        "M",
        artifacts=artifacts(stack),
        server_options=ServerOptions(default_model_name="resnet"),
    )
    assert _container(template(stack))["Environment"]["SAGEMAKER_TRITON_DEFAULT_MODEL_NAME"] == "resnet"


def test_triton_metrics_switch_sets_env_log_group_and_exact_grants() -> None:
    stack = new_stack()
    _clf_endpoint(stack, metrics=TritonMetrics(log_retention=logs.RetentionDays.ONE_WEEK))
    tpl = template(stack)
    env = _container(tpl)["Environment"]
    group_id = next(iter(tpl.find_resources("AWS::Logs::LogGroup")))
    assert env["SAGEMAKER_TRITON_ALLOW_METRICS"] == "true"
    assert env["SAGEMAKER_TRITON_PUBLISH_METRICS_TO_CLOUDWATCH"] == "true"
    assert env["SAGEMAKER_TRITON_METRICS_PORT"] == "8002"
    assert env["SAGEMAKER_TRITON_CLOUDWATCH_METRIC_NAMESPACE"] == "Triton/clf"
    assert env["SAGEMAKER_TRITON_CLOUDWATCH_LOG_GROUP"] == {"Ref": group_id}
    tpl.has_resource_properties("AWS::Logs::LogGroup", {"RetentionInDays": 7})
    sids = _by_sid(tpl)
    assert sids["PutTritonMetrics"]["Condition"] == {"StringEquals": {"cloudwatch:namespace": "Triton/clf"}}
    assert sids["PutTritonMetrics"]["Action"] == "cloudwatch:PutMetricData"
    assert sids["WriteTritonMetricsLogs"]["Resource"] == {"Fn::GetAtt": [group_id, "Arn"]}


def test_metrics_with_kms_key_and_custom_namespace_and_port() -> None:
    stack = new_stack()
    key = kms.Key(stack, "LogKey", enable_key_rotation=True)
    TritonModel(
        stack,
        "M",
        artifacts=ModelArtifacts.from_manifest(EXAMPLE, "multi"),
        metrics=TritonMetrics(namespace="Team/Triton", encryption_key=key, metrics_port=9002),
    )
    tpl = template(stack)
    env = _container(tpl)["Environment"]
    assert env["SAGEMAKER_TRITON_CLOUDWATCH_METRIC_NAMESPACE"] == "Team/Triton"
    assert env["SAGEMAKER_TRITON_METRICS_PORT"] == "9002"
    tpl.has_resource_properties(
        "AWS::Logs::LogGroup", {"KmsKeyId": {"Fn::GetAtt": [Match.string_like_regexp("LogKey"), "Arn"]}}
    )


def test_no_metrics_grants_without_publishing() -> None:
    stack = new_stack()
    TritonModel(stack, "M", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"))
    tpl = template(stack)
    assert not {"PutTritonMetrics", "WriteTritonMetricsLogs"} & set(_by_sid(tpl))
    tpl.resource_count_is("AWS::Logs::LogGroup", 0)


def test_endpoint_log_grant_names_the_endpoint_log_group() -> None:
    stack = new_stack()
    _clf_endpoint(stack)
    streams = _by_sid(template(stack))["EndpointLogStreams"]
    assert streams["Resource"]["Fn::Join"][1][-1] == (
        ":logs:us-east-1:123456789012:log-group:/aws/sagemaker/Endpoints/clf:*"
    )


def test_vpc_config_and_network_isolation() -> None:
    stack = new_stack()
    vpc = ec2.Vpc.from_vpc_attributes(
        stack,
        "Vpc",
        vpc_id="vpc-0123456789abcdef0",
        availability_zones=["us-east-1a"],
        private_subnet_ids=["subnet-0123456789abcdef0"],
    )
    TritonModel(
        stack,
        "M",
        artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"),
        vpc=vpc,
        network_isolation=True,
    )
    tpl = template(stack)
    props = only(tpl, "AWS::SageMaker::Model")["Properties"]
    assert props["EnableNetworkIsolation"] is True
    assert props["VpcConfig"]["Subnets"] == ["subnet-0123456789abcdef0"]
    [sg] = props["VpcConfig"]["SecurityGroupIds"]
    assert sg["Fn::GetAtt"][0].startswith("MSecurityGroup") and sg["Fn::GetAtt"][1] == "GroupId"
    tpl.resource_count_is("AWS::EC2::SecurityGroup", 1)
    assert "VpcNetworkInterfaces" in _by_sid(tpl)


def test_from_bucket_prefix_and_tar_gz() -> None:
    stack = new_stack()
    bucket = s3.Bucket.from_bucket_name(stack, "B", "models-123456789012")
    TritonModel(stack, "Prefix", artifacts=ModelArtifacts.from_bucket(bucket, "repo/v1/", default_model="a"))
    TritonModel(
        stack, "Archive", artifacts=ModelArtifacts.from_bucket(bucket, "repo/model.tar.gz", models=["b"])
    )
    tpl = template(stack)
    models = tpl.find_resources("AWS::SageMaker::Model")
    by = {k[:6]: v["Properties"]["PrimaryContainer"] for k, v in models.items()}
    assert by["Prefix"]["ModelDataSource"]["S3DataSource"]["S3Uri"] == "s3://models-123456789012/repo/v1/"
    assert by["Archiv"]["ModelDataUrl"] == "s3://models-123456789012/repo/model.tar.gz"
    # SAGEMAKER_TRITON_DEFAULT_MODEL_NAME is always set for SME: named, or the only model listed.
    assert by["Prefix"]["Environment"]["SAGEMAKER_TRITON_DEFAULT_MODEL_NAME"] == "a"
    assert by["Archiv"]["Environment"]["SAGEMAKER_TRITON_DEFAULT_MODEL_NAME"] == "b"


def test_metrics_publishing_on_a_23_07_or_newer_image() -> None:
    stack = new_stack()
    model = TritonModel(
        stack,
        "M",
        artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"),
        image=TritonImage.for_version("23.12"),
        metrics=TritonMetrics(),
    )
    assert model.environment["SAGEMAKER_TRITON_PUBLISH_METRICS_TO_CLOUDWATCH"] == "true"


def test_from_asset_uploads_a_tar_gz(tmp_path: Path) -> None:
    archive = tmp_path / "model.tar.gz"
    import tarfile

    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo("resnet/config.pbtxt")
        data = b'name: "resnet"\n'
        info.size = len(data)
        import io

        tar.addfile(info, io.BytesIO(data))
    stack = new_stack()
    TritonModel(stack, "M", artifacts=ModelArtifacts.from_asset(archive, default_model="resnet"))
    tpl = template(stack)
    c = _container(tpl)
    assert c["ModelDataUrl"].startswith("s3://cdk-hnb659fds-assets-123456789012-us-east-1/")
    assert c["ModelDataUrl"].endswith(".gz")
    assert c["Environment"]["SAGEMAKER_TRITON_DEFAULT_MODEL_NAME"] == "resnet"
    assert "ListModelArtifacts" not in _by_sid(tpl)  # one object, no listing


def test_model_name_and_construct_ids_are_stable() -> None:
    stack = new_stack()
    model = TritonModel(
        stack, "M", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"), model_name="my-model"
    )
    assert model.node.default_child is model.resource
    assert model.resource.node.id == "Resource"
    assert only(template(stack), "AWS::SageMaker::Model")["Properties"]["ModelName"] == "my-model"
    assert isinstance(cdk.Stack.of(model), cdk.Stack)


def test_mme_takes_server_options_without_mode_conflict() -> None:
    stack = new_stack()
    model = TritonModel(
        stack,
        "M",
        artifacts=ModelArtifacts.from_manifest(EXAMPLE, "multi"),
        server_options=ServerOptions(thread_count=16),
    )
    assert model.server_options.multi_model is True
    assert _container(template(stack))["Environment"] == {
        "SAGEMAKER_MULTI_MODEL": "true",
        "SAGEMAKER_TRITON_THREAD_COUNT": "16",
    }


def test_role_property_references_the_created_role() -> None:
    stack = new_stack()
    model = TritonModel(stack, "M", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"))
    role_id = next(iter(template(stack, collect=False).find_resources("AWS::IAM::Role")))
    assert stack.resolve(model.role.role_arn) == {"Fn::GetAtt": [role_id, "Arn"]}


def test_not_uploaded_manifest_warns_once_per_stack() -> None:
    stack = new_stack()
    for cid, key in (("A", "classifier"), ("B", "multi")):
        TritonModel(stack, cid, artifacts=ModelArtifacts.from_manifest(EXAMPLE, key))
    warnings = Annotations.from_stack(stack).find_warning("*", Match.string_like_regexp("not uploaded yet"))
    assert len(warnings) == 1 and "endpoint 'classifier'" in json.dumps(warnings[0].entry.data)


def _calls_preprocess(data: dict[str, Any]) -> None:
    """The example manifest as the build writes it for a default model whose python code calls
    ``preprocess`` (business logic scripting): the SME entry's ``load_models``."""
    data["endpoints"]["classifier"]["load_models"] = ["preprocess"]


def test_sme_loads_the_manifests_callees_at_start_through_additional_args() -> None:
    stack = new_stack()
    TritonModel(
        stack,
        "M",
        artifacts=ModelArtifacts.from_manifest(manifest_with(_calls_preprocess), "classifier"),
        server_options=ServerOptions(response_cache_byte_size=1 << 20),
    )
    env = _container(template(stack))["Environment"]
    assert env["SAGEMAKER_TRITON_DEFAULT_MODEL_NAME"] == "classifier"
    # serve appends the variable's words to `tritonserver ... --load-model=classifier`
    assert (
        env["SAGEMAKER_TRITON_ADDITIONAL_ARGS"] == "--cache-config=local,size=1048576 --load-model=preprocess"
    )
    assert ServerOptions.from_environment(env).load_models == ("preprocess",)


def test_sme_without_callees_sets_no_additional_args() -> None:
    stack = new_stack()
    TritonModel(stack, "M", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"))
    assert "SAGEMAKER_TRITON_ADDITIONAL_ARGS" not in _container(template(stack))["Environment"]
