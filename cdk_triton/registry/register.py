"""Register one endpoint of a build in its model package group (boto3): look up, upload evidence, create.

Order, so that nothing is half-registered: every input is checked and every request document built
before the first call; then the group is described, its versions are searched for the manifest's hash
(``ListModelPackages`` then ``DescribeModelPackage``: only the description carries customer metadata;
``ClientToken`` guards one call's retries, not a second registration); a build already registered
creates nothing and uploads nothing; otherwise the evidence is uploaded (content-addressed, the
evidence document last) and the missing packages are created (a run interrupted between two
components is finished by the next one).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdk_triton.config import registry as keys
from cdk_triton.config import tables
from cdk_triton.config.manifest import ArtifactLocation, Manifest, read_manifest
from cdk_triton.errors import TritonValidationError, raise_all
from cdk_triton.registry.errors import RegistryError
from cdk_triton.registry.evidence import Evidence, build_evidence
from cdk_triton.registry.packages import EvidenceLinks, PackageUnit, package_units


@dataclass(frozen=True, kw_only=True, slots=True)
class RegisteredPackage:
    """One package of the registration: its ARN, the component (None: the endpoint), created now or before."""

    arn: str
    component: str | None
    created: bool


@dataclass(frozen=True, kw_only=True, slots=True)
class RegistrationResult:
    """What ``cdk-triton register`` did for one endpoint."""

    group: str
    endpoint: str
    manifest_sha256: str
    evidence_uri: str
    manifest_uri: str
    packages: list[RegisteredPackage] = field(default_factory=list)

    @property
    def created(self) -> bool:
        """True when this call created a package; False when the build was registered before."""
        return any(p.created for p in self.packages)

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "endpoint": self.endpoint,
            "manifest_sha256": self.manifest_sha256,
            "evidence": self.evidence_uri,
            "manifest": self.manifest_uri,
            "created": self.created,
            "model_package_arns": [p.arn for p in self.packages],
            "packages": [
                {"arn": p.arn, "component": p.component, "created": p.created} for p in self.packages
            ],
        }


def register_build(
    manifest_path: str | Path,
    *,
    endpoint: str,
    group: str,
    evidence_location: str | None = None,
    approval_status: str = keys.DEFAULT_APPROVAL_STATUS,
    evidence_files: Sequence[str | Path] = (),
    metadata: Mapping[str, str] | None = None,
    sagemaker: Any = None,
    s3: Any = None,
) -> RegistrationResult:
    """Register ``endpoint`` of the build at ``manifest_path`` in the model package group ``group``.

    Args:
        manifest_path: the build's manifest.json (or its directory); the build must have uploaded.
        endpoint: the manifest's endpoint key.
        group: the model package group (``TritonModelPackageGroup``), one per endpoint.
        evidence_location: ``s3://bucket/prefix`` for the evidence. Default: the artifact location.
        approval_status: the new packages' ``ModelApprovalStatus``. Default: PendingManualApproval.
        evidence_files: extra files for the evidence (tune results.json, reports).
        metadata: extra customer metadata (keys outside ``cdk-triton:``).
        sagemaker: a boto3 SageMaker client. Default: a new client of the default session.
        s3: a boto3 S3 client. Default: a new client of the default session.
    """
    manifest = read_manifest(manifest_path)
    manifest_file = Path(manifest.path or manifest_path)
    manifest_bytes = manifest_file.read_bytes()
    sha = hashlib.sha256(manifest_bytes).hexdigest()
    files = [Path(f) for f in evidence_files]
    location = _check_inputs(
        manifest,
        endpoint=endpoint,
        group=group,
        evidence_location=evidence_location,
        approval_status=approval_status,
        files=files,
        metadata=metadata or {},
    )
    entry = manifest.endpoint(endpoint)
    sagemaker = sagemaker or _client("sagemaker")
    region = _region(sagemaker)
    image = tables.image_uri(manifest.triton_version, region)
    evidence = build_evidence(
        manifest,
        entry,
        manifest_bytes=manifest_bytes,
        manifest_sha256=sha,
        location=location,
        image_uri=image,
        region=region,
        files=files,
    )
    units = package_units(
        manifest,
        entry,
        group=group,
        image_uri=image,
        manifest_sha256=sha,
        links=EvidenceLinks(evidence_uri=evidence.evidence_uri, manifest_uri=evidence.manifest_uri),
        approval_status=approval_status,
        extra_metadata=metadata,
    )
    _describe_group(sagemaker, group)
    existing = find_registered(
        sagemaker, group, endpoint=endpoint, manifest_sha256=sha, wanted={u.component for u in units}
    )
    missing = [u for u in units if u.component not in existing]
    if missing:
        upload_evidence(s3 or _client("s3"), evidence, kms_key_arn=_kms_for(location, manifest))
    packages = [
        RegisteredPackage(arn=existing[u.component], component=u.component, created=False)
        if u.component in existing
        else RegisteredPackage(arn=_create(sagemaker, u), component=u.component, created=True)
        for u in units
    ]
    return RegistrationResult(
        group=group,
        endpoint=endpoint,
        manifest_sha256=sha,
        evidence_uri=evidence.evidence_uri,
        manifest_uri=evidence.manifest_uri,
        packages=packages,
    )


def _check_inputs(
    manifest: Manifest,
    *,
    endpoint: str,
    group: str,
    evidence_location: str | None,
    approval_status: str,
    files: list[Path],
    metadata: Mapping[str, str],
) -> ArtifactLocation:
    """Every problem of the inputs at once (TritonValidationErrors), before any call; the evidence location."""
    errs: list[TritonValidationError] = []
    try:
        manifest.endpoint(endpoint)
    except TritonValidationError as err:
        errs.append(err)
    if bad := keys.check_model_package_group_name(group, prop="--group"):
        errs.append(bad)
    if approval_status not in keys.APPROVAL_STATUSES:
        errs.append(
            TritonValidationError(
                "InvalidApprovalStatus",
                prop="--approval-status",
                value=approval_status,
                problem="is not a ModelApprovalStatus",
                allowed=", ".join(keys.APPROVAL_STATUSES),
                fix="leave it unset (PendingManualApproval: a reviewer approves in the registry)",
            )
        )
    location = manifest.artifact_location
    if evidence_location is not None:
        if (
            evidence_location.startswith("s3://")
            and len(evidence_location) > 5
            and evidence_location[5] != "/"
        ):
            location = ArtifactLocation.from_uri(evidence_location)
        else:
            errs.append(
                TritonValidationError(
                    "EvidenceLocationNotS3",
                    prop="--evidence-location",
                    value=evidence_location,
                    problem="is not an S3 location",
                    allowed="s3://bucket/prefix",
                    fix="pass an S3 location the stage accounts can read, or leave it unset (the artifact location)",
                )
            )
    if not manifest.uploaded:
        errs.append(
            TritonValidationError(
                "ManifestNotUploaded",
                prop="--manifest",
                value=manifest.path,
                problem="records a build that was not uploaded: its artifacts are not in S3",
                allowed="the manifest of `cdk-triton build --upload`",
                fix="run `cdk-triton build --upload`, then register its manifest",
            )
        )
    errs += [_missing_file(f) for f in files if not f.is_file()]
    errs += _check_extra_metadata(metadata)
    raise_all(errs)
    return location


def _missing_file(path: Path) -> TritonValidationError:
    return TritonValidationError(
        "EvidenceFileNotFound",
        prop="--evidence-file",
        value=str(path),
        problem="is not a file",
        allowed="an existing file (tune results.json, a report)",
        fix="pass the path of a file the build or `cdk-triton tune` wrote",
    )


def _check_extra_metadata(metadata: Mapping[str, str]) -> list[TritonValidationError]:
    reserved = sorted(k for k in metadata if k.startswith(keys.METADATA_PREFIX))
    if not reserved:
        return []
    return [
        TritonValidationError(
            "InvalidCustomerMetadata",
            prop="--metadata",
            value=reserved,
            problem=f"uses the prefix {keys.METADATA_PREFIX!r}, which cdk-triton writes",
            allowed=f"keys outside {keys.METADATA_PREFIX}",
            fix="rename the keys, e.g. 'team:owner'",
        )
    ]


def _kms_for(location: ArtifactLocation, manifest: Manifest) -> str | None:
    """The artifact location's KMS key when the evidence lives in the artifact bucket."""
    art = manifest.artifact_location
    return art.kms_key_arn if location.bucket == art.bucket else location.kms_key_arn


def _client(service: str) -> Any:
    import boto3
    from botocore.exceptions import NoRegionError

    try:
        return boto3.client(service)
    except NoRegionError:
        raise _no_region() from None


def _region(client: Any) -> str:
    region = getattr(client.meta, "region_name", None)
    if not region:
        raise _no_region()
    return str(region)


def _no_region() -> TritonValidationError:
    return TritonValidationError(
        "RegionRequired",
        prop="region",
        value=None,
        problem="is not configured: the package's image and the registry depend on it",
        allowed="a SageMaker region",
        fix="set AWS_REGION (or AWS_DEFAULT_REGION), or a region in the AWS profile",
    )


def _error_code(exc: Exception) -> str:
    return str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))


def _describe_group(client: Any, group: str) -> None:
    from botocore.exceptions import ClientError

    try:
        client.describe_model_package_group(ModelPackageGroupName=group)
    except ClientError as exc:
        if _error_code(exc) in ("ValidationException", "ResourceNotFound"):
            raise TritonValidationError(
                "ModelPackageGroupNotFound",
                prop="--group",
                value=group,
                problem=f"is not a model package group of this account and region ({exc})",
                allowed="a group TritonModelPackageGroup created",
                fix="deploy the stack with the TritonModelPackageGroup of this endpoint, or name its group",
            ) from None
        raise RegistryError(
            f"DescribeModelPackageGroup {group} failed: {exc}", code="RegistryCallFailed"
        ) from exc


def find_registered(
    client: Any,
    group: str,
    *,
    endpoint: str,
    manifest_sha256: str,
    wanted: set[str | None] | None = None,
) -> dict[str | None, str]:
    """Component (None: the endpoint) -> ARN of the group's versions registered from this manifest.

    Newest first; stops describing once every ``wanted`` unit is found (a build registered again right
    after is found at once; a new build reads every version once).
    """
    from botocore.exceptions import ClientError

    found: dict[str | None, str] = {}
    try:
        pages = client.get_paginator("list_model_packages").paginate(
            ModelPackageGroupName=group, SortBy="CreationTime", SortOrder="Descending"
        )
        for page in pages:
            for summary in page.get("ModelPackageSummaryList", []):
                arn = summary["ModelPackageArn"]
                meta = (
                    client.describe_model_package(ModelPackageName=arn).get("CustomerMetadataProperties")
                    or {}
                )
                if (
                    meta.get(keys.MANIFEST_SHA256_KEY) != manifest_sha256
                    or meta.get(keys.ENDPOINT_KEY) != endpoint
                ):
                    continue
                found.setdefault(meta.get(keys.COMPONENT_KEY), arn)  # newest first: keep the newest
                if wanted is not None and wanted <= found.keys():
                    return found
    except ClientError as exc:
        raise RegistryError(
            f"reading the versions of {group} failed: {exc}", code="RegistryCallFailed"
        ) from exc
    return found


def upload_evidence(client: Any, evidence: Evidence, *, kms_key_arn: str | None) -> None:
    """Put every evidence object (the evidence document last); SSE-KMS with ``kms_key_arn`` when given."""
    from botocore.exceptions import BotoCoreError, ClientError

    extra = {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": kms_key_arn} if kms_key_arn else {}
    for obj in evidence.objects:
        try:
            client.put_object(
                Bucket=evidence.bucket, Key=obj.key, Body=obj.body, ContentType=obj.content_type, **extra
            )
        except (ClientError, BotoCoreError) as exc:
            raise RegistryError(
                f"uploading the evidence to s3://{evidence.bucket}/{obj.key} failed: {exc}",
                code="EvidenceUploadFailed",
            ) from exc


def _create(client: Any, unit: PackageUnit) -> str:
    from botocore.exceptions import ClientError

    try:
        return str(client.create_model_package(**unit.request)["ModelPackageArn"])
    except ClientError as exc:
        what = f"component {unit.component}" if unit.component else "the endpoint"
        raise RegistryError(
            f"CreateModelPackage for {what} failed: {exc}", code="RegistryCallFailed"
        ) from exc
