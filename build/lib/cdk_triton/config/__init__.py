"""The pure layer shared by constructs, the build stage and the local endpoint.

Standard library only: it imports neither aws_cdk, torch, tritonclient nor protobuf.
"""

from cdk_triton.config.tables import (
    DEFAULT_TRITON_VERSION,
    InstanceTypeInfo,
    TritonRelease,
    image_account,
    image_uri,
    instance_type_info,
    release,
)

__all__ = [
    "DEFAULT_TRITON_VERSION",
    "InstanceTypeInfo",
    "TritonRelease",
    "image_account",
    "image_uri",
    "instance_type_info",
    "release",
]
