"""The layout contract between build, synth and serve: every name and key two layers must agree on.

The build writes these names and keys (``cdk_triton.builder``), the constructs check and deploy
them (``cdk_triton.constructs``), the local endpoint serves them (``cdk_triton.local``) and the
pipeline verifies with them (``cdk_triton.pipeline``). Each rule is written here once and called by
all of them: a new key (a hosting mode, a fan-out build) is added here, next to its siblings.

Keys are relative to the artifact location (``s3://<bucket>/<prefix>/``) and, under the same names,
to the build's output directory (``build/out/``)::

    sme/<endpoint>/<tree sha256[:16]>/<model>/...   SME, packaging: directory (an uncompressed prefix)
    sme/<endpoint>/<endpoint>-<sha256[:12]>.tar.gz  SME, packaging: tar.gz
    mme/<endpoint>/<model>-<sha256[:12]>.tar.gz     MME: one archive per target model (its TargetModel)
    ic/<endpoint>/<model>-<sha256[:12]>.tar.gz      inference components: the same archive per component
    samples/<model>.request.json                    the recorded sample pair, beside the manifest
    samples/<sha256[:12]>/<model>.request.json      the uploaded sample pair (content-addressed)
    registry/<endpoint>/<manifest sha256>/...       a registered build's evidence (cdk-triton register)
    async/<endpoint>/input/...                      asynchronous requests' payloads (InputLocation)
    async/<endpoint>/output/...                     asynchronous results (S3OutputPath)
    async/<endpoint>/failure/...                    asynchronous failures (S3FailurePath)

The digest lengths are part of every key already uploaded and every cache index already written:
changing one re-uploads everything and invalidates every deployed TargetModel value.

The pipeline's fan-out build keeps each run under ``pipeline/fanout/<run>/`` (``fanout_*`` below).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from cdk_triton.errors import TritonValidationError, raise_all

if TYPE_CHECKING:
    from cdk_triton.config.manifest import Manifest, Sample

#: The folder (in S3 and in ``build/out/``) of single-model endpoints' repositories.
SME_FOLDER = "sme"
#: The folder (in S3 and in ``build/out/``) of multi-model endpoints' archives.
MME_FOLDER = "mme"
#: The folder (in S3 and in ``build/out/``) of inference-components endpoints' archives (one per component,
#: packaged exactly as an MME target model: the model with its ensemble steps).
IC_FOLDER = "ic"
#: The folder (in S3 and in ``build/out/``) of the recorded sample pairs.
SAMPLES_FOLDER = "samples"
#: The folder (under the evidence location) of the registered builds' evidence.
REGISTRY_FOLDER = "registry"
#: The folder (in S3, and under the local endpoint's state directory) of asynchronous endpoints' payloads.
ASYNC_FOLDER = "async"
#: Every archive the build writes is a gzip-compressed tar.
ARCHIVE_SUFFIX = ".tar.gz"

#: Hex digits of the archive's sha256 in its name (``<model>-<sha12>.tar.gz``). The name is the MME
#: TargetModel value callers send and SageMaker caches by: short enough to read and type, long enough
#: (48 bits) that two builds of one model in one endpoint's prefix never share a name.
ARCHIVE_HASH_HEX = 12
#: Hex digits of the repository tree's digest in an SME directory prefix (``sme/<ep>/<sha16>/``). A
#: prefix holds many objects that nobody types, and every change of any model of the endpoint makes a
#: new one that must never meet an old prefix in a long-lived bucket: 64 bits.
SME_PREFIX_HASH_HEX = 16
#: Hex digits of sha256(request + NUL + response) in an uploaded sample prefix (``samples/<sha12>/``):
#: the same reasoning as the archive name (a few pairs per model, never typed).
SAMPLE_HASH_HEX = 12

#: A Triton model directory name: the declaration's ``name``, the constructs' ``default_model`` and
#: ``models``, the stem of an MME archive name.
MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")
#: What :data:`MODEL_NAME` allows, in words (the ``allowed`` of an ``InvalidModelName`` error).
MODEL_NAME_RULE = "letters, digits, '_', '-' and '.', starting with a letter or digit (at most 200)"
_ARCHIVE_NAME = re.compile(
    rf"^(?P<stem>.+)-(?P<sha>[0-9a-f]{{{ARCHIVE_HASH_HEX}}}){re.escape(ARCHIVE_SUFFIX)}$"
)


def is_model_name(name: str) -> bool:
    """Whether ``name`` is a Triton model directory name (:data:`MODEL_NAME`)."""
    return MODEL_NAME.fullmatch(name) is not None


class ArchiveName(NamedTuple):
    """An archive name the build wrote, read back: its stem and the sha256 prefix it carries."""

    stem: str
    sha: str

    def carries(self, sha256: str) -> bool:
        """Whether the name carries this sha256 (its first :data:`ARCHIVE_HASH_HEX` hex digits)."""
        return self.sha == sha256[:ARCHIVE_HASH_HEX]


def archive_name(stem: str, sha256: str) -> str:
    """The name of an archive of ``stem`` (a model or an SME endpoint): ``<stem>-<sha12>.tar.gz``."""
    return f"{stem}-{sha256[:ARCHIVE_HASH_HEX]}{ARCHIVE_SUFFIX}"


def parse_archive_name(name: str) -> ArchiveName | None:
    """The stem and hash of a name :func:`archive_name` wrote; None for any other name."""
    match = _ARCHIVE_NAME.fullmatch(name)
    return ArchiveName(match["stem"], match["sha"]) if match else None


def archive_pattern(sha256: str) -> str:
    """The archive name a sha256 requires, in words (``'<model>-<sha12>.tar.gz'``)."""
    return f"'<model>-{sha256[:ARCHIVE_HASH_HEX]}{ARCHIVE_SUFFIX}'"


def _endpoint_key(folder: str, endpoint: str, *parts: str, prefix: bool = False) -> str:
    """``<folder>/<endpoint>[/<part>...]``, ending ``/`` when it is a key ``prefix``: every folder and key
    of one endpoint (SME, MME, inference components, registry evidence, asynchronous inference)."""
    key = "/".join((folder, endpoint, *parts))
    return f"{key}/" if prefix else key


def sme_folder(endpoint: str) -> str:
    """The folder of an SME endpoint: ``sme/<endpoint>`` (under ``build/out/`` and the prefix)."""
    return _endpoint_key(SME_FOLDER, endpoint)


def sme_directory_key(endpoint: str, tree_digest: str) -> str:
    """The S3 prefix of an SME repository uploaded as a directory: ``sme/<ep>/<sha16>/``."""
    return f"{sme_folder(endpoint)}/{tree_digest[:SME_PREFIX_HASH_HEX]}/"


def sme_archive_key(endpoint: str, archive: str) -> str:
    """The S3 key of an SME repository uploaded as one archive: ``sme/<ep>/<archive name>``."""
    return f"{sme_folder(endpoint)}/{archive}"


def mme_folder(endpoint: str) -> str:
    """The folder of an MME endpoint: ``mme/<endpoint>`` (under ``build/out/`` and the prefix)."""
    return _endpoint_key(MME_FOLDER, endpoint)


def mme_prefix_key(endpoint: str) -> str:
    """The S3 prefix of an MME endpoint's archives (its ModelDataUrl): ``mme/<endpoint>/``."""
    return _endpoint_key(MME_FOLDER, endpoint, prefix=True)


def ic_folder(endpoint: str) -> str:
    """The folder of an inference-components endpoint: ``ic/<endpoint>`` (under ``build/out/`` and the prefix)."""
    return _endpoint_key(IC_FOLDER, endpoint)


def ic_prefix_key(endpoint: str) -> str:
    """The S3 prefix of an inference-components endpoint's archives: ``ic/<endpoint>/``."""
    return _endpoint_key(IC_FOLDER, endpoint, prefix=True)


#: ``InferenceComponentName`` (botocore's model and the CloudFormation schema of
#: ``AWS::SageMaker::InferenceComponent``): letters, digits and inner hyphens, at most 63 characters,
#: unique per account and region.
COMPONENT_NAME = re.compile(r"^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$")
COMPONENT_NAME_MAX = 63
#: Hex digits of sha256(full name) that end a component name cut to :data:`COMPONENT_NAME_MAX`.
COMPONENT_HASH_HEX = 8


def component_name(prefix: str, model: str) -> str:
    """The ``InferenceComponentName`` of ``model`` under ``prefix`` (the endpoint name in the manifest).

    ``<prefix>-<model>`` with every character outside ``[-a-zA-Z0-9]`` (``_``, ``.``) made ``-`` and
    hyphens trimmed at both ends; a name longer than 63 characters is cut and ends ``-<sha256[:8]>`` of
    the full, unmapped name. Deterministic: the same inputs always give the same name. Two models may
    map to one name (``a_b`` and ``a.b``): :func:`check_component_names` reports it.
    """
    full = f"{prefix}-{model}" if prefix else model
    name = re.sub(r"[^-a-zA-Z0-9]", "-", full).strip("-") or "component"
    if len(name) <= COMPONENT_NAME_MAX:
        return name
    digest = hashlib.sha256(full.encode()).hexdigest()[:COMPONENT_HASH_HEX]
    head = name[: COMPONENT_NAME_MAX - COMPONENT_HASH_HEX - 1].rstrip("-")
    return f"{head}-{digest}"


def component_name_problems(
    names: Mapping[str, str], *, path: str | None = None
) -> list[TritonValidationError]:
    """The collisions of ``names`` (logical model name -> component name) and every name that is not an
    ``InferenceComponentName``: one ``ComponentNameCollision`` / ``InvalidComponentName`` error each."""
    out: list[TritonValidationError] = []
    owner: dict[str, str] = {}
    for logical, name in names.items():
        if COMPONENT_NAME.fullmatch(name) is None or len(name) > COMPONENT_NAME_MAX:
            out.append(
                TritonValidationError(
                    "InvalidComponentName",
                    prop="component name",
                    value=name,
                    problem=f"(of model '{logical}') is not an InferenceComponentName",
                    allowed="[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?, at most 63 characters",
                    fix="derive it with layout.component_name",
                    path=path,
                )
            )
        if name in owner:
            out.append(
                TritonValidationError(
                    "ComponentNameCollision",
                    prop="component name",
                    value=name,
                    problem=f"is the name of both '{owner[name]}' and '{logical}'",
                    allowed="one component name per model ('_' and '.' become '-')",
                    fix="rename one of the models so that their names differ in letters or digits",
                    path=path,
                )
            )
        owner.setdefault(name, logical)
    return out


def check_component_names(names: Mapping[str, str], *, path: str | None = None) -> None:
    """Raise every problem :func:`component_name_problems` finds (``ComponentNameCollision``, ...)."""
    raise_all(component_name_problems(names, path=path))


def target_model_uri(prefix_uri: str, target_model: str) -> str:
    """Where SageMaker reads a TargetModel: the endpoint's prefix followed by the archive name."""
    return f"{prefix_uri}{target_model}"


def sample_file(model: str, kind: str) -> str:
    """The file name of a model's sample ``kind`` (request or response): ``<model>.<kind>.json``."""
    return f"{model}.{kind}.json"


def sample_path(model: str, kind: str) -> str:
    """The manifest's path of a sample file, relative to the manifest: ``samples/<model>.<kind>.json``."""
    return f"{SAMPLES_FOLDER}/{sample_file(model, kind)}"


def sample_prefix_key(request_text: str, response_text: str) -> str:
    """Where ``cdk-triton build --upload`` puts a sample pair: ``samples/<sha12>/``.

    Content-addressed: sha12 is the first 12 hex digits of sha256(request text + NUL + response text).
    """
    sha = hashlib.sha256(f"{request_text}\0{response_text}".encode()).hexdigest()
    return f"{SAMPLES_FOLDER}/{sha[:SAMPLE_HASH_HEX]}/"


def samples_key_pattern(prefix: str) -> str:
    """The object pattern of every uploaded sample under a key prefix: ``<prefix>samples/*``."""
    return f"{prefix}{SAMPLES_FOLDER}/*"


# ------------------------------------------------------------------ the pipeline's fan-out build
#: The folder (under the artifact prefix) of the pipeline's fan-out runs: ``pipeline/fanout/<run>/``.
FANOUT_FOLDER = "pipeline/fanout"
#: Hex digits of a fan-out run id: sha256 of the pipeline's source revision (a commit id or an S3
#: version id, which may hold characters S3 keys and SageMaker job names do not like).
FANOUT_RUN_HEX = 16
#: The fan-out shard of the CPU formats (CodeBuild).
FANOUT_CPU = "cpu"
#: The fan-out shard of the formats built on the GPU job (``Format.gpu_only``: a SageMaker job). The
#: word is TensorRT's, the one such format when the key layout was deployed: it stays, since it is in
#: deployed S3 keys and state machines (``items-tensorrt.json``).
FANOUT_GPU = "tensorrt"
#: The kinds of fan-out shard: CPU formats on CodeBuild, the GPU-only formats on a SageMaker job.
FANOUT_KINDS = (FANOUT_CPU, FANOUT_GPU)


def fanout_run_id(revision: str) -> str:
    """The run id of a source revision: the first :data:`FANOUT_RUN_HEX` hex digits of its sha256.

    The pipeline's steps compute it in the shell (:func:`fanout_run_id_shell`) from
    ``$CODEBUILD_RESOLVED_SOURCE_VERSION``; both must agree."""
    return hashlib.sha256(revision.encode()).hexdigest()[:FANOUT_RUN_HEX]


def fanout_run_id_shell(variable: str = "CODEBUILD_RESOLVED_SOURCE_VERSION") -> str:
    """The shell expression of :func:`fanout_run_id` over an environment variable."""
    return f'$(printf %s "${variable}" | sha256sum | cut -c1-{FANOUT_RUN_HEX})'


def fanout_run_prefix(run: str) -> str:
    """The key prefix of one fan-out run: ``pipeline/fanout/<run>/``."""
    return f"{FANOUT_FOLDER}/{run}/"


def fanout_source_key(run: str) -> str:
    """The packed source tree of a run (the plan, shard and merge steps unpack it): ``source.tar.gz``."""
    return f"{fanout_run_prefix(run)}source.tar.gz"


def fanout_items_key(run: str, kind: str) -> str:
    """The shard list of one kind (a JSON array the Distributed Map reads): ``items-<kind>.json``."""
    return f"{fanout_run_prefix(run)}items-{kind}.json"


def fanout_shard_output_key(run: str, shard: int, kind: str) -> str:
    """One shard's build output (its ``--out`` directory, tar.gz): ``shards/<shard>-<kind>.tar.gz``."""
    return f"{fanout_run_prefix(run)}shards/{shard}-{kind}{ARCHIVE_SUFFIX}"


def fanout_merged_key(run: str) -> str:
    """The merged build output (manifest, archives, samples) the synth step reads: ``merged.tar.gz``."""
    return f"{fanout_run_prefix(run)}merged{ARCHIVE_SUFFIX}"


def fanout_gpu_readings_key(run: str) -> str:
    """The GPU check's readings of a run (its report folder, tar.gz): ``gpu-readings.tar.gz``."""
    return f"{fanout_run_prefix(run)}gpu-readings{ARCHIVE_SUFFIX}"


def fanout_failures_key(run: str) -> str:
    """The summary of the shards that failed and their models: ``failed-models.json``."""
    return f"{fanout_run_prefix(run)}failed-models.json"


def fanout_key_pattern(prefix: str) -> str:
    """The object pattern of every fan-out run under a key prefix: ``<prefix>pipeline/fanout/*``."""
    return f"{prefix}{FANOUT_FOLDER}/*"


def sample_s3_uris(manifest: Manifest, sample: Sample) -> tuple[str, str] | None:
    """The S3 URIs of a recorded sample pair: as recorded by an uploading build, else derived with
    :func:`sample_prefix_key` from the files beside the manifest; None when neither is possible."""
    if sample.request_s3_uri and sample.response_s3_uri:
        return sample.request_s3_uri, sample.response_s3_uri
    if sample.response is None:
        return None
    base_dir = Path(manifest.path).parent if manifest.path else Path.cwd()
    files = [base_dir / sample.request, base_dir / sample.response]
    if not all(f.is_file() for f in files):
        return None
    base = manifest.artifact_location.uri + sample_prefix_key(
        files[0].read_text("utf-8"), files[1].read_text("utf-8")
    )
    return base + files[0].name, base + files[1].name


def registry_evidence_prefix(endpoint: str, manifest_sha256: str) -> str:
    """Where ``cdk-triton register`` puts a build's evidence: ``registry/<endpoint>/<manifest sha256>/``.

    Content-addressed by the whole manifest hash: registering the same build again writes the same keys.
    """
    return _endpoint_key(REGISTRY_FOLDER, endpoint, manifest_sha256, prefix=True)


def async_input_key(endpoint: str) -> str:
    """Where clients cdk-triton runs put an asynchronous request's payload: ``async/<endpoint>/input/``."""
    return _endpoint_key(ASYNC_FOLDER, endpoint, "input", prefix=True)


def async_output_key(endpoint: str) -> str:
    """An asynchronous endpoint's ``S3OutputPath`` (results): ``async/<endpoint>/output/``."""
    return _endpoint_key(ASYNC_FOLDER, endpoint, "output", prefix=True)


def async_failure_key(endpoint: str) -> str:
    """An asynchronous endpoint's ``S3FailurePath`` (errors): ``async/<endpoint>/failure/``."""
    return _endpoint_key(ASYNC_FOLDER, endpoint, "failure", prefix=True)
