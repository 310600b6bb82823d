"""CDK Pipelines for cdk-triton: a self-mutating pipeline that builds models where they run and deploys stages.

``TritonPipeline`` (synth time, aws-cdk-lib) and the pure ``gpu_targets`` / ``verify_checks`` helpers;
``gpu_job`` and ``fanout_job`` are the boto3 scripts the pipeline runs in its build steps: they import
no aws-cdk-lib, so the names below are loaded on first use (PEP 562) and ``python -m
cdk_triton.pipeline.fanout_job`` starts without aws-cdk-lib.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cdk_triton._lazy import lazy_exports

if TYPE_CHECKING:
    from cdk_triton.pipeline.fanout import FanOutOptions
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
    from cdk_triton.pipeline.registration import RegistryOptions

_WHERE = {
    "FanOutOptions": "cdk_triton.pipeline.fanout",
    "GpuBuildOptions": "cdk_triton.pipeline.gpu_targets",
    "GpuBuildTarget": "cdk_triton.pipeline.gpu_targets",
    "GpuJob": "cdk_triton.pipeline.gpu_targets",
    "gpu_build_targets": "cdk_triton.pipeline.gpu_targets",
    "job_kind": "cdk_triton.pipeline.gpu_targets",
    "EndpointVerification": "cdk_triton.pipeline.pipeline",
    "TritonPipeline": "cdk_triton.pipeline.pipeline",
    "RegistryOptions": "cdk_triton.pipeline.registration",
    "RegionalArtifacts": "cdk_triton.pipeline.promotion",
    "ShadowBake": "cdk_triton.pipeline.promotion",
    "TritonPromotionPipeline": "cdk_triton.pipeline.promotion",
    "bootstrap_role_arn": "cdk_triton.pipeline.promotion",
}


__getattr__ = lazy_exports(__name__, _WHERE)


__all__ = [
    "EndpointVerification",
    "FanOutOptions",
    "GpuBuildOptions",
    "GpuBuildTarget",
    "GpuJob",
    "RegionalArtifacts",
    "RegistryOptions",
    "ShadowBake",
    "TritonPipeline",
    "TritonPromotionPipeline",
    "bootstrap_role_arn",
    "job_kind",
    "gpu_build_targets",
]
