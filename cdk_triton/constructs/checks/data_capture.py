"""Data capture: something to capture, and a destination URI SageMaker accepts."""

from __future__ import annotations

from cdk_triton.constructs._tokens import is_token
from cdk_triton.constructs.deployment import DataCapture
from cdk_triton.constructs.errors import catalogued
from cdk_triton.errors import TritonValidationError

#: DataCaptureConfig.DestinationS3Uri is at most 512 characters.
CAPTURE_URI_MAX = 512


def check_data_capture(dc: DataCapture | None, bucket_name: str | None = None) -> list[TritonValidationError]:
    """Data capture: something to capture, and a destination URI SageMaker accepts."""
    if dc is None:
        return []
    errs = []
    if not dc.capture_input and not dc.capture_output:
        errs.append(
            catalogued(
                "InvalidDataCapture",
                prop="data_capture.capture_input/capture_output",
                value=(False, False),
                problem="capture nothing: CaptureOptions needs at least one mode",
                allowed="capture_input and/or capture_output True",
                fix="leave one of them True, or drop data_capture",
            )
        )
    uri_len = len(f"s3://{bucket_name or ''}/{dc.prefix}")
    if not is_token(dc.prefix) and (uri_len > CAPTURE_URI_MAX or "//" in dc.prefix.strip("/")):
        errs.append(
            catalogued(
                "InvalidDataCapture",
                prop="data_capture.prefix",
                value=dc.prefix
                if len(dc.prefix) <= 80
                else f"{dc.prefix[:60]}... ({len(dc.prefix)} characters)",
                problem="does not make a DestinationS3Uri SageMaker accepts",
                allowed=f"s3://<bucket>/<prefix> of at most {CAPTURE_URI_MAX} characters, no empty path segment",
                fix="shorten the prefix, e.g. 'data-capture/<endpoint>/'",
            )
        )
    return errs
