"""The CDK constructs: a production Triton endpoint on SageMaker in a few lines.

Importing this package imports aws_cdk but never torch, protobuf or tritonclient.
"""

from cdk_triton.constructs.artifacts import ArtifactsConfig, ModelArtifacts
from cdk_triton.constructs.async_inference import AsyncInferenceOptions
from cdk_triton.constructs.components_endpoint import (
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
