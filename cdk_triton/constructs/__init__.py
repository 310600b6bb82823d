"""The CDK constructs: a production Triton endpoint on SageMaker in a few lines.

The constructs import aws_cdk but never torch, protobuf or tritonclient. The names below are loaded on
first use (PEP 562, ``cdk_triton._lazy``), and the aws_cdk packages a feature alone needs (aws_s3 for
asynchronous inference, aws_lambda for the deploy verification...) where that feature is defined: an
app pays only for what its stacks use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cdk_triton._lazy import lazy_exports

if TYPE_CHECKING:
    from cdk_triton.constructs.artifacts import ArtifactsConfig, ModelArtifacts
    from cdk_triton.constructs.async_inference import AsyncInferenceOptions
    from cdk_triton.constructs.components import (
        ComponentOptions,
        TritonComponentsEndpoint,
        TritonInferenceComponent,
    )
    from cdk_triton.constructs.deployment import DataCapture, DeploymentGuardrails, TrafficStep
    from cdk_triton.constructs.endpoint import ResourceHeadroom, TritonEndpoint, resource_headroom
    from cdk_triton.constructs.endpoint_base import EndpointAttributes, ITritonEndpoint
    from cdk_triton.constructs.errors import ERROR_CODES
    from cdk_triton.constructs.image import ImageConfig, TritonImage
    from cdk_triton.constructs.model import TritonModel
    from cdk_triton.constructs.model_props import TritonMetrics, TritonModelProps
    from cdk_triton.constructs.monitoring import TritonAlarms, TritonDashboard
    from cdk_triton.constructs.registry import ITritonModelPackageGroup, TritonModelPackageGroup
    from cdk_triton.constructs.scaling import ComponentScaling, TargetTrackingOptions, TritonScaling
    from cdk_triton.constructs.shadow import ShadowComparison, ShadowVariant
    from cdk_triton.constructs.verification import TritonVerification, VerificationCheck
    from cdk_triton.constructs.verification_sample import VerificationSample

_WHERE = {
    "ArtifactsConfig": "artifacts",
    "ModelArtifacts": "artifacts",
    "AsyncInferenceOptions": "async_inference",
    "ComponentOptions": "components",
    "TritonComponentsEndpoint": "components",
    "TritonInferenceComponent": "components",
    "DataCapture": "deployment",
    "DeploymentGuardrails": "deployment",
    "TrafficStep": "deployment",
    "ResourceHeadroom": "endpoint",
    "TritonEndpoint": "endpoint",
    "resource_headroom": "endpoint",
    "EndpointAttributes": "endpoint_base",
    "ITritonEndpoint": "endpoint_base",
    "ERROR_CODES": "errors",
    "ImageConfig": "image",
    "TritonImage": "image",
    "TritonModel": "model",
    "TritonMetrics": "model_props",
    "TritonModelProps": "model_props",
    "TritonAlarms": "monitoring",
    "TritonDashboard": "monitoring",
    "ITritonModelPackageGroup": "registry",
    "TritonModelPackageGroup": "registry",
    "ComponentScaling": "scaling",
    "TargetTrackingOptions": "scaling",
    "TritonScaling": "scaling",
    "ShadowComparison": "shadow",
    "ShadowVariant": "shadow",
    "TritonVerification": "verification",
    "VerificationCheck": "verification",
    "VerificationSample": "verification_sample",
}

__getattr__ = lazy_exports(__name__, _WHERE)

__all__ = [
    "ERROR_CODES",
    "ArtifactsConfig",
    "AsyncInferenceOptions",
    "ComponentOptions",
    "ComponentScaling",
    "DataCapture",
    "DeploymentGuardrails",
    "EndpointAttributes",
    "ITritonEndpoint",
    "ITritonModelPackageGroup",
    "ImageConfig",
    "ModelArtifacts",
    "ResourceHeadroom",
    "TargetTrackingOptions",
    "TrafficStep",
    "TritonAlarms",
    "TritonComponentsEndpoint",
    "TritonDashboard",
    "TritonEndpoint",
    "TritonImage",
    "TritonInferenceComponent",
    "TritonMetrics",
    "TritonModel",
    "TritonModelPackageGroup",
    "TritonModelProps",
    "TritonScaling",
    "ShadowComparison",
    "ShadowVariant",
    "TritonVerification",
    "VerificationCheck",
    "VerificationSample",
    "resource_headroom",
]
