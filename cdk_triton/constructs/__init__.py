"""The CDK constructs: a production Triton endpoint on SageMaker in a few lines.

The constructs import aws_cdk but never torch, protobuf or tritonclient. Importing this package imports none
of its modules: each name below is loaded on first use (PEP 562, ``cdk_triton._lazy``), and the aws_cdk
packages a feature alone needs (aws_s3 and aws_sns for asynchronous inference, aws_lambda for the deploy
verification...) where that feature is defined: an app pays only for what its stacks use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cdk_triton._lazy import lazy_exports

if TYPE_CHECKING:
    from cdk_triton.constructs.artifacts import ArtifactsConfig, ModelArtifacts
    from cdk_triton.constructs.async_inference import AsyncInferenceOptions
    from cdk_triton.constructs.components_endpoint import TritonComponentsEndpoint
    from cdk_triton.constructs.deployment import DataCapture, DeploymentGuardrails, TrafficStep
    from cdk_triton.constructs.endpoint import ResourceHeadroom, TritonEndpoint, resource_headroom
    from cdk_triton.constructs.endpoint_base import EndpointAttributes, ITritonEndpoint
    from cdk_triton.constructs.errors import ERROR_CODES
    from cdk_triton.constructs.image import ImageConfig, TritonImage
    from cdk_triton.constructs.inference_component import ComponentOptions, TritonInferenceComponent
    from cdk_triton.constructs.model import TritonModel
    from cdk_triton.constructs.model_props import TritonMetrics, TritonModelProps
    from cdk_triton.constructs.monitoring import TritonAlarms, TritonDashboard
    from cdk_triton.constructs.registry import ITritonModelPackageGroup, TritonModelPackageGroup
    from cdk_triton.constructs.scaling import ComponentScaling, TargetTrackingOptions, TritonScaling
    from cdk_triton.constructs.shadow import ShadowComparison, ShadowVariant
    from cdk_triton.constructs.verification import TritonVerification, VerificationCheck
    from cdk_triton.constructs.verification_sample import VerificationSample

_WHERE = {
    "ArtifactsConfig": "cdk_triton.constructs.artifacts",
    "ModelArtifacts": "cdk_triton.constructs.artifacts",
    "AsyncInferenceOptions": "cdk_triton.constructs.async_inference",
    "ComponentOptions": "cdk_triton.constructs.inference_component",
    "TritonComponentsEndpoint": "cdk_triton.constructs.components_endpoint",
    "TritonInferenceComponent": "cdk_triton.constructs.inference_component",
    "DataCapture": "cdk_triton.constructs.deployment",
    "DeploymentGuardrails": "cdk_triton.constructs.deployment",
    "TrafficStep": "cdk_triton.constructs.deployment",
    "ResourceHeadroom": "cdk_triton.constructs.endpoint",
    "TritonEndpoint": "cdk_triton.constructs.endpoint",
    "resource_headroom": "cdk_triton.constructs.endpoint",
    "EndpointAttributes": "cdk_triton.constructs.endpoint_base",
    "ITritonEndpoint": "cdk_triton.constructs.endpoint_base",
    "ERROR_CODES": "cdk_triton.constructs.errors",
    "ImageConfig": "cdk_triton.constructs.image",
    "TritonImage": "cdk_triton.constructs.image",
    "TritonModel": "cdk_triton.constructs.model",
    "TritonMetrics": "cdk_triton.constructs.model_props",
    "TritonModelProps": "cdk_triton.constructs.model_props",
    "TritonAlarms": "cdk_triton.constructs.monitoring",
    "TritonDashboard": "cdk_triton.constructs.monitoring",
    "ITritonModelPackageGroup": "cdk_triton.constructs.registry",
    "TritonModelPackageGroup": "cdk_triton.constructs.registry",
    "ComponentScaling": "cdk_triton.constructs.scaling",
    "TargetTrackingOptions": "cdk_triton.constructs.scaling",
    "TritonScaling": "cdk_triton.constructs.scaling",
    "ShadowComparison": "cdk_triton.constructs.shadow",
    "ShadowVariant": "cdk_triton.constructs.shadow",
    "TritonVerification": "cdk_triton.constructs.verification",
    "VerificationCheck": "cdk_triton.constructs.verification",
    "VerificationSample": "cdk_triton.constructs.verification_sample",
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
