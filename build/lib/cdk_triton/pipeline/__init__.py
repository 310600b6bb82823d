"""CDK Pipelines for cdk-triton: a self-mutating pipeline that builds models where they run and deploys stages.

``TritonPipeline`` (synth time, aws-cdk-lib) and the pure ``gpu_plan`` / ``verify_spec`` helpers;
``gpu_job`` is the boto3 launcher the pipeline runs in a CodeBuild step (no CDK import).
"""

from cdk_triton.pipeline.gpu_plan import GpuBuildOptions, GpuBuildTarget, GpuJob, job_kind, plan_gpu_build
from cdk_triton.pipeline.pipeline import EndpointVerification, TritonPipeline

__all__ = [
    "EndpointVerification",
    "GpuBuildOptions",
    "GpuBuildTarget",
    "GpuJob",
    "TritonPipeline",
    "job_kind",
    "plan_gpu_build",
]
