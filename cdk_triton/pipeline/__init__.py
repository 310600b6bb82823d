"""CDK Pipelines for cdk-triton: a self-mutating pipeline that builds models where they run and deploys stages.

``TritonPipeline`` (synth time, aws-cdk-lib) and the pure ``gpu_targets`` / ``verify_checks`` helpers;
``gpu_job`` is the boto3 launcher the pipeline runs in a CodeBuild step (no CDK import).
"""

from cdk_triton.pipeline.gpu_targets import (
    GpuBuildOptions,
    GpuBuildTarget,
    GpuJob,
    gpu_build_targets,
    job_kind,
)
from cdk_triton.pipeline.pipeline import EndpointVerification, TritonPipeline
from cdk_triton.pipeline.promotion import (
    RegionalArtifacts,
    ShadowBake,
    TritonPromotionPipeline,
    bootstrap_role_arn,
)

__all__ = [
    "EndpointVerification",
    "GpuBuildOptions",
    "GpuBuildTarget",
    "GpuJob",
    "RegionalArtifacts",
    "ShadowBake",
    "TritonPipeline",
    "TritonPromotionPipeline",
    "bootstrap_role_arn",
    "job_kind",
    "gpu_build_targets",
]
