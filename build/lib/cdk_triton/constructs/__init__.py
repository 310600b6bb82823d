"""The CDK constructs: a production Triton endpoint on SageMaker in a few lines.

Importing this package imports aws_cdk but never torch, protobuf or tritonclient.
"""

from cdk_triton.constructs.artifacts import ArtifactsConfig, ModelArtifacts
from cdk_triton.constructs.deployment import DataCapture, DeploymentGuardrails, TrafficStep
from cdk_triton.constructs.endpoint import ResourceHeadroom, TritonEndpoint, resource_headroom
from cdk_triton.constructs.endpoint_base import ITritonEndpoint
from cdk_triton.constructs.errors import ERROR_CODES
from cdk_triton.constructs.image import ImageConfig, TritonImage
from cdk_triton.constructs.model import TritonMetrics, TritonModel
from cdk_triton.constructs.monitoring import TritonAlarms, TritonDashboard
from cdk_triton.constructs.scaling import TritonScaling
from cdk_triton.constructs.verification import TritonVerification, VerificationCheck

__all__ = [
    "ERROR_CODES",
    "ArtifactsConfig",
    "DataCapture",
    "DeploymentGuardrails",
    "ITritonEndpoint",
    "ImageConfig",
    "ModelArtifacts",
    "ResourceHeadroom",
    "TrafficStep",
    "TritonAlarms",
    "TritonDashboard",
    "TritonEndpoint",
    "TritonImage",
    "TritonMetrics",
    "TritonModel",
    "TritonScaling",
    "TritonVerification",
    "VerificationCheck",
    "resource_headroom",
]
