"""The build manifest: what the build stage wrote and where it lives, read by synth and `serve`.

Versioned JSON (``schema_version``), described by ``data/manifest.schema.json``. The build stage
writes it through :func:`write_manifest`; constructs and the local endpoint read it through
:func:`read_manifest`. Synth needs nothing else: no torch, no AWS call. Standard library only.

Paths inside the manifest (``local_path``, samples) are relative to the manifest's directory.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cdk_triton.errors import TritonValidationError

SCHEMA_VERSION = 1
MANIFEST_FILENAME = "manifest.json"

SINGLE_MODEL = "SingleModel"
MULTI_MODEL = "MultiModel"


@dataclass(frozen=True, kw_only=True, slots=True)
class ArtifactLocation:
    """Where artifacts go: ``s3://bucket/prefix/``. The endpoint stack never owns this bucket."""

    bucket: str
    prefix: str = ""
    kms_key_arn: str | None = None

    @property
    def uri(self) -> str:
        return f"s3://{self.bucket}/{self.normalized_prefix}"

    @property
    def normalized_prefix(self) -> str:
        p = self.prefix.strip("/")
        return f"{p}/" if p else ""

    @classmethod
    def from_uri(cls, uri: str, *, kms_key_arn: str | None = None) -> ArtifactLocation:
        if not uri.startswith("s3://") or len(uri) <= 5:
            raise TritonValidationError(
                "InvalidS3Uri",
                prop="artifact_location",
                value=uri,
                problem="is not an S3 URI",
                allowed="s3://bucket/prefix",
                fix="write the location as s3://bucket/prefix",
            )
        bucket, _, prefix = uri[5:].partition("/")
        return cls(bucket=bucket, prefix=prefix, kms_key_arn=kms_key_arn)


@dataclass(frozen=True, kw_only=True, slots=True)
class Sample:
    """A sample request (KServe v2 JSON body) and, when deterministic, the expected response."""

    request: str  # path relative to the manifest directory
    response: str | None = None
    atol: float | None = None
    rtol: float | None = None
    request_s3_uri: str | None = None  # the uploaded copies (``cdk-triton build --upload``)
    response_s3_uri: str | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelEntry:
    """One Triton model the build wrote (a directory ``<name>/`` with config.pbtxt and versions)."""

    name: str
    format: str  # torchscript | onnx | tensorrt | python | ensemble
    platform: str | None  # e.g. onnxruntime_onnx, pytorch_libtorch, tensorrt_plan, ensemble
    backend: str | None  # e.g. python, onnxruntime, pytorch, tensorrt
    config: dict[str, Any]  # the ModelConfig as JSON (protobuf json_format, preserving field names)
    config_sha256: str
    files: dict[str, str]  # path inside the model directory -> sha256
    steps: list[str] = field(default_factory=list)  # ensemble step models
    gpu_architectures: list[str] = field(default_factory=list)  # TensorRT plans: e.g. ["sm86"]
    tensorrt_version: str | None = None
    source_sha256: str | None = None  # the cache key the build used
    sample: Sample | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class TargetModel:
    """One MME archive: ``<s3_prefix><target_model>`` holding one model (or one ensemble + steps)."""

    logical_name: str
    target_model: str  # e.g. "resnet_onnx-3f2a9c1d0b4e.tar.gz"
    model: str  # the top-level model directory in the archive (the ensemble for an ensemble)
    models: list[str]  # every model directory in the archive
    local_path: str
    sha256: str
    size_bytes: int
    s3_uri: str
    sample: Sample | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class EndpointEntry:
    """One endpoint's packaged artifacts."""

    name: str
    mode: str  # SingleModel | MultiModel
    instance_types: list[str]
    gpu_architectures: list[str] = field(default_factory=list)
    # SME
    default_model: str | None = None
    models: list[str] = field(default_factory=list)
    packaging: str | None = None  # directory | tar.gz
    local_path: str | None = None  # repository directory or .tar.gz, relative to the manifest
    s3_uri: str | None = None  # prefix ending '/' (directory) or the .tar.gz object
    sha256: str | None = None  # tree hash (directory) or archive hash
    size_bytes: int | None = None
    # MME
    s3_prefix: str | None = None  # ending '/'
    target_models: dict[str, TargetModel] = field(default_factory=dict)
    sample: Sample | None = None

    @property
    def is_multi_model(self) -> bool:
        return self.mode == MULTI_MODEL

    @property
    def compression(self) -> str:
        """``None`` for an uncompressed S3 prefix, ``Gzip`` for a tar.gz (ModelDataSource words)."""
        return "None" if self.packaging == "directory" else "Gzip"

    def target_model_map(self) -> dict[str, str]:
        """logical name -> TargetModel header value."""
        return {k: v.target_model for k, v in sorted(self.target_models.items())}


@dataclass(frozen=True, kw_only=True, slots=True)
class Manifest:
    """The whole build output."""

    schema_version: int
    triton_version: str
    artifact_location: ArtifactLocation
    uploaded: bool
    models: dict[str, ModelEntry]
    endpoints: dict[str, EndpointEntry]
    tool_versions: dict[str, str] = field(default_factory=dict)
    path: str | None = None  # where it was read from (not serialized)

    @property
    def base_dir(self) -> Path:
        return Path(self.path).parent if self.path else Path.cwd()

    def resolve(self, relative: str) -> Path:
        """A manifest-relative path as an absolute path."""
        return (self.base_dir / relative).resolve()

    def endpoint(self, name: str) -> EndpointEntry:
        if name not in self.endpoints:
            raise TritonValidationError(
                "UnknownManifestEndpoint",
                prop="endpoint",
                value=name,
                problem=f"is not in the manifest {self.path or ''}".rstrip(),
                allowed=", ".join(sorted(self.endpoints)) or "(no endpoints)",
                fix="use an endpoint key from build/models.yaml, or rebuild",
            )
        return self.endpoints[name]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("path", None)
        return _strip_none(data)


def _strip_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_strip_none(v) for v in value]
    return value


# ---------------------------------------------------------------------------- reading


class ManifestError(TritonValidationError):
    """A manifest that cannot be read: the path inside the file names the bad field."""


def _bad(where: str, value: Any, problem: str, allowed: str, source: str | None) -> ManifestError:
    return ManifestError(
        "InvalidManifest",
        prop=f"manifest field '{where}'",
        value=value,
        problem=problem,
        allowed=allowed,
        fix="rebuild with `cdk-triton build`, or fix the file by hand",
        path=source,
    )


def _req(d: dict[str, Any], key: str, typ: type | tuple[type, ...], where: str, src: str | None) -> Any:
    if key not in d:
        raise _bad(
            f"{where}.{key}", None, "is missing", typ.__name__ if isinstance(typ, type) else str(typ), src
        )
    v = d[key]
    if not isinstance(v, typ) or (typ is int and isinstance(v, bool)):
        allowed = typ.__name__ if isinstance(typ, type) else " or ".join(t.__name__ for t in typ)
        raise _bad(f"{where}.{key}", v, "has the wrong type", allowed, src)
    return v


def _opt(d: dict[str, Any], key: str, typ: type | tuple[type, ...], where: str, src: str | None) -> Any:
    if d.get(key) is None:
        return None
    return _req(d, key, typ, where, src)


def _sample(d: dict[str, Any] | None, where: str, src: str | None) -> Sample | None:
    if d is None:
        return None
    return Sample(
        request=_req(d, "request", str, where, src),
        response=_opt(d, "response", str, where, src),
        atol=_opt(d, "atol", (int, float), where, src),
        rtol=_opt(d, "rtol", (int, float), where, src),
        request_s3_uri=_opt(d, "request_s3_uri", str, where, src),
        response_s3_uri=_opt(d, "response_s3_uri", str, where, src),
    )


def _known_keys(d: dict[str, Any], allowed: set[str], where: str, src: str | None) -> None:
    extra = sorted(set(d) - allowed)
    if extra:
        raise _bad(
            f"{where}.{extra[0]}", extra[0], "is not a manifest field", ", ".join(sorted(allowed)), src
        )


_MODEL_KEYS = {f for f in ModelEntry.__dataclass_fields__}
_TARGET_KEYS = {f for f in TargetModel.__dataclass_fields__}
_ENDPOINT_KEYS = {f for f in EndpointEntry.__dataclass_fields__}
_TOP_KEYS = {f for f in Manifest.__dataclass_fields__} - {"path"}


def manifest_from_dict(data: Any, *, source: str | None = None) -> Manifest:
    """Validate and convert a parsed manifest (raises ManifestError naming the bad field)."""
    if not isinstance(data, dict):
        raise _bad("$", type(data).__name__, "is not a JSON object", "object", source)
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ManifestError(
            "UnsupportedManifestVersion",
            prop="manifest schema_version",
            value=version,
            problem="is not supported by this cdk-triton",
            allowed=str(SCHEMA_VERSION),
            fix="rebuild the artifacts with this cdk-triton version",
            path=source,
        )
    _known_keys(data, _TOP_KEYS, "$", source)
    loc = _req(data, "artifact_location", dict, "$", source)
    location = ArtifactLocation(
        bucket=_req(loc, "bucket", str, "artifact_location", source),
        prefix=_opt(loc, "prefix", str, "artifact_location", source) or "",
        kms_key_arn=_opt(loc, "kms_key_arn", str, "artifact_location", source),
    )
    models: dict[str, ModelEntry] = {}
    for name, m in _req(data, "models", dict, "$", source).items():
        w = f"models.{name}"
        if not isinstance(m, dict):
            raise _bad(w, m, "is not an object", "object", source)
        _known_keys(m, _MODEL_KEYS, w, source)
        models[name] = ModelEntry(
            name=_req(m, "name", str, w, source),
            format=_req(m, "format", str, w, source),
            platform=_opt(m, "platform", str, w, source),
            backend=_opt(m, "backend", str, w, source),
            config=_req(m, "config", dict, w, source),
            config_sha256=_req(m, "config_sha256", str, w, source),
            files=_req(m, "files", dict, w, source),
            steps=list(_opt(m, "steps", list, w, source) or []),
            gpu_architectures=list(_opt(m, "gpu_architectures", list, w, source) or []),
            tensorrt_version=_opt(m, "tensorrt_version", str, w, source),
            source_sha256=_opt(m, "source_sha256", str, w, source),
            sample=_sample(_opt(m, "sample", dict, w, source), f"{w}.sample", source),
        )
        if models[name].name != name:
            raise _bad(f"{w}.name", models[name].name, "differs from its key", repr(name), source)
    endpoints: dict[str, EndpointEntry] = {}
    for name, e in _req(data, "endpoints", dict, "$", source).items():
        w = f"endpoints.{name}"
        if not isinstance(e, dict):
            raise _bad(w, e, "is not an object", "object", source)
        _known_keys(e, _ENDPOINT_KEYS, w, source)
        mode = _req(e, "mode", str, w, source)
        if mode not in (SINGLE_MODEL, MULTI_MODEL):
            raise _bad(f"{w}.mode", mode, "is not an endpoint mode", f"{SINGLE_MODEL}, {MULTI_MODEL}", source)
        targets: dict[str, TargetModel] = {}
        for tname, t in (_opt(e, "target_models", dict, w, source) or {}).items():
            tw = f"{w}.target_models.{tname}"
            if not isinstance(t, dict):
                raise _bad(tw, t, "is not an object", "object", source)
            _known_keys(t, _TARGET_KEYS, tw, source)
            targets[tname] = TargetModel(
                logical_name=_req(t, "logical_name", str, tw, source),
                target_model=_req(t, "target_model", str, tw, source),
                model=_req(t, "model", str, tw, source),
                models=list(_req(t, "models", list, tw, source)),
                local_path=_req(t, "local_path", str, tw, source),
                sha256=_req(t, "sha256", str, tw, source),
                size_bytes=_req(t, "size_bytes", int, tw, source),
                s3_uri=_req(t, "s3_uri", str, tw, source),
                sample=_sample(_opt(t, "sample", dict, tw, source), f"{tw}.sample", source),
            )
        entry = EndpointEntry(
            name=_req(e, "name", str, w, source),
            mode=mode,
            instance_types=list(_req(e, "instance_types", list, w, source)),
            gpu_architectures=list(_opt(e, "gpu_architectures", list, w, source) or []),
            default_model=_opt(e, "default_model", str, w, source),
            models=list(_opt(e, "models", list, w, source) or []),
            packaging=_opt(e, "packaging", str, w, source),
            local_path=_opt(e, "local_path", str, w, source),
            s3_uri=_opt(e, "s3_uri", str, w, source),
            sha256=_opt(e, "sha256", str, w, source),
            size_bytes=_opt(e, "size_bytes", int, w, source),
            s3_prefix=_opt(e, "s3_prefix", str, w, source),
            target_models=targets,
            sample=_sample(_opt(e, "sample", dict, w, source), f"{w}.sample", source),
        )
        if mode == SINGLE_MODEL:
            for key in ("packaging", "local_path", "s3_uri", "sha256"):
                if getattr(entry, key) is None:
                    raise _bad(
                        f"{w}.{key}", None, "is missing for a single-model endpoint", "a value", source
                    )
            if entry.packaging not in ("directory", "tar.gz"):
                raise _bad(
                    f"{w}.packaging", entry.packaging, "is not a packaging", "directory, tar.gz", source
                )
            if entry.packaging == "directory" and not (entry.s3_uri or "").endswith("/"):
                raise _bad(
                    f"{w}.s3_uri",
                    entry.s3_uri,
                    "must be a prefix for a directory",
                    "an S3 URI ending '/'",
                    source,
                )
        else:
            if not entry.s3_prefix or not entry.s3_prefix.endswith("/"):
                raise _bad(
                    f"{w}.s3_prefix", entry.s3_prefix, "must be an S3 prefix", "an S3 URI ending '/'", source
                )
            if not targets:
                raise _bad(f"{w}.target_models", {}, "is empty", "at least one target model", source)
        endpoints[name] = entry
    return Manifest(
        schema_version=version,
        triton_version=_req(data, "triton_version", str, "$", source),
        artifact_location=location,
        uploaded=_req(data, "uploaded", bool, "$", source),
        models=models,
        endpoints=endpoints,
        tool_versions=dict(_opt(data, "tool_versions", dict, "$", source) or {}),
        path=source,
    )


def read_manifest(path: str | os.PathLike[str]) -> Manifest:
    """Read and validate a manifest file (a directory means ``<dir>/manifest.json``)."""
    p = Path(path)
    if p.is_dir():
        p = p / MANIFEST_FILENAME
    if not p.is_file():
        raise ManifestError(
            "ManifestNotFound",
            prop="manifest",
            value=str(p),
            problem="does not exist",
            allowed="the manifest.json the build wrote",
            fix="run `cdk-triton build` first",
        )
    try:
        data = json.loads(p.read_text("utf-8"))
    except json.JSONDecodeError as exc:
        raise ManifestError(
            "InvalidManifest",
            prop="manifest",
            value=str(p),
            problem=f"is not valid JSON ({exc})",
            allowed="JSON",
            fix="rebuild with `cdk-triton build`",
        ) from None
    return manifest_from_dict(data, source=str(p.resolve()))


def write_manifest(manifest: Manifest, path: str | os.PathLike[str]) -> Path:
    """Write atomically (temp file + rename), sorted keys, so equal manifests are equal bytes."""
    p = Path(path)
    if p.is_dir():
        p = p / MANIFEST_FILENAME
    data = manifest.to_dict()
    manifest_from_dict(data, source=str(p))  # never write what we could not read back
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=".manifest-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, sort_keys=True)
            fh.write("\n")
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return p
