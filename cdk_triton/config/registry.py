"""The model registry contract: the group name rule and the customer metadata keys of a registered build.

The registration (``cdk_triton.registry``) writes these keys on every model package it creates, the
construct (``cdk_triton.constructs.registry``) checks group names with the same rule, and the promotion
reads the keys back. Facts from botocore's SageMaker service model (2017-07-24, botocore 1.44.5, read
2026-11-26): ``ModelPackageGroupName`` ``[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}``; ``CustomerMetadataProperties``
1..50 entries, keys 1..128 and values 1..256 of ``[\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]``. Standard library only.
"""

from __future__ import annotations

import re
import shlex

from cdk_triton.errors import TritonValidationError

#: Every key cdk-triton writes into a package's ``CustomerMetadataProperties`` starts with this.
METADATA_PREFIX = "cdk-triton:"
#: sha256 of manifest.json's bytes: the identity of a build (registering it twice creates nothing).
MANIFEST_SHA256_KEY = "cdk-triton:manifest-sha256"
#: s3:// URI of the evidence document (evidence.json) of the build.
EVIDENCE_KEY = "cdk-triton:evidence"
#: s3:// URI of the copy of manifest.json the evidence holds: what a promotion deploys.
MANIFEST_KEY = "cdk-triton:manifest"
#: The manifest's endpoint key the package registers.
ENDPOINT_KEY = "cdk-triton:endpoint"
#: The endpoint's mode: SingleModel | MultiModel | InferenceComponents.
MODE_KEY = "cdk-triton:mode"
#: What the package stands for: ``endpoint`` (SME, MME) or ``component`` (one inference component).
UNIT_KEY = "cdk-triton:unit"
#: Inference components: the component's logical name (its model) and its manifest component name.
COMPONENT_KEY = "cdk-triton:component"
COMPONENT_NAME_KEY = "cdk-triton:component-name"
#: The Triton release of the image the package names.
TRITON_VERSION_KEY = "cdk-triton:triton-version"
#: The artifact hash the package's container points at (SME tree or archive hash, component archive).
ARTIFACT_SHA256_KEY = "cdk-triton:artifact-sha256"
#: MME: the number of target models, and where they live (the package's container names only one).
TARGET_MODELS_KEY = "cdk-triton:target-models"
S3_PREFIX_KEY = "cdk-triton:s3-prefix"

#: The service's limits on ``CustomerMetadataProperties``.
MAX_METADATA_ENTRIES = 50
MAX_METADATA_KEY_LENGTH = 128
MAX_METADATA_VALUE_LENGTH = 256
#: Entries a registration leaves free for the stages' verification results the promotion writes back
#: (``cdk-triton:stage:<NAME>`` by UpdateModelPackage): a full package would refuse the write-back.
STAGE_RESULT_RESERVE = 10
#: The most entries a registration writes.
MAX_REGISTRATION_ENTRIES = MAX_METADATA_ENTRIES - STAGE_RESULT_RESERVE
_METADATA_TEXT = re.compile(r"[\w\s.:/=+\-@]*")

#: ``ModelPackageGroupName`` as ``CreateModelPackageGroup`` accepts it.
GROUP_NAME_PATTERN = re.compile(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}")

#: The approval statuses a package is created with (``ModelApprovalStatus``).
APPROVAL_STATUSES = ("PendingManualApproval", "Approved", "Rejected")
DEFAULT_APPROVAL_STATUS = "PendingManualApproval"


def check_model_package_group_name(
    name: str, *, prop: str = "model_package_group_name", path: str | None = None
) -> TritonValidationError | None:
    """The ``InvalidModelPackageGroupName`` error of ``name``, or None when SageMaker accepts it."""
    if isinstance(name, str) and GROUP_NAME_PATTERN.fullmatch(name):
        return None
    return TritonValidationError(
        "InvalidModelPackageGroupName",
        prop=prop,
        value=name,
        problem="is not a model package group name",
        allowed="1-63 of [a-zA-Z0-9-], starting and ending with a letter or digit",
        fix="name the group after the endpoint, e.g. 'resnet-sme' (no '_' or '.')",
        path=path,
    )


def metadata_text_problem(text: str, limit: int) -> str | None:
    """Why ``text`` cannot be a customer metadata key or value of at most ``limit`` characters."""
    if not text:
        return "is empty"
    if len(text) > limit:
        return f"has {len(text)} characters, more than {limit}"
    if not _METADATA_TEXT.fullmatch(text):
        return "holds characters outside letters, digits, spaces and _ . : / = + - @"
    return None


def register_command(
    *,
    endpoint: str,
    group: str,
    manifest: str = "build/out/manifest.json",
    evidence_location: str | None = None,
    approval_status: str | None = None,
    evidence_files: tuple[str, ...] = (),
) -> str:
    """The shell command a build step runs to register one endpoint (``cdk-triton register ...``).

    The pipeline's build step runs it after ``cdk-triton build --upload``; it prints JSON with the package
    ARNs and ``created`` (false when this manifest was registered before).
    """
    words = ["cdk-triton", "register", "--manifest", manifest, "--endpoint", endpoint, "--group", group]
    if evidence_location is not None:
        words += ["--evidence-location", evidence_location]
    if approval_status is not None:
        words += ["--approval-status", approval_status]
    for path in evidence_files:
        words += ["--evidence-file", path]
    return shlex.join(words)
