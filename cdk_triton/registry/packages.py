"""The ``CreateModelPackage`` request documents of one endpoint of a build: pure, no AWS call.

What one package stands for, per endpoint mode (the README's "Registry" explains why):

- SingleModel: one package, the endpoint. Its container is the Triton image of the release with the
  artifacts the manifest recorded: a directory as ``ModelDataSource`` (``S3Prefix``, ``CompressionType``
  ``None``), an archive as ``ModelDataUrl``; the environment the artifacts imply
  (``SAGEMAKER_TRITON_DEFAULT_MODEL_NAME``), as the constructs set it.
- InferenceComponents: one package per component, its container the component's archive.
- MultiModel: one package, the endpoint's manifest as the unit of approval. A container has no ``Mode``
  (botocore: ``ModelPackageContainerDefinition`` has Image, ModelDataUrl, ModelDataSource, Environment),
  so the package names one representative archive (the first target model by logical name, servable on
  its own) and its metadata names the manifest, the prefix and the number of target models; what deploys
  is the manifest, never the package's container.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cdk_triton.config import registry as keys
from cdk_triton.config.manifest import EndpointEntry, Manifest, TargetModel
from cdk_triton.config.server_options import ServerOptions
from cdk_triton.errors import TritonValidationError

#: What the SageMaker Triton container reads at /invocations.
CONTENT_TYPES = ["application/json", "application/vnd.sagemaker-triton.binary+json"]


@dataclass(frozen=True, kw_only=True, slots=True)
class EvidenceLinks:
    """Where a build's evidence lives (``s3://`` URIs): the evidence document and the manifest copy."""

    evidence_uri: str
    manifest_uri: str


@dataclass(frozen=True, kw_only=True, slots=True)
class PackageUnit:
    """One package to register: the component it stands for (None: the endpoint) and its request."""

    component: str | None
    request: dict[str, Any]


def is_inference_components(entry: EndpointEntry) -> bool:
    """Whether ``entry`` holds inference components (one package each): its mode's row says."""
    return entry.hosting_mode.components


def package_units(
    manifest: Manifest,
    entry: EndpointEntry,
    *,
    group: str,
    image_uri: str,
    manifest_sha256: str,
    links: EvidenceLinks,
    approval_status: str = keys.DEFAULT_APPROVAL_STATUS,
    extra_metadata: Mapping[str, str] | None = None,
) -> list[PackageUnit]:
    """The packages of ``entry`` (one, or one per inference component), each a complete request.

    Raises TritonValidationError(InvalidCustomerMetadata) when a package's metadata would exceed what
    ``CustomerMetadataProperties`` holds.
    """
    base = {
        keys.MANIFEST_SHA256_KEY: manifest_sha256,
        keys.EVIDENCE_KEY: links.evidence_uri,
        keys.MANIFEST_KEY: links.manifest_uri,
        keys.ENDPOINT_KEY: entry.name,
        keys.MODE_KEY: entry.mode,
        keys.TRITON_VERSION_KEY: manifest.triton_version,
    }
    units: list[tuple[str | None, dict[str, Any], dict[str, str]]] = []
    if is_inference_components(entry):
        for logical, component in sorted(_components(entry).items()):
            target = entry.target_models[getattr(component, "target_model", logical)]
            meta = {
                keys.UNIT_KEY: "component",
                keys.COMPONENT_KEY: logical,
                keys.COMPONENT_NAME_KEY: str(getattr(component, "component_name", logical)),
                keys.ARTIFACT_SHA256_KEY: target.sha256,
            }
            units.append((logical, _archive_container(image_uri, target), meta))
    elif entry.per_model_archives:
        first = entry.target_models[sorted(entry.target_models)[0]]
        meta = {
            keys.UNIT_KEY: "endpoint",
            keys.S3_PREFIX_KEY: entry.s3_prefix or "",
            keys.TARGET_MODELS_KEY: str(len(entry.target_models)),
            keys.ARTIFACT_SHA256_KEY: first.sha256,
        }
        units.append((None, _archive_container(image_uri, first), meta))
    else:
        meta = {keys.UNIT_KEY: "endpoint", keys.ARTIFACT_SHA256_KEY: entry.sha256 or ""}
        units.append((None, _sme_container(image_uri, entry), meta))
    out = []
    for component, container, meta in units:
        metadata = {**base, **meta, **dict(extra_metadata or {})}
        check_metadata(metadata, where=f"the package of {component or entry.name}")
        out.append(
            PackageUnit(
                component=component,
                request=_request(
                    group=group,
                    container=container,
                    entry=entry,
                    component=component,
                    manifest_sha256=manifest_sha256,
                    approval_status=approval_status,
                    metadata=metadata,
                ),
            )
        )
    return out


def _components(entry: EndpointEntry) -> dict[str, Any]:
    """The manifest's components (schema 3); every target model when the entry records none."""
    components = getattr(entry, "components", None) or {}
    return dict(components) if components else {name: name for name in entry.target_models}


def _environment(default_model: str | None) -> dict[str, str]:
    """The container environment the artifacts imply, as the constructs derive it (ServerOptions)."""
    return ServerOptions(default_model_name=default_model).to_environment()


def _sme_container(image_uri: str, entry: EndpointEntry) -> dict[str, Any]:
    default = entry.default_model or (entry.models[0] if len(entry.models) == 1 else None)
    container: dict[str, Any] = {"Image": image_uri}
    if entry.packaging == "directory":
        container["ModelDataSource"] = {
            "S3DataSource": {"S3Uri": entry.s3_uri, "S3DataType": "S3Prefix", "CompressionType": "None"}
        }
    else:
        container["ModelDataUrl"] = entry.s3_uri
    env = _environment(default)
    if env:
        container["Environment"] = env
    return container


def _archive_container(image_uri: str, target: TargetModel) -> dict[str, Any]:
    """A container serving one archive (an MME's target model or a component) as a single model."""
    return {"Image": image_uri, "ModelDataUrl": target.s3_uri, "Environment": _environment(target.model)}


def _request(
    *,
    group: str,
    container: dict[str, Any],
    entry: EndpointEntry,
    component: str | None,
    manifest_sha256: str,
    approval_status: str,
    metadata: dict[str, str],
) -> dict[str, Any]:
    unit = f"component {component} of endpoint {entry.name}" if component else f"endpoint {entry.name}"
    return {
        "ModelPackageGroupName": group,
        "ModelPackageDescription": f"cdk-triton build {manifest_sha256[:12]}: {unit} ({entry.mode})",
        "InferenceSpecification": {
            "Containers": [container],
            "SupportedContentTypes": list(CONTENT_TYPES),
            "SupportedResponseMIMETypes": list(CONTENT_TYPES),
            "SupportedRealtimeInferenceInstanceTypes": list(entry.instance_types),
        },
        "ModelApprovalStatus": approval_status,
        "CustomerMetadataProperties": metadata,
        "ClientToken": client_token(group, manifest_sha256, component, approval_status),
    }


def client_token(group: str, manifest_sha256: str, component: str | None, approval_status: str) -> str:
    """A deterministic ``ClientToken`` (32 hex): SageMaker's retry guard of one call, nothing more."""
    text = "\0".join((group, manifest_sha256, component or "", approval_status))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def check_metadata(metadata: Mapping[str, str], *, where: str) -> None:
    """Raise InvalidCustomerMetadata unless ``metadata`` fits ``CustomerMetadataProperties``."""
    problems: list[str] = []
    if len(metadata) > keys.MAX_REGISTRATION_ENTRIES:
        problems.append(
            f"{len(metadata)} entries, more than {keys.MAX_REGISTRATION_ENTRIES} (SageMaker's "
            f"{keys.MAX_METADATA_ENTRIES} less {keys.STAGE_RESULT_RESERVE} kept for the stages' results)"
        )
    for key, value in metadata.items():
        if bad := keys.metadata_text_problem(key, keys.MAX_METADATA_KEY_LENGTH):
            problems.append(f"key {key!r} {bad}")
        if bad := keys.metadata_text_problem(value, keys.MAX_METADATA_VALUE_LENGTH):
            problems.append(f"value of {key} ({value!r}) {bad}")
    if problems:
        raise TritonValidationError(
            "InvalidCustomerMetadata",
            prop="metadata",
            value=dict(metadata) if len(metadata) <= 5 else f"{len(metadata)} entries",
            problem=f"does not fit the CustomerMetadataProperties of {where}: " + "; ".join(problems),
            allowed=f"at most {keys.MAX_REGISTRATION_ENTRIES} entries (cdk-triton writes up to 10), keys of 1-128 "
            "and values of 1-256 letters, digits, spaces and _ . : / = + - @",
            fix="pass fewer or shorter --metadata entries, or a shorter --evidence-location",
        )
