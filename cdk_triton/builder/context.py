"""The state one build shares between its steps, and the records the steps pass along.

Modelled on model_navigator: a pipeline is a list of steps (:mod:`cdk_triton.builder.steps`),
each takes the one :class:`BuildContext` and returns a :class:`StepOutput` with a status.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cdk_triton.builder.cache import ModelCache
from cdk_triton.builder.reference import Runner
from cdk_triton.builder.report import Reporter
from cdk_triton.config.declaration import BuildSpec, EndpointSpec, ModelSpec
from cdk_triton.config.manifest import EndpointEntry, Manifest, Sample, ShardInfo

#: a file in every ensemble's version folder ``1/``: Triton needs the folder, S3 has no empty folders,
#: and SageMaker refuses a zero-byte "folder marker" key ending in '/' under an uncompressed S3 prefix
#: (its last path part would be an empty file name, which S3ModelDataSource does not allow)
ENSEMBLE_PLACEHOLDER = ".keep"


@dataclass(kw_only=True, slots=True)
class BuildResult:
    """What a build did. ``exported``/``packaged``/``uploaded`` count work done; ``skipped`` counts
    work found up to date (cached models, unchanged packages, objects already in S3)."""

    manifest_path: Path
    manifest: Manifest
    exported: int = 0
    reconfigured: int = 0  # cached artifacts whose config.pbtxt alone was regenerated
    packaged: int = 0
    uploaded: int = 0
    copied: int = 0
    skipped: int = 0
    skipped_models: dict[str, str] = field(default_factory=dict)  # optional models not built, and why
    #: models a merge of shard manifests found in no shard and exported itself (``--build-missing``)
    built_missing: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    rows: list[dict[str, str]] = field(default_factory=list)  # summary table


class StepStatus(enum.Enum):
    """How a step ended (a failing step raises instead)."""

    OK = "ok"  # did work
    UP_TO_DATE = "up_to_date"  # found everything done already
    SKIPPED = "skipped"  # had nothing to do in this build (e.g. no --upload)


@dataclass(frozen=True, kw_only=True, slots=True)
class StepOutput:
    """What one step did: ``done`` units of work, ``up_to_date`` units found done already."""

    step: str
    status: StepStatus
    done: int = 0
    up_to_date: int = 0
    copied: int = 0  # S3 objects copied server-side (upload only)


@dataclass(frozen=True, kw_only=True, slots=True)
class SampleRecord:
    """The declared sample as KServe v2 JSON, with the tolerances a client should compare with."""

    request: dict[str, Any]
    response: dict[str, Any]
    atol: float
    rtol: float


@dataclass(frozen=True, kw_only=True, slots=True)
class Exported:
    """What exporting one model produced (its config, names and sample), before it is cached."""

    config: dict[str, Any]
    config_sha256: str
    io_names: dict[str, dict[str, str]]
    sample: SampleRecord
    steps: list[str] | None = None  # ensembles: the step models
    parity_max_abs_diff: float | None = None  # None when no CPU runtime could check the artifact
    onnx: dict[str, Any] | None = None  # what the ONNX file declares (opset, IR version)
    plans: list[dict[str, Any]] | None = None  # TensorRT plan metadata
    # the activation peak at max_batch_size (``builder.activations``): {"peak_bytes", "method"};
    # None when the format has no eager module to run (a given file, python, ensemble) or it failed
    activations: dict[str, Any] | None = None
    # the device constants the artifact's graph uses (``portability.DevicePin`` dicts); None: not read
    device_pins: list[dict[str, str]] | None = None


#: keys of a cached record that are left out when unset
_OPTIONAL = ("steps", "parity_max_abs_diff", "onnx", "plans", "activations", "device_pins")


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelRecord:
    """A cached model: how it was made and what it holds (``<cache>/<name>-<key16>.json``)."""

    name: str
    format: str
    source_sha256: str  # the cache key
    tool_versions: dict[str, str]
    platform: str | None
    backend: str | None
    files: dict[str, str]
    exported: Exported
    artifact_key: str | None = None  # the part of the key that affects the exported bytes
    sizes: dict[str, int] | None = None  # path -> size when committed (the stat shortcut)

    def to_dict(self) -> dict[str, Any]:
        """The record's JSON form (the cache file; unset optional keys are left out)."""
        made = {k: v for k, v in asdict(self.exported).items() if not (k in _OPTIONAL and v is None)}
        return {
            **made,
            "name": self.name,
            "format": self.format,
            "source_sha256": self.source_sha256,
            "tool_versions": self.tool_versions,
            "platform": self.platform,
            "backend": self.backend,
            "files": self.files,
            **({"artifact_key": self.artifact_key} if self.artifact_key else {}),
            **({"sizes": self.sizes} if self.sizes is not None else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelRecord:
        """Read a record written by :meth:`to_dict`."""
        exported = Exported(
            config=data["config"],
            config_sha256=data["config_sha256"],
            io_names=data["io_names"],
            sample=SampleRecord(**data["sample"]),
            **{k: data[k] for k in _OPTIONAL if k in data},
        )
        return cls(
            name=data["name"],
            format=data["format"],
            source_sha256=data["source_sha256"],
            tool_versions=data["tool_versions"],
            platform=data.get("platform"),
            backend=data.get("backend"),
            files=data["files"],
            exported=exported,
            artifact_key=data.get("artifact_key"),
            sizes=data.get("sizes"),
        )


@dataclass(kw_only=True, slots=True)
class Resolved:
    """One model of the build: its declaration, cache key and (once cached or exported) record."""

    spec: ModelSpec
    key: str
    record: ModelRecord | None  # cached record, or None while it must be exported
    skip_reason: str | None = None
    artifact_key: str = ""  # what affects the exported bytes (``key`` adds the configuration)
    reuse: ModelRecord | None = None  # a cached entry with the same artifact, another configuration
    take: Path | None = None  # the output directory of a --merge-manifest build holding this entry


@dataclass(frozen=True, kw_only=True, slots=True)
class Artifact:
    """A file to upload: where it is and the S3 object it becomes."""

    local_path: Path
    s3_uri: str
    sha256: str
    size: int


@dataclass(kw_only=True, slots=True)
class BuildContext:
    """Everything one build knows; every step reads and extends it."""

    spec: BuildSpec
    out: Path
    reporter: Reporter
    only: str | None = None
    force: bool = False
    upload: bool = False
    verify: bool = False  # hash every cached file and output in full (``--verify``)
    formats: frozenset[str] | None = None  # build only models of these formats (``--formats``)
    merged: Manifest | None = None  # the manifests of other builds (``--merge-manifest``), joined
    merged_dirs: dict[str, Path] = field(
        default_factory=dict
    )  # model -> output dir of the manifest holding it
    shard: ShardInfo | None = None  # ``--shard I/N``: recorded in the manifest (a merge checks the set)
    missing: list[str] = field(default_factory=list)  # ``--build-missing``: models no merged shard holds
    config_path: Path | None = None  # the declaration file (what a worker process loads again)
    jobs: int | None = 1  # worker processes exporting models (None: auto, ``parallel.auto_jobs``)
    s3_client: Any | None = None
    endpoints: list[EndpointSpec] = field(default_factory=list)  # selected endpoints
    names: list[str] = field(default_factory=list)  # selected models, steps before ensembles
    cache: ModelCache = field(init=False)
    tools: dict[str, str] = field(default_factory=dict)
    resolved: dict[str, Resolved] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    fresh: set[str] = field(default_factory=set)  # models exported by this build
    reconfigured: set[str] = field(default_factory=set)  # cached artifacts given a new config.pbtxt
    verified: set[str] = field(default_factory=set)  # cache entries hashed in full by this build
    runners: dict[str, Runner] = field(default_factory=dict)  # eager reference runners, by model
    samples: dict[str, Sample] = field(default_factory=dict)
    endpoint_entries: dict[str, EndpointEntry] = field(default_factory=dict)
    artifacts: list[Artifact] = field(default_factory=list)
    uploaded: bool = False  # every artifact is in S3
    target_runtime: bool = True  # run the release-runtime check (``--no-target-runtime``: False)
    #: model -> its release-runtime check (``target_runtime.check_target_runtimes``), for the manifest
    target_runtime_checks: dict[str, Any] = field(default_factory=dict)
    target_runtime_probe: Any = None  # the probe started before the export (``target_runtime.start_probe``)
    #: called with each model's name once its record is set by the export step (the probe is handed it)
    after_export: Callable[[str], None] | None = None
    result: BuildResult = field(init=False)
    lock: Any = None

    def __post_init__(self) -> None:
        self.cache = ModelCache(self.out)
        self.result = BuildResult(manifest_path=self.out / "manifest.json", manifest=None)  # type: ignore[arg-type]

    def warn(self, text: str, *, detail: str | None = None) -> None:
        """Record a warning once and show it (``detail``: the full text ``--verbose`` shows under it)."""
        if text not in self.warnings:
            self.warnings.append(text)
            self.reporter.warn(text, detail=detail)

    def record(self, name: str) -> ModelRecord:
        """The record of a model that was cached or exported by now."""
        rec = self.resolved[name].record
        assert rec is not None, name
        return rec

    @property
    def built(self) -> list[str]:
        """The selected models that were not skipped, in build order."""
        return [n for n in self.names if self.resolved[n].skip_reason is None]

    @property
    def full_check(self) -> bool:
        """Hash everything in full (``--verify``, or before an upload) instead of trusting stat."""
        return self.verify or self.upload

    def model_dirs(self, names: list[str]) -> dict[str, Path]:
        """The cache directories of ``names``."""
        return {n: self.cache.entry_dir(n, self.resolved[n].key) for n in names}
