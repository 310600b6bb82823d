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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdk_triton._deprecation import deprecated_property
from cdk_triton.config import async_inference, instance_pools, modes
from cdk_triton.config.arns import check_kms_key_arn
from cdk_triton.config.async_inference import AsyncValues
from cdk_triton.config.instance_pools import PoolValues
from cdk_triton.config.parse import Fail, dataclass_keys, known_keys, optional, required
from cdk_triton.config.serialize import json_ready
from cdk_triton.config.sizing import MEMORY_SOURCES
from cdk_triton.config.target_runtime import TargetRuntimeCheck, check_from_dict
from cdk_triton.errors import TritonValidationError

#: 2 (issue 20): models gain ``memory_bytes`` and ``memory_source``. 3 (issue 23): the
#: ``InferenceComponents`` endpoint mode (``components``, ``min_instances``, ``max_instances``).
#: 4 (issues 29, 30; this release): ``memory_bytes`` counts the activation peak of one inference at
#: max_batch_size where the build could run the eager module, ``memory_source`` says how
#: (``config.sizing.MEMORY_SOURCES``); a ``--shard I/N`` build's manifest records ``shard: {index, count}``
#: (a merge then checks the set).
SCHEMA_VERSION = 4
#: Versions this reader reads: a version-1 manifest (no memory fields) still reads, its models' memory
#: unknown (the checks then fall back on ``size_bytes``); a version-2 manifest has no components endpoint;
#: a version-3 manifest records no shard (a merge cannot tell it is one: it is not checked as a set).
READABLE_SCHEMA_VERSIONS = (1, 2, 3, 4)
MANIFEST_FILENAME = "manifest.json"

#: The persisted words of the three first modes (their rows are ``config.modes``; kept for importers).
SINGLE_MODEL = modes.SINGLE_MODEL.name
MULTI_MODEL = modes.MULTI_MODEL.name
INFERENCE_COMPONENTS = modes.INFERENCE_COMPONENTS.name
#: The endpoint modes of ``config.modes`` when this module was imported (the reader asks the mode table).
ENDPOINT_MODES = modes.names()


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
    format: str  # a format of the format table (config/formats.py)
    platform: str | None  # e.g. onnxruntime_onnx, pytorch_libtorch, tensorrt_plan, ensemble
    backend: str | None  # e.g. python, onnxruntime, pytorch, tensorrt
    config: dict[str, Any]  # the ModelConfig as JSON (protobuf json_format, preserving field names)
    config_sha256: str
    files: dict[str, str]  # path inside the model directory -> sha256
    steps: list[str] = field(default_factory=list)  # ensemble step models
    gpu_architectures: list[str] = field(default_factory=list)  # TensorRT plans: e.g. ["sm86"]
    tensorrt_version: str | None = None
    onnx_opset: int | None = None  # ONNX models: the opset the model imports (None: not recorded)
    onnx_ir_version: int | None = None  # ONNX models: the model's IR version (None: not recorded)
    size_bytes: int | None = None  # the model directory's files (weights), for the GPU-memory warning
    memory_bytes: int | None = None  # one instance's memory: parameters + I/O at the largest batch (v2)
    memory_source: str | None = None  # config.sizing.MEMORY_SOURCES (model_memory) (v2; v4 adds labels)
    source_sha256: str | None = None  # the cache key the build used
    sample: Sample | None = None
    #: the artifact in the release's own runtime (``config.target_runtime``); None: not recorded
    target_runtime: TargetRuntimeCheck | None = None

    @property
    def sequence_batching(self) -> bool:
        """Whether Triton's sequence batcher schedules this model: a stateful model, so every request of a
        sequence must reach the same SageMaker instance (at most one instance behind the endpoint)."""
        return "sequence_batching" in self.config


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
class ComponentEntry:
    """One inference component of an ``InferenceComponents`` endpoint (schema 3).

    ``target_model`` is the key of its archive in the endpoint's ``target_models`` (the model with its
    ensemble steps, packaged as an MME target model). ``component_name`` is
    ``layout.component_name(<endpoint name>, <model>)``; the constructs may prefix it per stack and
    record the real name in the name map. ``None``: not set in ``models.yaml`` (derived at synth).
    """

    logical_name: str
    component_name: str
    target_model: str
    copies: int = 1
    min_copies: int | None = None
    max_copies: int | None = None
    accelerators: int | None = None
    cpu_cores: float | None = None
    min_memory_mb: int | None = None
    max_memory_mb: int | None = None
    data_cache: bool | None = None
    startup_timeout_s: int | None = None


class EndpointMode:
    """What an endpoint's ``mode`` says: its row of ``config.modes`` (one rule for the models.yaml spec and
    the manifest entry)."""

    __slots__ = ()
    mode: str

    @property
    def hosting_mode(self) -> modes.HostingMode:
        """The mode's row (``config.modes``): what it packages, routes, publishes and supports."""
        return modes.get(self.mode)

    is_multi_model = deprecated_property(
        lambda self: self.hosting_mode.loads_on_demand,
        old="cdk_triton.config.manifest.EndpointEntry.is_multi_model",
        new="hosting_mode.loads_on_demand",
        since="0.2.0",
    )
    is_inference_components = deprecated_property(
        lambda self: self.hosting_mode.components,
        old="cdk_triton.config.manifest.EndpointEntry.is_inference_components",
        new="hosting_mode.components",
        since="0.2.0",
    )

    @property
    def per_model_archives(self) -> bool:
        """Whether each model has its own archive (``target_models``): the row's ``per_model_archives``."""
        return self.hosting_mode.per_model_archives


@dataclass(frozen=True, kw_only=True, slots=True)
class EndpointEntry(EndpointMode):
    """One endpoint's packaged artifacts."""

    name: str
    mode: str  # SingleModel | MultiModel | InferenceComponents
    instance_types: list[str]
    gpu_architectures: list[str] = field(default_factory=list)
    # SME
    default_model: str | None = None
    #: the models Triton loads at start beside default_model (``--load-model`` each): a python model's
    #: callees, which the default model's own load does not load (``BuildSpec.loaded_at_start``);
    #: None: none (and in manifests written before this field)
    load_models: list[str] | None = None
    models: list[str] = field(default_factory=list)
    packaging: str | None = None  # directory | tar.gz
    local_path: str | None = None  # repository directory or .tar.gz, relative to the manifest
    s3_uri: str | None = None  # prefix ending '/' (directory) or the .tar.gz object
    sha256: str | None = None  # tree hash (directory) or archive hash
    size_bytes: int | None = None
    # MME and inference components (one archive per target model / component)
    s3_prefix: str | None = None  # ending '/'
    target_models: dict[str, TargetModel] = field(default_factory=dict)
    # inference components (schema 3): logical model name -> component
    components: dict[str, ComponentEntry] = field(default_factory=dict)
    min_instances: int | None = None  # ManagedInstanceScaling (None: derived at synth)
    max_instances: int | None = None
    sample: Sample | None = None
    #: The host image models.yaml pinned for the endpoint (``InferenceAmiVersion``); None: not pinned.
    inference_ami_version: str | None = None
    #: The ``async:`` block models.yaml declared (an asynchronous endpoint); None: real-time.
    async_inference: AsyncValues | None = None
    #: The ``instance_pools:`` models.yaml declared (SingleModel, InferenceComponents); None: one type.
    instance_pools: PoolValues | None = None

    def component_map(self) -> dict[str, str]:
        """logical name -> the manifest's component name."""
        return {k: v.component_name for k, v in sorted(self.components.items())}

    def find_component(self, name: str) -> ComponentEntry | None:
        """The component called ``name``: its logical name or its component name; None when neither."""
        if name in self.components:
            return self.components[name]
        return next((c for c in self.components.values() if c.component_name == name), None)

    @property
    def compression(self) -> str:
        """``None`` for an uncompressed S3 prefix, ``Gzip`` for a tar.gz (ModelDataSource words)."""
        return "None" if self.packaging == "directory" else "Gzip"

    def target_model_map(self) -> dict[str, str]:
        """logical name -> TargetModel header value."""
        return {k: v.target_model for k, v in sorted(self.target_models.items())}


@dataclass(frozen=True, kw_only=True, slots=True)
class ShardInfo:
    """The ``--shard I/N`` a manifest was built as (0-based ``index`` of ``count``)."""

    index: int
    count: int

    @property
    def arg(self) -> str:
        """The ``--shard`` argument: ``I/N``."""
        return f"{self.index}/{self.count}"

    spec = deprecated_property(
        lambda self: self.arg, old="cdk_triton.config.manifest.ShardInfo.spec", new="arg", since="0.3.0"
    )


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
    #: the declaration's acknowledged_advisories (CVE id -> reason); written only when there are some
    acknowledged_advisories: dict[str, str] = field(default_factory=dict)
    #: False: the declaration refused the library's acknowledgment of the default release's advisories
    #: (``config.default_release``); written only when False
    library_acknowledgments: bool = True
    shard: ShardInfo | None = None  # a ``--shard I/N`` build's manifest (schema 4; None: a whole build)
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
        data: dict[str, Any] = json_ready(self)
        data.pop("path", None)
        if not data.get("acknowledged_advisories"):
            data.pop("acknowledged_advisories", None)  # manifests without acknowledgments stay as they were
        if data.get("library_acknowledgments", True):
            data.pop("library_acknowledgments", None)  # so does every manifest that does not refuse them
        return data


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


def _failing(source: str | None) -> Fail:
    """The parse kit's ``fail``: an InvalidManifest error for a field of the file ``source``."""

    def fail(where: str, value: Any, problem: str, allowed: str) -> ManifestError:
        return _bad(where, value, problem, allowed, source)

    return fail


def _object(d: Any, where: str, fail: Fail, keys: set[str]) -> dict[str, Any]:
    """``d`` as a JSON object holding only ``keys``."""
    if not isinstance(d, dict):
        raise fail(where, d, "is not an object", "object")
    known_keys(d, keys, where, fail, what="a manifest field")
    return d


def _sample(d: dict[str, Any] | None, where: str, fail: Fail) -> Sample | None:
    if d is None:
        return None
    return Sample(
        request=required(d, "request", str, where, fail),
        response=optional(d, "response", str, where, fail),
        atol=optional(d, "atol", (int, float), where, fail),
        rtol=optional(d, "rtol", (int, float), where, fail),
        request_s3_uri=optional(d, "request_s3_uri", str, where, fail),
        response_s3_uri=optional(d, "response_s3_uri", str, where, fail),
    )


_MODEL_KEYS = set(dataclass_keys(ModelEntry))
_TARGET_KEYS = set(dataclass_keys(TargetModel))
_ENDPOINT_KEYS = set(dataclass_keys(EndpointEntry))
_COMPONENT_KEYS = set(dataclass_keys(ComponentEntry))
_TOP_KEYS = set(dataclass_keys(Manifest, exclude=("path",)))


def manifest_from_dict(data: Any, *, source: str | None = None) -> Manifest:
    """Validate and convert a parsed manifest (raises ManifestError naming the bad field)."""
    fail = _failing(source)
    if not isinstance(data, dict):
        raise fail("$", type(data).__name__, "is not a JSON object", "object")
    version = data.get("schema_version")
    if version not in READABLE_SCHEMA_VERSIONS or isinstance(version, bool):
        raise ManifestError(
            "UnsupportedManifestVersion",
            prop="manifest schema_version",
            value=version,
            problem="is not supported by this cdk-triton",
            allowed=", ".join(map(str, READABLE_SCHEMA_VERSIONS)),
            fix="rebuild the artifacts with this cdk-triton version",
            path=source,
        )
    known_keys(data, _TOP_KEYS, "$", fail, what="a manifest field")
    location = _artifact_location(required(data, "artifact_location", dict, "$", fail), fail, source)
    models = {
        name: _model_entry(name, m, fail) for name, m in required(data, "models", dict, "$", fail).items()
    }
    endpoints = {
        name: _endpoint_entry(name, e, fail)
        for name, e in required(data, "endpoints", dict, "$", fail).items()
    }
    return Manifest(
        schema_version=version,
        triton_version=required(data, "triton_version", str, "$", fail),
        artifact_location=location,
        uploaded=required(data, "uploaded", bool, "$", fail),
        models=models,
        endpoints=endpoints,
        tool_versions=dict(optional(data, "tool_versions", dict, "$", fail) or {}),
        acknowledged_advisories=dict(optional(data, "acknowledged_advisories", dict, "$", fail) or {}),
        library_acknowledgments=optional(data, "library_acknowledgments", bool, "$", fail) is not False,
        shard=_shard(optional(data, "shard", dict, "$", fail), fail),
        path=source,
    )


def _shard(d: dict[str, Any] | None, fail: Fail) -> ShardInfo | None:
    if d is None:
        return None
    known_keys(d, {"index", "count"}, "shard", fail, what="a shard field")
    index, count = required(d, "index", int, "shard", fail), required(d, "count", int, "shard", fail)
    if count < 1 or not 0 <= index < count:
        raise fail("shard", f"{index}/{count}", "is not a shard I/N with 0 <= I < N", "0 <= index < count")
    return ShardInfo(index=index, count=count)


def _artifact_location(loc: dict[str, Any], fail: Fail, source: str | None) -> ArtifactLocation:
    kms = optional(loc, "kms_key_arn", str, "artifact_location", fail)
    if kms is not None and (
        bad := check_kms_key_arn(kms, prop="manifest field 'artifact_location.kms_key_arn'")
    ):
        raise ManifestError(
            bad.code,
            prop=bad.prop,
            value=kms,
            problem=bad.problem,
            allowed=bad.allowed,
            fix=bad.fix,
            path=source,
        )
    return ArtifactLocation(
        bucket=required(loc, "bucket", str, "artifact_location", fail),
        prefix=optional(loc, "prefix", str, "artifact_location", fail) or "",
        kms_key_arn=kms,
    )


def _model_entry(name: str, m: Any, fail: Fail) -> ModelEntry:
    w = f"models.{name}"
    m = _object(m, w, fail, _MODEL_KEYS)
    entry = ModelEntry(
        name=required(m, "name", str, w, fail),
        format=required(m, "format", str, w, fail),
        platform=optional(m, "platform", str, w, fail),
        backend=optional(m, "backend", str, w, fail),
        config=required(m, "config", dict, w, fail),
        config_sha256=required(m, "config_sha256", str, w, fail),
        files=required(m, "files", dict, w, fail),
        steps=list(optional(m, "steps", list, w, fail) or []),
        gpu_architectures=list(optional(m, "gpu_architectures", list, w, fail) or []),
        tensorrt_version=optional(m, "tensorrt_version", str, w, fail),
        onnx_opset=optional(m, "onnx_opset", int, w, fail),
        onnx_ir_version=optional(m, "onnx_ir_version", int, w, fail),
        size_bytes=optional(m, "size_bytes", int, w, fail),
        memory_bytes=optional(m, "memory_bytes", int, w, fail),
        memory_source=optional(m, "memory_source", str, w, fail),
        source_sha256=optional(m, "source_sha256", str, w, fail),
        sample=_sample(optional(m, "sample", dict, w, fail), f"{w}.sample", fail),
        target_runtime=check_from_dict(m.get("target_runtime"), f"{w}.target_runtime", fail),
    )
    if entry.name != name:
        raise fail(f"{w}.name", entry.name, "differs from its key", repr(name))
    if entry.memory_source is not None and entry.memory_source not in MEMORY_SOURCES:
        raise fail(
            f"{w}.memory_source", entry.memory_source, "is not a memory source", ", ".join(MEMORY_SOURCES)
        )
    return entry


def _target_model(tw: str, t: Any, fail: Fail) -> TargetModel:
    t = _object(t, tw, fail, _TARGET_KEYS)
    return TargetModel(
        logical_name=required(t, "logical_name", str, tw, fail),
        target_model=required(t, "target_model", str, tw, fail),
        model=required(t, "model", str, tw, fail),
        models=list(required(t, "models", list, tw, fail)),
        local_path=required(t, "local_path", str, tw, fail),
        sha256=required(t, "sha256", str, tw, fail),
        size_bytes=required(t, "size_bytes", int, tw, fail),
        s3_uri=required(t, "s3_uri", str, tw, fail),
        sample=_sample(optional(t, "sample", dict, tw, fail), f"{tw}.sample", fail),
    )


def _endpoint_entry(name: str, e: Any, fail: Fail) -> EndpointEntry:
    w = f"endpoints.{name}"
    e = _object(e, w, fail, _ENDPOINT_KEYS)
    mode = required(e, "mode", str, w, fail)
    row = modes.lookup(mode)
    if row is None:
        raise fail(f"{w}.mode", mode, "is not an endpoint mode", modes.listed())
    targets = {
        tname: _target_model(f"{w}.target_models.{tname}", t, fail)
        for tname, t in (optional(e, "target_models", dict, w, fail) or {}).items()
    }
    entry = EndpointEntry(
        name=required(e, "name", str, w, fail),
        mode=mode,
        instance_types=list(required(e, "instance_types", list, w, fail)),
        gpu_architectures=list(optional(e, "gpu_architectures", list, w, fail) or []),
        default_model=optional(e, "default_model", str, w, fail),
        load_models=optional(e, "load_models", list, w, fail),
        models=list(optional(e, "models", list, w, fail) or []),
        packaging=optional(e, "packaging", str, w, fail),
        local_path=optional(e, "local_path", str, w, fail),
        s3_uri=optional(e, "s3_uri", str, w, fail),
        sha256=optional(e, "sha256", str, w, fail),
        size_bytes=optional(e, "size_bytes", int, w, fail),
        s3_prefix=optional(e, "s3_prefix", str, w, fail),
        target_models=targets,
        sample=_sample(optional(e, "sample", dict, w, fail), f"{w}.sample", fail),
        inference_ami_version=optional(e, "inference_ami_version", str, w, fail),
        components={
            cname: _component(f"{w}.components.{cname}", c, fail)
            for cname, c in (optional(e, "components", dict, w, fail) or {}).items()
        },
        min_instances=optional(e, "min_instances", int, w, fail),
        max_instances=optional(e, "max_instances", int, w, fail),
        async_inference=_async(optional(e, "async_inference", dict, w, fail), f"{w}.async_inference", fail),
        instance_pools=_pools(optional(e, "instance_pools", dict, w, fail), f"{w}.instance_pools", fail),
    )
    if entry.instance_pools is not None and row.instance_pools is not None:
        with_pools = [m.name for m in modes.MODES.values() if m.instance_pools is None]
        raise fail(f"{w}.instance_pools", entry.mode, row.instance_pools.reason, " or ".join(with_pools))
    if entry.async_inference is not None and row.async_inference is not None:
        raise fail(f"{w}.async_inference", entry.mode, row.async_inference.reason, "SingleModel")
    if row.per_model_archives:
        _check_multi_model_layout(w, entry, fail)
    else:
        _check_single_model_layout(w, entry, fail)
    if row.components:
        _check_components_layout(w, entry, fail)
    elif entry.components or entry.min_instances is not None or entry.max_instances is not None:
        with_components = [m.name for m in modes.where(components=True)]
        raise fail(
            f"{w}.components",
            entry.mode,
            f"holds components but the mode is not {' or '.join(with_components)}",
            ", ".join(with_components),
        )
    return entry


def _async(d: dict[str, Any] | None, aw: str, fail: Fail) -> AsyncValues | None:
    """An endpoint's ``async_inference``: the keys of ``config.async_inference``, typed, within limits."""
    if d is None:
        return None
    d = _object(d, aw, fail, set(async_inference.KEY_TYPES))
    kw = {k: optional(d, k, t, aw, fail) for k, t in async_inference.KEY_TYPES.items()}
    values = async_inference.from_dict(kw)
    problems = async_inference.value_problems(values, aw)
    if problems:
        p = problems[0]
        raise fail(p.path or aw, p.value, p.problem, p.allowed)
    return values


def _pools(d: dict[str, Any] | None, pw: str, fail: Fail) -> PoolValues | None:
    """An endpoint's ``instance_pools``: ``instance_types`` (priority order) and ``provision_timeout_s``."""
    if d is None:
        return None
    d = _object(d, pw, fail, {"instance_types", "provision_timeout_s"})
    values = PoolValues(
        instance_types=tuple(str(t) for t in required(d, "instance_types", (list, tuple), pw, fail)),
        provision_timeout_s=optional(d, "provision_timeout_s", int, pw, fail),
    )
    problems = instance_pools.value_problems(values, pw)
    if problems:
        p = problems[0]
        raise fail(p.path or pw, p.value, p.problem, p.allowed)
    return values


def _component(cw: str, c: Any, fail: Fail) -> ComponentEntry:
    c = _object(c, cw, fail, _COMPONENT_KEYS)
    return ComponentEntry(
        logical_name=required(c, "logical_name", str, cw, fail),
        component_name=required(c, "component_name", str, cw, fail),
        target_model=required(c, "target_model", str, cw, fail),
        copies=optional(c, "copies", int, cw, fail) if c.get("copies") is not None else 1,
        min_copies=optional(c, "min_copies", int, cw, fail),
        max_copies=optional(c, "max_copies", int, cw, fail),
        accelerators=optional(c, "accelerators", int, cw, fail),
        cpu_cores=optional(c, "cpu_cores", (int, float), cw, fail),
        min_memory_mb=optional(c, "min_memory_mb", int, cw, fail),
        max_memory_mb=optional(c, "max_memory_mb", int, cw, fail),
        data_cache=optional(c, "data_cache", bool, cw, fail),
        startup_timeout_s=optional(c, "startup_timeout_s", int, cw, fail),
    )


def _check_components_layout(w: str, entry: EndpointEntry, fail: Fail) -> None:
    """Inference components: each component names its key and an archive of ``target_models``, names
    are unique, and every archive is a component."""
    if not entry.components:
        raise fail(f"{w}.components", {}, "is empty", "at least one component")
    seen: dict[str, str] = {}
    for key, c in entry.components.items():
        cw = f"{w}.components.{key}"
        if c.logical_name != key:
            raise fail(f"{cw}.logical_name", c.logical_name, "differs from its key", repr(key))
        if c.target_model not in entry.target_models:
            raise fail(
                f"{cw}.target_model",
                c.target_model,
                "is not a key of target_models",
                ", ".join(sorted(entry.target_models)),
            )
        if c.component_name in seen:
            raise fail(
                f"{cw}.component_name",
                c.component_name,
                f"is also the name of '{seen[c.component_name]}'",
                "unique component names",
            )
        seen[c.component_name] = key
    orphans = sorted(set(entry.target_models) - {c.target_model for c in entry.components.values()})
    if orphans:
        raise fail(
            f"{w}.target_models.{orphans[0]}",
            orphans[0],
            "is the archive of no component",
            ", ".join(sorted(entry.components)),
        )


def _check_single_model_layout(w: str, entry: EndpointEntry, fail: Fail) -> None:
    """SME: one repository, a directory (S3 prefix) or a tar.gz, with its hash."""
    for key in ("packaging", "local_path", "s3_uri", "sha256"):
        if getattr(entry, key) is None:
            raise fail(f"{w}.{key}", None, "is missing for a single-model endpoint", "a value")
    if entry.packaging not in ("directory", "tar.gz"):
        raise fail(f"{w}.packaging", entry.packaging, "is not a packaging", "directory, tar.gz")
    if entry.packaging == "directory" and not (entry.s3_uri or "").endswith("/"):
        raise fail(f"{w}.s3_uri", entry.s3_uri, "must be a prefix for a directory", "an S3 URI ending '/'")


def _check_multi_model_layout(w: str, entry: EndpointEntry, fail: Fail) -> None:
    """MME and inference components: an S3 prefix holding at least one target model archive."""
    if not entry.s3_prefix or not entry.s3_prefix.endswith("/"):
        raise fail(f"{w}.s3_prefix", entry.s3_prefix, "must be an S3 prefix", "an S3 URI ending '/'")
    if not entry.target_models:
        raise fail(f"{w}.target_models", {}, "is empty", "at least one target model")


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
