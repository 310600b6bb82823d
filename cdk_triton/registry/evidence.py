"""A registered build's evidence: ``evidence.json`` and the files it names, content-addressed in S3.

Under ``<evidence location>registry/<endpoint>/<manifest sha256>/`` (``config.layout``):

    manifest.json            the manifest's exact bytes (its sha256 is the build's identity)
    evidence.json            what a reviewer reads: the artifacts, the models (formats, hashes, parity),
                             the samples and their tolerances, the tool versions, the extra files
    samples/<file>           the recorded sample pairs found beside the manifest
    files/<name>             extra files (``--evidence-file``: tune results, a parity report, ...)

The same build writes the same keys, so a second registration overwrites nothing that differs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdk_triton.config.layout import registry_evidence_prefix
from cdk_triton.config.manifest import ArtifactLocation, EndpointEntry, Manifest, Sample

EVIDENCE_SCHEMA_VERSION = 1
EVIDENCE_FILENAME = "evidence.json"


@dataclass(frozen=True, kw_only=True, slots=True)
class EvidenceObject:
    """One object to write: its key under the bucket and its bytes."""

    key: str
    body: bytes
    content_type: str = "application/json"


@dataclass(frozen=True, kw_only=True, slots=True)
class Evidence:
    """The objects of one build's evidence and the URIs the packages link to."""

    bucket: str
    prefix: str  # key prefix of this build's evidence, ending '/'
    objects: list[EvidenceObject] = field(default_factory=list)

    @property
    def evidence_uri(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}{EVIDENCE_FILENAME}"

    @property
    def manifest_uri(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}manifest.json"


def endpoint_models(entry: EndpointEntry) -> list[str]:
    """Every Triton model the endpoint serves (an ensemble with its steps)."""
    names = set(entry.models)
    for target in entry.target_models.values():
        names.update(target.models)
    return sorted(names)


def build_evidence(
    manifest: Manifest,
    entry: EndpointEntry,
    *,
    manifest_bytes: bytes,
    manifest_sha256: str,
    location: ArtifactLocation,
    image_uri: str,
    region: str,
    files: list[Path],
) -> Evidence:
    """The evidence objects of ``entry`` (nothing is written here)."""
    prefix = location.normalized_prefix + registry_evidence_prefix(entry.name, manifest_sha256)
    ev = Evidence(bucket=location.bucket, prefix=prefix)
    objects = [EvidenceObject(key=prefix + "manifest.json", body=manifest_bytes)]
    models = {
        name: _model_facts(manifest, name) for name in endpoint_models(entry) if name in manifest.models
    }
    samples: dict[str, Any] = {}
    for name, sample in _samples(manifest, entry):
        record: dict[str, Any] = {"atol": sample.atol, "rtol": sample.rtol}
        for kind in ("request", "response"):
            rel = getattr(sample, kind)
            local = manifest.resolve(rel) if rel is not None else None
            if local is not None and local.is_file():
                key = f"{prefix}samples/{local.name}"
                objects.append(EvidenceObject(key=key, body=local.read_bytes()))
                record[kind] = f"s3://{location.bucket}/{key}"
            elif uri := getattr(sample, f"{kind}_s3_uri"):
                record[kind] = uri
        samples[name] = {k: v for k, v in record.items() if v is not None}
    extra = {}
    for path in files:
        key = f"{prefix}files/{path.name}"
        ctype = "application/json" if path.suffix == ".json" else "application/octet-stream"
        objects.append(EvidenceObject(key=key, body=path.read_bytes(), content_type=ctype))
        extra[path.name] = f"s3://{location.bucket}/{key}"
    document = {
        "schema_version": EVIDENCE_SCHEMA_VERSION,
        "endpoint": entry.name,
        "mode": entry.mode,
        "manifest_sha256": manifest_sha256,
        "manifest": ev.manifest_uri,
        "triton_version": manifest.triton_version,
        "image": image_uri,
        "region": region,
        "instance_types": list(entry.instance_types),
        "artifacts": _artifacts(entry),
        "models": models,
        "samples": samples,
        "tool_versions": dict(manifest.tool_versions),
        "files": extra,
    }
    body = (json.dumps(document, indent=2, sort_keys=True) + "\n").encode()
    objects.append(EvidenceObject(key=prefix + EVIDENCE_FILENAME, body=body))  # last: it names the others
    return Evidence(bucket=ev.bucket, prefix=prefix, objects=objects)


def _samples(manifest: Manifest, entry: EndpointEntry) -> list[tuple[str, Sample]]:
    """The recorded samples of the endpoint: its own, its target models', its models' (first name wins)."""
    found: dict[str, Sample] = {}
    if entry.sample is not None:
        found[entry.default_model or entry.name] = entry.sample
    for name, target in sorted(entry.target_models.items()):
        if target.sample is not None:
            found.setdefault(name, target.sample)
    for name in endpoint_models(entry):
        model = manifest.models.get(name)
        if model is not None and model.sample is not None:
            found.setdefault(name, model.sample)
    return sorted(found.items())


def _artifacts(entry: EndpointEntry) -> dict[str, Any]:
    if entry.target_models:
        return {
            "s3_prefix": entry.s3_prefix,
            "target_models": {
                name: {
                    "target_model": t.target_model,
                    "sha256": t.sha256,
                    "s3_uri": t.s3_uri,
                    "size_bytes": t.size_bytes,
                }
                for name, t in sorted(entry.target_models.items())
            },
        }
    return {
        "packaging": entry.packaging,
        "s3_uri": entry.s3_uri,
        "sha256": entry.sha256,
        "size_bytes": entry.size_bytes,
    }


def _model_facts(manifest: Manifest, name: str) -> dict[str, Any]:
    m = manifest.models[name]
    facts: dict[str, Any] = {
        "format": m.format,
        "platform": m.platform,
        "backend": m.backend,
        "config_sha256": m.config_sha256,
        "source_sha256": m.source_sha256,
        "gpu_architectures": m.gpu_architectures,
        "tensorrt_version": m.tensorrt_version,
        "onnx_opset": m.onnx_opset,
    }
    parity = _parity(manifest, name, m.source_sha256)
    if parity is not None:
        facts["parity_max_abs_diff"] = parity
    return {k: v for k, v in facts.items() if v not in (None, [])}


def _parity(manifest: Manifest, name: str, key: str | None) -> float | None:
    """The largest parity difference the build recorded (its cache record beside the manifest), if any."""
    if key is None:
        return None
    try:
        from cdk_triton.builder.cache import ModelCache
    except ModuleNotFoundError:  # the build extras are not installed: no record to read
        return None
    path = ModelCache(manifest.base_dir).record_path(name, key)
    try:
        value = json.loads(path.read_text("utf-8")).get("parity_max_abs_diff")
    except (OSError, ValueError):
        return None
    return float(value) if isinstance(value, int | float) else None
