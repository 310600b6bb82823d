"""The catalogue of error codes the pipeline constructs and the GPU build launcher raise.

Bad pipeline props or declarations raise :class:`~cdk_triton.errors.TritonValidationError` before the
pipeline is defined (:data:`VALIDATION_ERRORS`); the GPU build launcher fails at run time with
:data:`LAUNCHER_ERRORS`. Codes of ``cdk_triton.config.errors`` the pipeline raises too are in
:data:`SURFACED`.
"""

from __future__ import annotations

from cdk_triton.config.errors import pick

#: Raised before the pipeline is defined (TritonValidationError): code -> what it means.
VALIDATION_ERRORS: dict[str, str] = {
    "NoGpuBuildPath": "a tensorrt model on an instance type with no GPU, or no GPU build job of the forced kind",
    "TensorRtModelNotServed": "a tensorrt model that no endpoint serves (no GPU model is known to build it on)",
    "TensorRtOnSeveralGpuModels": "tensorrt models on several GPU models (one pipeline builds plans on one)",
    "GpuBelowRelease": "an endpoint's GPU below the compute capability the Triton release needs",
    "TensorRtVersionUnknown": "a Triton release with no known TensorRT version to pin a plan to",
    "GpuModelMismatch": "a GPU build override that builds on another GPU model than the endpoint runs",
    "TensorRtVersionMismatch": "a tensorrt_version override other than the TensorRT of the Triton release",
    "UnknownGpuJobKind": "a GPU build job kind other than processing or training",
    "ApprovalForUnknownStage": "approvals={name: ...} naming no stage added (build(), or synth validation)",
    "ManifestLocationMismatch": "a manifest built for another artifact location than the pipeline's",
    "InvalidFanOutOption": "a FanOutOptions value out of range (counts >= 1, a percentage 0-100, retries 0-10), "
    "or an artifact prefix with { } ' \\ when the build fans out",
    "PromotionStageEnvMissing": "a promotion stage without a literal account and region (its bootstrap roles are "
    "assumed by name)",
    "PromotionStageOrder": "a promotion stage with a shadow bake added after the stage that promotes to prod "
    "(record_live=True): a bake comes before the stage it shadows",
    "PromotionStageInAnotherRegion": "a promotion stage in another region than the pipeline's without "
    "regional_artifacts (model data must be in the model's region)",
    "RegistryForUnknownEndpoint": "registry=RegistryOptions(groups={key: ...}) naming an endpoint models.yaml does "
    "not declare",
    "InvalidRegistryOption": "a RegistryOptions value the registration refuses: no groups, or an approval_status "
    "other than PendingManualApproval, Approved, Rejected",
}

#: Raised by the GPU build launcher at run time: code -> what it means.
LAUNCHER_ERRORS: dict[str, str] = {
    "GpuJobQuotaZero": "the account's quota for the GPU job's instance type is 0",
    "GpuJobFailed": "the GPU build job ended in another status than Completed",
    "GpuJobOutputInvalid": "the GPU build job's output holds an unsafe path or is not the build output",
}

#: The codes the pipeline owns.
ALL_CODES: dict[str, str] = {**VALIDATION_ERRORS, **LAUNCHER_ERRORS}

#: Codes of ``cdk_triton.config.errors`` the pipeline raises (reading models.yaml, image, samples).
SURFACED: dict[str, str] = pick(
    (
        "DeclarationNotFound",
        "InvalidYaml",
        "InvalidType",
        "ImageNotInRegion",
        "NoRecordedSamples",
        "InvalidS3Uri",
        "InvalidModelPackageGroupName",
        "InvalidAccountId",
    )
)
