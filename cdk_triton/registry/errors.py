"""The catalogue of error codes ``cdk-triton register`` raises.

Bad input raises :class:`~cdk_triton.errors.TritonValidationError` (exit code 2) before any AWS call
writes (:data:`VALIDATION_ERRORS`); a failing AWS call raises :class:`RegistryError` (exit code 1,
:data:`CALL_ERRORS`). Codes of ``cdk_triton.config.errors`` it raises too are in :data:`SURFACED`.
"""

from __future__ import annotations

from cdk_triton.config.errors import pick
from cdk_triton.errors import CdkTritonError

#: Raised before anything is uploaded or created (TritonValidationError): code -> what it means.
VALIDATION_ERRORS: dict[str, str] = {
    "EvidenceLocationNotS3": "an --evidence-location that is not s3://bucket/prefix",
    "EvidenceFileNotFound": "an --evidence-file that is not a file",
    "InvalidApprovalStatus": "an --approval-status other than PendingManualApproval, Approved, Rejected",
    "InvalidCustomerMetadata": "customer metadata SageMaker refuses (a key over 128 or a value over 256 characters, "
    "other characters), more than 40 entries (50 less 10 kept for the stages' results) or an --metadata key under the reserved 'cdk-triton:' prefix",
    "ManifestNotUploaded": "a manifest whose build did not upload (its artifacts are not in S3)",
    "ModelPackageGroupNotFound": "a --group that is not a model package group of the account and region",
    "RegionRequired": "no AWS region configured (the image URI and the registry depend on it)",
}

#: Raised when an AWS call fails (RegistryError): code -> what it means.
CALL_ERRORS: dict[str, str] = {
    "RegistryCallFailed": "a SageMaker call (DescribeModelPackageGroup, ListModelPackages, DescribeModelPackage, "
    "CreateModelPackage) failed; the message names the call and the service's error",
    "EvidenceUploadFailed": "writing an evidence object to S3 failed (nothing was registered)",
}

ALL_CODES: dict[str, str] = {**VALIDATION_ERRORS, **CALL_ERRORS}

#: Codes of ``cdk_triton.config.errors`` register raises.
SURFACED: dict[str, str] = pick(
    (
        "InvalidModelPackageGroupName",
        "UnknownManifestEndpoint",
        "ManifestNotFound",
        "InvalidManifest",
        "UnsupportedManifestVersion",
        "UnknownTritonVersion",
        "ImageNotInRegion",
    )
)


class RegistryError(CdkTritonError):
    """An AWS call of the registration failed. ``code`` is stable."""

    def __init__(self, message: str, *, code: str) -> None:
        self.code = code
        super().__init__(f"{message} [{code}]")
