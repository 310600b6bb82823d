"""The SageMaker side of the GPU jobs (TensorRT shards, GPU check): request parameters, grants, job role.

``fanout.BuildFanOut`` puts :func:`processing_request` or :func:`training_request` into its
``createProcessingJob.sync`` / ``createTrainingJob.sync`` states (the request shape of ``gpu_job.py``:
``ContainerArguments`` only, the image's own NGC entrypoint runs them) and
:func:`sagemaker_statements` on its state machine's role; :func:`gpu_job_role` is the jobs' role of
the fan-out and of the single-target GPU build (``pipeline.TritonPipeline``).
"""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_iam as iam
from constructs import Construct

from cdk_triton.pipeline import gpu_targets


def processing_request(
    target: gpu_targets.GpuBuildTarget, image: ecr_assets.DockerImageAsset, args: list[str], source: str
) -> dict[str, Any]:
    """A Processing job's parameters: the run's source (``$.source_uri``) at ``source``, one instance
    of the target's type, the image with ``args``."""
    s3_input = {
        "S3Uri.$": "$.source_uri",
        "LocalPath": source,
        "S3DataType": "S3Prefix",
        "S3InputMode": "File",
    }
    return {
        "ProcessingInputs": [{"InputName": "source", "S3Input": s3_input}],
        "ProcessingResources": {
            "ClusterConfig": {
                "InstanceCount": 1,
                "InstanceType": target.job.instance_type,
                "VolumeSizeInGB": 100,
            }
        },
        "AppSpecification": {"ImageUri": image.image_uri, "ContainerArguments": args},
    }


def training_request(
    target: gpu_targets.GpuBuildTarget,
    image: ecr_assets.DockerImageAsset,
    args: list[str],
    *,
    output_path: str,
    kms_key_arn: str | None,
) -> dict[str, Any]:
    """A Training job's parameters: the run's source as the ``source`` channel, one instance of the
    target's type, the image with ``args``; SageMaker writes /opt/ml/model to ``output_path`` (empty:
    the shard uploads its own output to its output_key), encrypted with ``kms_key_arn`` when given."""
    output: dict[str, Any] = {"S3OutputPath": output_path}
    if kms_key_arn is not None:
        output["KmsKeyId"] = kms_key_arn
    s3_source = {
        "S3DataType": "S3Prefix",
        "S3Uri.$": "$.source_uri",
        "S3DataDistributionType": "FullyReplicated",
    }
    return {
        "AlgorithmSpecification": {
            "TrainingImage": image.image_uri,
            "TrainingInputMode": "File",
            "ContainerArguments": args,
        },
        "InputDataConfig": [{"ChannelName": "source", "DataSource": {"S3DataSource": s3_source}}],
        "OutputDataConfig": output,
        "ResourceConfig": {
            "InstanceType": target.job.instance_type,
            "InstanceCount": 1,
            "VolumeSizeInGB": 100,
        },
    }


def sagemaker_statements(scope: Construct, kind: str, job_role: iam.IRole) -> list[iam.PolicyStatement]:
    """What a state machine needs to run the ``kind`` jobs ``.sync``: create / describe / stop them (and
    ListTags) on ``cdk-triton-trt-*``, the events rule of the integration, pass ``job_role``."""
    stack = cdk.Stack.of(scope)
    processing = kind == gpu_targets.PROCESSING
    noun = "Processing" if processing else "Training"
    return [
        iam.PolicyStatement(
            # ListTags: the .sync integration's documented grant (Step Functions' SageMaker IAM page puts
            # it on '*'; scoped here to the jobs the fan-out starts)
            actions=[
                f"sagemaker:Create{noun}Job",
                f"sagemaker:Describe{noun}Job",
                f"sagemaker:Stop{noun}Job",
                "sagemaker:ListTags",
            ],
            resources=[
                stack.format_arn(
                    service="sagemaker", resource=f"{kind}-job", resource_name="cdk-triton-trt-*"
                )
            ],
        ),
        iam.PolicyStatement(
            actions=["events:PutTargets", "events:PutRule", "events:DescribeRule"],
            resources=[
                stack.format_arn(
                    service="events",
                    resource="rule",
                    resource_name=f"StepFunctionsGetEventsForSageMaker{noun}JobsRule",
                )
            ],
        ),
        iam.PolicyStatement(
            actions=["iam:PassRole"],
            resources=[job_role.role_arn],
            conditions={"StringEquals": {"iam:PassedToService": "sagemaker.amazonaws.com"}},
        ),
    ]


def gpu_job_role(
    scope: Construct,
    kind: str,
    description: str,
    statements: list[iam.PolicyStatement],
    image: ecr_assets.DockerImageAsset,
) -> iam.Role:
    """The role of the SageMaker ``kind`` GPU jobs (TensorRT plans, GPU check; ``GpuJobRole`` under ``scope``): the
    given S3 statements, pull of the build image, and its jobs' log groups (single-target and fan-out builds)."""
    role = iam.Role(
        scope,
        "GpuJobRole",
        assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"),
        description=description,
    )
    for st in statements:
        role.add_to_policy(st)
    image.repository.grant_pull(role)
    group = "ProcessingJobs" if kind == gpu_targets.PROCESSING else "TrainingJobs"
    role.add_to_policy(
        iam.PolicyStatement(
            actions=["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"],
            resources=[
                cdk.Stack.of(scope).format_arn(
                    service="logs",
                    resource="log-group",
                    resource_name=f"/aws/sagemaker/{group}:*",
                    arn_format=cdk.ArnFormat.COLON_RESOURCE_NAME,
                )
            ],
        )
    )
    return role
