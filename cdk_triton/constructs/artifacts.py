"""Where a model's artifacts come from: the build manifest, an existing bucket, or a local asset.

``ModelArtifacts`` follows the CDK ModelData pattern: static factories and ``bind(scope)``. The
endpoint stack never owns the artifact bucket: a manifest's bucket is imported by name.
"""

from __future__ import annotations

import abc
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aws_cdk as cdk
from constructs import Construct

from cdk_triton.config import layout
from cdk_triton.config.async_inference import AsyncValues
from cdk_triton.config.instance_pools import PoolValues
from cdk_triton.config.manifest import (
    MANIFEST_FILENAME,
    MULTI_MODEL,
    SINGLE_MODEL,
    ComponentEntry,
    EndpointEntry,
    EndpointMode,
    Manifest,
    ModelEntry,
    TargetModel,
    read_manifest,
)
from cdk_triton.constructs._tokens import is_token, pseudo, stack_info
from cdk_triton.constructs.checks import artifacts as artifact_checks
from cdk_triton.constructs.errors import catalogued, located, validation_error
from cdk_triton.errors import TritonValidationError, raise_at

if TYPE_CHECKING:
    from aws_cdk import aws_kms as kms
    from aws_cdk import aws_s3 as s3

    from cdk_triton.config.gpu_readings import GpuReadings


@dataclass(frozen=True, kw_only=True, slots=True)
class ArtifactsConfig(EndpointMode):
    """What bound artifacts give the model and its execution role.

    Attributes:
        mode: ``SingleModel`` or ``MultiModel``.
        bucket_name / bucket_arn: the bucket holding the artifacts (never owned by the stack).
        key: the object key (a ``.tar.gz``) or the key prefix ending ``/``.
        compression: ``Gzip`` (a tar.gz, ModelDataUrl) or ``None`` (an uncompressed S3 prefix,
            ModelDataSource) for SME; ``None`` for MME (a prefix of tar.gz archives).
        kms_key_arn: the key the artifacts are encrypted with, if any.
        default_model: SME: the model behind /invocations (an ensemble: the ensemble).
        models: every model directory in the artifacts (empty when unknown).
        target_models: MME: logical name -> TargetModel header value.
        gpu_architectures: TensorRT plan architectures (e.g. ``sm86``); empty = portable.
        packaged_instance_types: what the build packaged for (empty when unknown).
        uploaded: False when the manifest says the artifacts are not in S3 yet.
        triton_version: the Triton release the build targeted, when known.
        built_models: the manifest's entries of the models these artifacts hold (empty when unknown):
            config (instance groups, response cache), TensorRT version, for the synth checks.
        tool_versions: the tools the build used (``torch``, ``onnx`` ...), when known.
        acknowledged_advisories: the declaration's acknowledged NVIDIA advisories (CVE id -> reason).
        data_bytes: the model data SageMaker downloads at start (SME: the tar.gz or the directory; MME:
            its largest archive, the least its cache must hold), when known.
        unpacked_bytes: the model directories that data unpacks to (their files' bytes), when known.
        packaging: ``tar.gz`` or ``directory`` (MME archives: ``tar.gz``), when known.
    """

    mode: str
    bucket_name: str
    bucket_arn: str
    key: str
    compression: str
    kms_key_arn: str | None = None
    default_model: str | None = None
    models: list[str] = field(default_factory=list)
    target_models: dict[str, str] = field(default_factory=dict)
    gpu_architectures: list[str] = field(default_factory=list)
    packaged_instance_types: list[str] = field(default_factory=list)
    uploaded: bool = True
    triton_version: str | None = None
    built_models: dict[str, ModelEntry] = field(default_factory=dict)
    tool_versions: dict[str, str] = field(default_factory=dict)
    acknowledged_advisories: dict[str, str] = field(default_factory=dict)
    #: False: the declaration refused the library's acknowledgment of the default release's advisories.
    library_acknowledgments: bool = True
    data_bytes: int | None = None
    unpacked_bytes: int | None = None
    packaging: str | None = None
    #: The InferenceAmiVersion models.yaml pinned for the endpoint (the manifest carries it).
    inference_ami_version: str | None = None
    #: SME: the models Triton loads at start beside ``default_model`` (a python model's callees: the
    #: manifest's ``load_models``); rendered as ``--load-model`` arguments. Empty when none or unknown.
    load_models: list[str] = field(default_factory=list)
    #: The ``async:`` block models.yaml declared for the endpoint (None: real-time).
    async_inference: AsyncValues | None = None
    #: The ``instance_pools:`` models.yaml declared (None: one instance type).
    instance_pools: PoolValues | None = None
    #: The artifact location's prefix (``cdk-triton/``), under which ``config.layout`` keys other objects
    #: of the endpoint (asynchronous payloads); empty when unknown.
    location_prefix: str = ""
    #: MME: logical name -> the manifest's TargetModel (its models and archive bytes: the working-set
    #: check sums them); empty when unknown.
    target_model_entries: dict[str, TargetModel] = field(default_factory=dict)
    #: Inference components: logical name -> the manifest's ComponentEntry (empty for SME / MME).
    components: dict[str, ComponentEntry] = field(default_factory=dict)
    #: Inference components: the manifest's managed instance scaling bounds (None: derived at synth).
    min_instances: int | None = None
    max_instances: int | None = None
    #: The TargetModel entries of the archives (MME / components), for per-component artifacts.
    archives: dict[str, TargetModel] = field(default_factory=dict)
    #: A GPU readings report (``from_manifest(gpu_readings=...)``): a model read on the instance type's
    #: GPU is sized by its peak allocated bytes there instead of the manifest's estimate.
    gpu_readings: GpuReadings | None = None

    @property
    def s3_url(self) -> str:
        return f"s3://{self.bucket_name}/{self.key}"

    @property
    def is_prefix(self) -> bool:
        return self.key.endswith("/")


@dataclass(frozen=True, kw_only=True, slots=True)
class DeclaredHost:
    """What models.yaml declared to host the artifacts (a manifest entry's), before they are bound."""

    #: The entry's one instance type (None: none, or several without ``instance_pools``).
    instance_type: str | None = None
    #: The entry's ``instance_pools:`` (None: none).
    pools: PoolValues | None = None


class ModelArtifacts(abc.ABC):
    """The model's artifacts: ``from_manifest``, ``from_bucket`` or ``from_asset``."""

    @staticmethod
    def from_manifest(
        manifest: Manifest | str | os.PathLike[str],
        endpoint: str,
        *,
        gpu_readings: GpuReadings | str | os.PathLike[str] | None = None,
    ) -> ModelArtifacts:
        """The artifacts the build stage packaged for ``endpoint`` (a key of the manifest's endpoints).

        The manifest's bucket is referenced by name (never owned); its KMS key (``artifact_location.kms_key_arn``)
        is granted for decryption. A manifest with ``uploaded: false`` synthesizes with a warning.

        Args:
            manifest: a ``Manifest`` or the path of ``manifest.json`` (or its directory).
            endpoint: the endpoint key (``classifier``, ``multi`` ...).
            gpu_readings: a GPU readings report (``GpuReadings`` or the path of ``gpu-readings.json``,
                written by the GPU check): the GPU-memory warning and the MME working-set check size a
                model read on the instance type's GPU by its peak allocated bytes there, and say so.
                Default: none, every model sized by the manifest's ``memory_bytes``.
        """
        return _ManifestArtifacts(manifest, endpoint, gpu_readings)

    @staticmethod
    def from_bucket(
        bucket: s3.IBucket,
        key: str,
        *,
        multi_model: bool = False,
        default_model: str | None = None,
        models: list[str] | None = None,
        target_models: dict[str, str] | None = None,
        encryption_key: kms.IKey | None = None,
        gpu_architectures: list[str] | None = None,
    ) -> ModelArtifacts:
        """Artifacts already in S3.

        Args:
            bucket: the bucket (import it with ``s3.Bucket.from_bucket_name``).
            key: a ``.tar.gz`` object (SME, ModelDataUrl), or a prefix ending ``/``: an uncompressed
                model repository (SME, ModelDataSource S3Prefix + CompressionType None) or the MME
                prefix of tar.gz archives.
            multi_model: the prefix is an MME prefix. Default: False.
            default_model: SME model behind /invocations (SAGEMAKER_TRITON_DEFAULT_MODEL_NAME, which
                SageMaker's Triton needs even for a one-model repository). Default: the only entry
                of ``models``; an SME with neither raises DefaultModelRequired.
            models: the model directories (checks ``default_model``). Default: unknown.
            target_models: MME logical name -> TargetModel (the archive key under the prefix),
                published for clients; an empty map raises MmeWithoutModels. Default: unknown.
            encryption_key: the KMS key the artifacts are encrypted with. Default: none.
            gpu_architectures: TensorRT plan architectures. Default: none (portable).
        """
        return _BucketArtifacts(
            bucket,
            key,
            multi_model=multi_model,
            default_model=default_model,
            models=models or [],
            target_models=target_models,
            encryption_key=encryption_key,
            gpu_architectures=gpu_architectures or [],
        )

    @staticmethod
    def from_asset(path: str | os.PathLike[str], *, default_model: str | None = None) -> ModelArtifacts:
        """A local ``model.tar.gz`` (an SME model repository) uploaded as a CDK asset.

        Args:
            path: the ``.tar.gz`` file.
            default_model: the model behind /invocations (SAGEMAKER_TRITON_DEFAULT_MODEL_NAME).
                Default: none, which raises DefaultModelRequired unless
                ``server_options=ServerOptions(default_model_name=...)`` names it.
        """
        return _AssetArtifacts(Path(path), default_model)

    def declared_pools(self) -> PoolValues | None:
        """The ``instance_pools`` models.yaml declared for these artifacts (a manifest's); None: none."""
        return None

    def declared_host(self) -> DeclaredHost:
        """What models.yaml declared to host these artifacts (a manifest's): the default of an endpoint's
        ``instance_type`` / ``instance_pools``. Default: the declared pools only (none but a manifest's)."""
        return DeclaredHost(pools=self.declared_pools())

    def recorded_manifest(self) -> tuple[Manifest, str] | None:
        """The build manifest these artifacts were read from and their endpoint key (its recorded samples
        and archives); None: not a manifest's. Raises the manifest reader's ``TritonValidationError``
        (not located) when it cannot be read."""
        return None

    @abc.abstractmethod
    def bind(self, scope: Construct) -> ArtifactsConfig:
        """Resolve the artifacts for a model defined in ``scope``."""


def _bucket_arn(name: str) -> str:
    return f"arn:{pseudo().partition}:s3:::{name}"


def split_s3_uri(uri: str) -> tuple[str, str]:
    """``s3://bucket/key`` (or ``bucket/key``) as (bucket, key)."""
    rest = uri[len("s3://") :] if uri.startswith("s3://") else uri
    bucket, _, key = rest.partition("/")
    return bucket, key


class _ManifestArtifacts(ModelArtifacts):
    def __init__(
        self,
        manifest: Manifest | str | os.PathLike[str],
        endpoint: str,
        gpu_readings: GpuReadings | str | os.PathLike[str] | None = None,
    ) -> None:
        self._manifest = manifest
        self._endpoint = endpoint
        self._gpu_readings = gpu_readings
        self._loaded: tuple[Manifest, EndpointEntry] | None = None

    def _entry(self) -> tuple[Manifest, EndpointEntry]:
        """The manifest and this endpoint's entry, read once (raises what reading them raises)."""
        if self._loaded is None:
            manifest = (
                self._manifest if isinstance(self._manifest, Manifest) else _read_manifest(self._manifest)
            )
            self._loaded = (manifest, manifest.endpoint(self._endpoint))
        return self._loaded

    def declared_pools(self) -> PoolValues | None:
        """The manifest entry's ``instance_pools`` (None when none or unreadable: bind reports that)."""
        return self.declared_host().pools

    def recorded_manifest(self) -> tuple[Manifest, str]:
        manifest, _ = self._entry()
        return manifest, self._endpoint

    def declared_host(self) -> DeclaredHost:
        """The manifest entry's ``instance_pools``, else its one instance type (none when unreadable:
        bind reports that)."""
        try:
            _, entry = self._entry()
        except TritonValidationError:
            return DeclaredHost()
        one = entry.instance_types[0] if len(entry.instance_types) == 1 else None
        return DeclaredHost(instance_type=one, pools=entry.instance_pools)

    def bind(self, scope: Construct) -> ArtifactsConfig:
        try:
            manifest, entry = self._entry()
            readings = _readings(self._gpu_readings)
        except TritonValidationError as err:
            raise located(scope, err) from None
        # Synth trusts the manifest no further than it can check (an entry edited by hand is refused).
        _raise_at(scope, artifact_checks.check_manifest_entry(manifest, self._endpoint, entry=entry))
        loc = manifest.artifact_location
        warned = stack_info(scope).warned_manifests
        if not manifest.uploaded and (manifest.path or "") not in warned:
            warned.add(manifest.path or "")  # once per manifest and stack (each warning is a jsii call)
            cdk.Annotations.of(scope).add_warning_v2(
                "cdk-triton:ArtifactsNotUploaded",
                f"the artifacts of {manifest.path or 'the manifest'} (endpoint '{self._endpoint}' and any other "
                "of this stack) are not uploaded yet (uploaded: false): run `cdk-triton build --upload` before "
                "deploying",
            )
        if entry.per_model_archives:  # MME and inference components: a prefix of archives
            bucket_name, key = split_s3_uri(entry.s3_prefix or "")
            compression = "None"
        else:
            bucket_name, key = split_s3_uri(entry.s3_uri or "")
            compression = entry.compression
        archs = sorted(
            set(entry.gpu_architectures).union(
                *(manifest.models[m].gpu_architectures for m in entry.models if m in manifest.models)
            )
        )
        return ArtifactsConfig(
            mode=entry.mode,
            bucket_name=bucket_name or loc.bucket,
            bucket_arn=_bucket_arn(bucket_name or loc.bucket),
            key=key,
            compression=compression,
            kms_key_arn=loc.kms_key_arn,
            default_model=entry.default_model,
            load_models=list(entry.load_models or []),
            models=list(entry.models),
            target_models=entry.target_model_map(),
            gpu_architectures=archs,
            packaged_instance_types=list(entry.instance_types),
            uploaded=manifest.uploaded,
            triton_version=manifest.triton_version,
            built_models={
                m: manifest.models[m]
                for m in sorted(set(entry.models).union(*(t.models for t in entry.target_models.values())))
                if m in manifest.models
            },
            tool_versions=dict(manifest.tool_versions),
            acknowledged_advisories=dict(manifest.acknowledged_advisories),
            library_acknowledgments=manifest.library_acknowledgments,
            **_data_sizes(manifest, entry),
            inference_ami_version=entry.inference_ami_version,
            async_inference=entry.async_inference,
            instance_pools=entry.instance_pools,
            location_prefix=manifest.artifact_location.normalized_prefix,
            target_model_entries=dict(entry.target_models),
            components=dict(entry.components),
            min_instances=entry.min_instances,
            max_instances=entry.max_instances,
            archives=dict(entry.target_models),
            gpu_readings=readings,
        )


def _data_sizes(manifest: Manifest, entry: EndpointEntry) -> dict[str, Any]:
    """data_bytes, unpacked_bytes and packaging of an entry (see ArtifactsConfig); None where unknown."""

    def unpacked(models: list[str]) -> int | None:
        sizes = [manifest.models[m].size_bytes if m in manifest.models else None for m in models]
        return None if not sizes or None in sizes else sum(s for s in sizes if s is not None)

    if entry.per_model_archives:
        largest = max(entry.target_models.values(), key=lambda t: t.size_bytes, default=None)
        if largest is None:
            return {}
        return {
            "data_bytes": largest.size_bytes,
            "unpacked_bytes": unpacked(largest.models),
            "packaging": "tar.gz",
        }
    return {
        "data_bytes": entry.size_bytes,
        "unpacked_bytes": unpacked(entry.models),
        "packaging": entry.packaging,
    }


#: Parsed manifests by (path, mtime, size): two endpoints of one manifest parse it once.
_MANIFEST_CACHE: dict[tuple[str, int, int], Manifest] = {}


def _readings(given: GpuReadings | str | os.PathLike[str] | None) -> GpuReadings | None:
    """The GPU readings report given (read from its path); its module loads only when there is one."""
    if isinstance(given, (str, os.PathLike)):
        from cdk_triton.config.gpu_readings import read_readings

        return read_readings(given)
    return given


def _read_manifest(path: str | os.PathLike[str]) -> Manifest:
    p = Path(path)
    if p.is_dir():
        p = p / MANIFEST_FILENAME
    try:
        st = p.stat()
    except OSError:
        return read_manifest(p)  # raises ManifestNotFound
    key = (str(p.resolve()), st.st_mtime_ns, st.st_size)
    manifest = _MANIFEST_CACHE.get(key)
    if manifest is None:
        if len(_MANIFEST_CACHE) >= 16:
            _MANIFEST_CACHE.clear()
        manifest = _MANIFEST_CACHE[key] = read_manifest(p)
    return manifest


class _BucketArtifacts(ModelArtifacts):
    def __init__(
        self,
        bucket: s3.IBucket,
        key: str,
        *,
        multi_model: bool,
        default_model: str | None,
        models: list[str],
        target_models: dict[str, str] | None,
        encryption_key: kms.IKey | None,
        gpu_architectures: list[str],
    ) -> None:
        self._bucket = bucket
        self._key = key
        self._multi_model = multi_model
        self._default_model = default_model
        self._models = models
        self._target_models = target_models
        self._key_obj = encryption_key
        self._archs = gpu_architectures

    def bind(self, scope: Construct) -> ArtifactsConfig:
        key = self._key.lstrip("/")
        is_prefix = key.endswith("/")
        errs = []
        if not is_token(key) and (
            (self._multi_model and not is_prefix)
            or (not is_prefix and not key.endswith(layout.ARCHIVE_SUFFIX))
        ):
            allowed = (
                "a prefix ending '/'" if self._multi_model else "a prefix ending '/' or a .tar.gz object key"
            )
            errs.append(
                catalogued(
                    "InvalidArtifactKey",
                    prop="key",
                    value=self._key,
                    problem="is not where SageMaker can load Triton artifacts from",
                    allowed=allowed,
                    fix="pass the model repository prefix with a trailing '/', or the model.tar.gz key",
                )
            )
        errs += artifact_checks.check_model_names(self._default_model, self._models)
        errs += artifact_checks.check_gpu_architectures(self._archs)
        errs += artifact_checks.check_target_models(self._target_models, multi_model=self._multi_model)
        _raise_at(scope, errs)
        return ArtifactsConfig(
            mode=MULTI_MODEL if self._multi_model else SINGLE_MODEL,
            bucket_name=self._bucket.bucket_name,
            bucket_arn=self._bucket.bucket_arn,
            key=key,
            compression="None" if is_prefix else "Gzip",
            kms_key_arn=self._key_obj.key_arn if self._key_obj else None,
            default_model=self._default_model,
            models=list(self._models),
            target_models=dict(sorted((self._target_models or {}).items())),
            gpu_architectures=list(self._archs),
        )


def _raise_at(scope: Construct, errs: list[TritonValidationError]) -> None:
    """Raise the pure checks' errors located at ``scope`` (nothing when there are none)."""
    raise_at(scope, errs)


class _AssetArtifacts(ModelArtifacts):
    def __init__(self, path: Path, default_model: str | None) -> None:
        self._path = path
        self._default_model = default_model

    def bind(self, scope: Construct) -> ArtifactsConfig:
        _raise_at(scope, artifact_checks.check_model_names(self._default_model, []))
        if not self._path.is_file() or not self._path.name.endswith(layout.ARCHIVE_SUFFIX):
            raise validation_error(
                scope,
                "InvalidAssetPath",
                prop="path",
                value=str(self._path),
                problem="is not an existing .tar.gz file",
                allowed="a model.tar.gz holding a Triton model repository",
                fix="package the repository with `cdk-triton build` or `tar czf model.tar.gz -C repo .`",
            )
        from aws_cdk import aws_s3_assets as s3_assets

        asset = s3_assets.Asset(scope, "ModelAsset", path=str(self._path))
        return ArtifactsConfig(
            mode=SINGLE_MODEL,
            bucket_name=asset.s3_bucket_name,
            bucket_arn=_bucket_arn(asset.s3_bucket_name),
            key=asset.s3_object_key,
            compression="Gzip",
            default_model=self._default_model,
        )
