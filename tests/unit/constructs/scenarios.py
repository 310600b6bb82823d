"""Representative stacks of every construct feature: cdk-nag and cfn-lint run over all of them."""

from __future__ import annotations

from collections.abc import Callable

import aws_cdk as cdk
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecr as ecr
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3

from cdk_triton.config.server_options import ServerOptions
from cdk_triton.constructs import (
    DataCapture,
    DeploymentGuardrails,
    ModelArtifacts,
    TritonAlarms,
    TritonDashboard,
    TritonEndpoint,
    TritonImage,
    TritonMetrics,
    TritonModel,
)
from tests.unit.constructs.support import ENV, EXAMPLE, TENSORRT, big_mme_manifest


def _vpc(stack: cdk.Stack) -> ec2.IVpc:
    """An imported VPC with two private subnets (construct id ``Vpc``)."""
    return ec2.Vpc.from_vpc_attributes(
        stack,
        "Vpc",
        vpc_id="vpc-0123456789abcdef0",
        availability_zones=["us-east-1a", "us-east-1b"],
        private_subnet_ids=["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
    )


def sme(stack: cdk.Stack) -> None:
    """SME ensemble from the manifest, metrics published, GPU autoscaling, dashboard, alarms."""
    ep = TritonEndpoint(
        stack,
        "Classifier",
        artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"),
        instance_type="ml.g5.xlarge",
        metrics=TritonMetrics(),
    )
    ep.auto_scale(max_capacity=4).scale_on_gpu_utilization(60)
    TritonDashboard(stack, "Dashboard", endpoints=[ep])
    TritonAlarms(stack, "Alarms", endpoint=ep, create_topic=True)


def mme(stack: cdk.Stack) -> None:
    """MME with ensembles, invocations autoscaling, dashboard."""
    ep = TritonEndpoint(
        stack,
        "Multi",
        artifacts=ModelArtifacts.from_manifest(EXAMPLE, "multi"),
        instance_type="ml.g4dn.xlarge",
    )
    ep.auto_scale(max_capacity=3).scale_on_invocations_per_instance(500)
    TritonDashboard(stack, "Dashboard", endpoints=[ep])


def mme_1000(stack: cdk.Stack) -> None:
    """An MME with 1,000 models."""
    ep = TritonEndpoint(
        stack,
        "Big",
        artifacts=ModelArtifacts.from_manifest(big_mme_manifest(1000), "multi"),
        instance_type="ml.g5.xlarge",
        metrics=TritonMetrics(),
    )
    TritonDashboard(stack, "Dashboard", endpoints=[ep])
    TritonAlarms(stack, "Alarms", endpoint=ep)


def mme_fleet_verified(stack: cdk.Stack) -> None:
    """An MME with 300 TargetModels with samples, verified by a sample whose spec is an S3 asset."""
    import dataclasses

    from cdk_triton.config.manifest import Sample
    from cdk_triton.constructs import VerificationSample

    m = big_mme_manifest(300)
    entry = m.endpoints["multi"]
    sample = Sample(request="samples/classifier.request.json", response="samples/classifier.response.json")
    tms = {k: dataclasses.replace(t, sample=sample) for k, t in entry.target_models.items()}
    m = dataclasses.replace(
        m, endpoints={**m.endpoints, "multi": dataclasses.replace(entry, target_models=tms)}
    )
    ep = TritonEndpoint(
        stack, "Fleet", artifacts=ModelArtifacts.from_manifest(m, "multi"), instance_type="ml.g5.xlarge"
    )
    ep.add_verification(sample=VerificationSample(max_checks=40))


def ebs_guardrails(stack: cdk.Stack) -> None:
    """EBS-only GPU type (volume KMS key), TensorRT-free tar.gz, canary guardrails, data capture, VPC."""
    vpc = _vpc(stack)
    capture = s3.Bucket.from_bucket_name(stack, "Capture", "capture-bucket-123456789012")
    ep = TritonEndpoint(
        stack,
        "Guarded",
        artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"),
        instance_type="ml.p3.2xlarge",
        instance_count=4,
        vpc=vpc,
        deployment=DeploymentGuardrails.canary(percent=25),
        data_capture=DataCapture(bucket=capture, sampling_percentage=20),
        container_startup_health_check_timeout=cdk.Duration.minutes(10),
        model_data_download_timeout=cdk.Duration.minutes(15),
        volume_size=cdk.Size.gibibytes(100),
    )
    ep.grant_invoke(iam.Role(stack, "Client", assumed_by=iam.AccountRootPrincipal()))


def rolling_cpu(stack: cdk.Stack) -> None:
    """A CPU endpoint from an existing bucket prefix, rolling updates, supplied role and options."""
    bucket = s3.Bucket.from_bucket_name(stack, "Models", "models-123456789012")
    role = iam.Role(stack, "Role", assumed_by=iam.ServicePrincipal("sagemaker.amazonaws.com"))
    key = kms.Key(stack, "ArtifactKey", enable_key_rotation=True)
    TritonEndpoint(
        stack,
        "Cpu",
        artifacts=ModelArtifacts.from_bucket(bucket, "repo/v1/", default_model="resnet", encryption_key=key),
        instance_type="ml.c6i.xlarge",
        role=role,
        instance_count=2,
        server_options=ServerOptions(thread_count=16, log_verbose=0),
        environment={"OMP_NUM_THREADS": "4"},
        deployment=DeploymentGuardrails.rolling(percent=50),
    )


def custom_image_trt(stack: cdk.Stack) -> None:
    """A TensorRT manifest (sm86) on ml.g5.xlarge with a custom ECR image and a standalone model."""
    repo = ecr.Repository.from_repository_name(stack, "Repo", "my-triton")
    TritonEndpoint(
        stack,
        "Trt",
        artifacts=ModelArtifacts.from_manifest(TENSORRT, "trt"),
        instance_type="ml.g5.xlarge",
        image=TritonImage.from_ecr_repository(repo, "24.09-custom"),
        deployment=DeploymentGuardrails.linear(percent=20),
    )
    TritonModel(stack, "StandaloneModel", artifacts=ModelArtifacts.from_manifest(TENSORRT, "trt"))


def hardened_example(stack: cdk.Stack) -> None:
    """The example app hardened: VPC, network isolation, customer KMS keys, an EBS-only type beside g5.

    Guardrails on both endpoints (their rollback alarms notify the alarm topic). Only the volume key
    of the local-NVMe g5 stays acknowledged (CreateEndpointConfig refuses one there).
    """
    vpc = _vpc(stack)
    sg = ec2.SecurityGroup.from_security_group_id(stack, "Sg", "sg-0123456789abcdef0")
    logs_key = kms.Key(stack, "LogsKey", enable_key_rotation=True)
    volume_key = kms.Key(stack, "VolumeKey", enable_key_rotation=True)
    classifier = TritonEndpoint(
        stack,
        "Classifier",
        artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"),
        instance_type="ml.g5.xlarge",  # local NVMe: no volume key
        endpoint_name="classifier",
        instance_count=4,
        vpc=vpc,
        security_groups=[sg],
        metrics=TritonMetrics(encryption_key=logs_key),  # publishing needs the network: no isolation
        deployment=DeploymentGuardrails.canary(percent=25),
    )
    multi = TritonEndpoint(
        stack,
        "Multi",
        artifacts=ModelArtifacts.from_manifest(EXAMPLE, "multi"),
        instance_type="ml.p3.2xlarge",  # EBS-only: a customer volume key
        endpoint_name="multi",
        vpc=vpc,
        security_groups=[sg],
        network_isolation=True,
        volume_encryption_key=volume_key,
        deployment=DeploymentGuardrails.all_at_once(),
    )
    classifier.auto_scale(max_capacity=4).scale_on_gpu_utilization(60)
    multi.auto_scale(max_capacity=4).scale_on_invocations_per_instance(1000)
    TritonDashboard(stack, "Dashboard", endpoints=[classifier, multi])
    alarms = TritonAlarms(stack, "ClassifierAlarms", endpoint=classifier, create_topic=True)
    TritonAlarms(stack, "MultiAlarms", endpoint=multi, topic=alarms.topic)
    classifier.add_verification(
        log_encryption_key=logs_key
    )  # deploy verification, its log under the customer key


SCENARIOS: dict[str, tuple[Callable[[cdk.Stack], None], cdk.Environment | None]] = {
    "Sme": (sme, ENV),
    "SmeAgnostic": (sme, None),
    "Mme": (mme, ENV),
    "Mme1000": (mme_1000, ENV),
    "MmeFleetVerified": (mme_fleet_verified, ENV),
    "EbsGuardrails": (ebs_guardrails, ENV),
    "RollingCpu": (rolling_cpu, None),
    "CustomImageTrt": (custom_image_trt, ENV),
}


def build_all(app: cdk.App) -> dict[str, cdk.Stack]:
    stacks = {}
    for name, (fn, env) in SCENARIOS.items():
        stack = cdk.Stack(app, name, env=env)
        fn(stack)
        stacks[name] = stack
    return stacks
