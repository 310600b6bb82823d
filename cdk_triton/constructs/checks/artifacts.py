"""The pure checks of artifacts: model names, the MME TargetModel map, and trust in a manifest.

Synth trusts nothing it cannot see: a manifest edited by hand or written by a broken tool is checked
after reading (``check_manifest_entry``) before any resource names its URIs. Functions of plain values
(and the ``Manifest`` object): each returns the ``TritonValidationError`` list it found, without a
construct path; ``ModelArtifacts.bind`` locates them and raises them all at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from cdk_triton.config import arns, digest, layout
from cdk_triton.config.manifest import EndpointEntry, Manifest
from cdk_triton.constructs._tokens import is_token
from cdk_triton.constructs.errors import catalogued
from cdk_triton.errors import TritonValidationError

#: InvokeEndpoint's TargetModel: 1..1024 printable characters, not starting with whitespace.
TARGET_MODEL_MAX = 1024
GPU_ARCHITECTURE = re.compile(r"^sm\d{2,3}$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")
#: ``s3://<bucket>/<key>``. The bucket's own naming rules are not checked here: an offline example may
#: carry a placeholder bucket (``...-ACCOUNT``) that the build replaces before upload.
S3_URI = re.compile(r"^s3://[^/\s]{3,}/\S*$")
_PRINTABLE = re.compile(r"^\S[\x20-\x7e]*$")


def check_model_names(default_model: str | None, models: Iterable[str]) -> list[TritonValidationError]:
    """``default_model`` and ``models`` are Triton model directory names (tokens skipped)."""
    errs = []
    for prop, name in [("default_model", default_model), *(("models", m) for m in models)]:
        if name is None or is_token(name) or layout.is_model_name(name):
            continue
        errs.append(
            catalogued(
                "InvalidModelName",
                prop=prop,
                value=name,
                problem="is not a Triton model directory name",
                allowed=layout.MODEL_NAME_RULE,
                fix="use the model's directory name in the repository",
            )
        )
    return errs


def check_kms_key_arn(value: str | None, *, prop: str) -> list[TritonValidationError]:
    """A key ARN string given to a construct (a token is skipped): the config rule ``arns.check_kms_key_arn``."""
    if value is None or is_token(value):
        return []
    err = arns.check_kms_key_arn(value, prop=prop)
    return [err] if err is not None else []


def check_gpu_architectures(archs: Iterable[str]) -> list[TritonValidationError]:
    """TensorRT plan architectures are compute capabilities such as ``sm86``."""
    return [
        catalogued(
            "InvalidGpuArchitecture",
            prop="gpu_architectures",
            value=arch,
            problem="is not a GPU architecture",
            allowed="'sm' and the compute capability without the dot, e.g. sm75, sm86, sm89, sm90",
            fix="write the architecture the TensorRT plans were built for, e.g. 'sm86' for ml.g5",
        )
        for arch in archs
        if not is_token(arch) and not GPU_ARCHITECTURE.fullmatch(arch)
    ]


def check_target_models(
    target_models: Mapping[str, str] | None, *, multi_model: bool, prop: str = "target_models"
) -> list[TritonValidationError]:
    """The MME map logical name -> TargetModel: not empty, valid values, no names equal but for case.

    ``None`` means unknown (an MME prefix whose archives are not listed): nothing to check.
    """
    if target_models is None or not multi_model:
        return []
    if not target_models:
        return [
            catalogued(
                "MmeWithoutModels",
                prop=prop,
                value={},
                problem="is empty: a multi-model endpoint needs at least one model to serve",
                allowed="at least one logical name -> TargetModel archive ('<model>-<sha12>.tar.gz')",
                fix="list the archives under the prefix, or leave target_models unset when they are unknown",
            )
        ]
    errs = [_invalid_target_model(prop, name, value) for name, value in sorted(target_models.items())]
    found = [e for e in errs if e is not None]
    for kind, names in (
        ("logical names", list(target_models)),
        ("TargetModel values", target_models.values()),
    ):
        found += _case_collisions(prop, kind, names)
    return found


def _invalid_target_model(prop: str, name: str, value: str) -> TritonValidationError | None:
    ok = len(value) <= TARGET_MODEL_MAX and _PRINTABLE.fullmatch(value) and not value.startswith("/")
    if is_token(value) or (ok and value.endswith(layout.ARCHIVE_SUFFIX)):
        return None
    return catalogued(
        "InvalidTargetModel",
        prop=f"{prop}[{name!r}]",
        value=value if len(value) <= 80 else f"{value[:60]}... ({len(value)} characters)",
        problem="is not a TargetModel SageMaker accepts",
        allowed=f"a .tar.gz key relative to the MME prefix, 1..{TARGET_MODEL_MAX} printable characters, "
        "not starting with '/' or whitespace",
        fix="use the archive name the build wrote ('<model>-<sha12>.tar.gz'); shorten the model name",
    )


def _case_collisions(prop: str, kind: str, names: Iterable[str]) -> list[TritonValidationError]:
    seen: dict[str, str] = {}
    errs = []
    for name in sorted(names):
        if is_token(name):
            continue
        other = seen.setdefault(name.lower(), name)
        if other != name:
            errs.append(
                catalogued(
                    "TargetModelCaseCollision",
                    prop=prop,
                    value=(other, name),
                    problem=f"has {kind} that differ only in case, so they name the same archive "
                    "for the container's model cache",
                    allowed=f"{kind} unique ignoring case",
                    fix="rename one of the models (the build derives the archive name from it)",
                )
            )
    return errs


# ---------------------------------------------------------------------------- manifest trust


def check_manifest_entry(
    manifest: Manifest, key: str, *, entry: EndpointEntry | None = None
) -> list[TritonValidationError]:
    """The endpoint entry ``key`` of a manifest read from disk (or built in code), before synth uses it.

    Refused, with the entry named: an S3 location that is not ``s3://<bucket>/...``; an MME archive
    whose name does not carry its recorded hash (``<model>-<sha12>.tar.gz``) or whose URI is not the
    prefix + the archive; a hash that is not a sha256; a model, step or default model the manifest
    lacks; an empty MME map; a TargetModel SageMaker refuses. ``entry``: ``manifest.endpoint(key)`` when
    the caller has read it already.
    """
    entry = entry if entry is not None else manifest.endpoint(key)
    where = f"endpoints.{key}"
    errs = _check_references(manifest, entry, key)
    errs += check_gpu_architectures(entry.gpu_architectures)
    if not entry.per_model_archives:  # MME and inference components: a prefix of archives
        uri_errs = _uri(f"{where}.s3_uri", entry.s3_uri)
        sha_errs = _sha(f"{where}.sha256", entry.sha256)
        errs += uri_errs + sha_errs
        if not uri_errs and not sha_errs:
            errs += _check_sme_digest(manifest, entry, key)
        return errs
    prefix_errs = _uri(f"{where}.s3_prefix", entry.s3_prefix)
    errs += prefix_errs
    errs += check_target_models(
        entry.target_model_map(), multi_model=True, prop=f"manifest {where}.target_models"
    )
    for name, t in sorted(entry.target_models.items()):
        tw = f"{where}.target_models.{name}"
        uri_errs = _uri(f"{tw}.s3_uri", t.s3_uri)
        errs += uri_errs
        errs += _sha(f"{tw}.sha256", t.sha256)
        archive = layout.parse_archive_name(t.target_model)
        if SHA256.fullmatch(t.sha256) and (archive is None or not archive.carries(t.sha256)):
            errs.append(
                _untrusted(
                    "ManifestHashMismatch",
                    f"{tw}.target_model",
                    t.target_model,
                    f"does not carry its recorded sha256 {t.sha256[: layout.ARCHIVE_HASH_HEX]}...",
                    f"{layout.archive_pattern(t.sha256)} (the archive name holds the first "
                    f"{layout.ARCHIVE_HASH_HEX} hex of sha256)",
                )
            )
        if (
            not prefix_errs
            and not uri_errs
            and t.s3_uri != layout.target_model_uri(entry.s3_prefix or "", t.target_model)
        ):
            errs.append(
                _untrusted(
                    "ManifestBrokenReference",
                    f"{tw}.s3_uri",
                    t.s3_uri,
                    "is not the endpoint's s3_prefix followed by the archive name",
                    layout.target_model_uri(entry.s3_prefix or "", t.target_model),
                )
            )
    return errs


def _check_sme_digest(manifest: Manifest, entry: EndpointEntry, key: str) -> list[TritonValidationError]:
    """An SME entry's ``sha256`` is the digest its S3 location carries (``sme/<ep>/<sha16>/`` for a
    directory, an archive name holding its first 12 hex, ``<ep>-<sha12>.tar.gz``) and, where the manifest was read from a file and its
    ``local_path`` is there, the digest of that repository or archive (``config.digest``): a hand-edited
    hash, or a repository changed after the build, is not trusted."""
    where = f"endpoints.{key}"
    sha, uri = entry.sha256 or "", entry.s3_uri or ""
    if entry.packaging == "directory":
        expected_key = layout.sme_directory_key(key, sha)
        carries = uri.endswith(f"/{expected_key}")
    else:
        expected_key = layout.sme_archive_key(key, layout.archive_name(key, sha))
        carries = sha[: layout.ARCHIVE_HASH_HEX] in uri.rsplit("/", 1)[-1]  # older builds: <sha16>.tar.gz
    if not carries:
        return [
            _untrusted(
                "ManifestHashMismatch",
                f"{where}.s3_uri",
                uri,
                f"does not carry its recorded sha256 {sha[:16]}...",
                f"a location ending {expected_key} (the build names the repository by its digest)",
            )
        ]
    if manifest.path is None or not entry.local_path:
        return []
    got = digest.local_digest(manifest.resolve(entry.local_path))
    if got is None or got == sha:
        return []
    return [
        _untrusted(
            "ManifestHashMismatch",
            f"{where}.sha256",
            sha,
            f"is not the digest of {entry.local_path} ({got[:16]}...): the manifest or the "
            f"{'repository' if entry.packaging == 'directory' else 'archive'} changed after the build",
            got,
        )
    ]


def _check_references(manifest: Manifest, entry: EndpointEntry, key: str) -> list[TritonValidationError]:
    """Every model an entry names exists in ``manifest.models``; names agree with their keys."""
    where = f"endpoints.{key}"
    errs = []
    if entry.name != key:
        errs.append(_broken(f"{where}.name", entry.name, "differs from its key", [key]))
    refs: list[tuple[str, str]] = (
        [(f"{where}.default_model", entry.default_model)] if entry.default_model else []
    )
    refs += [(f"{where}.models", m) for m in entry.models]
    if entry.default_model and entry.models and entry.default_model not in entry.models:
        errs.append(
            _broken(
                f"{where}.default_model",
                entry.default_model,
                "is not among the endpoint's models",
                entry.models,
            )
        )
    for name, t in sorted(entry.target_models.items()):
        tw = f"{where}.target_models.{name}"
        refs += [(f"{tw}.model", t.model), *((f"{tw}.models", m) for m in t.models)]
        if t.model not in t.models:
            errs.append(_broken(f"{tw}.model", t.model, "is not among the archive's models", t.models))
        if t.logical_name != name:
            errs.append(_broken(f"{tw}.logical_name", t.logical_name, "differs from its key", [name]))
    for prop, model in refs:
        if model not in manifest.models:
            errs.append(_broken(prop, model, "is not a model of the manifest", sorted(manifest.models)))
            continue
        for step in manifest.models[model].steps:
            if step not in manifest.models:
                errs.append(_broken(f"models.{model}.steps", step, "is not a model of the manifest", []))
    return errs


def _uri(prop: str, uri: str | None) -> list[TritonValidationError]:
    if uri is not None and S3_URI.fullmatch(uri):
        return []
    return [
        _untrusted(
            "ManifestUriNotS3",
            prop,
            uri,
            "is not an S3 location SageMaker can load from",
            "s3://<bucket>/<key>",
        )
    ]


def _sha(prop: str, sha: str | None) -> list[TritonValidationError]:
    if sha is not None and SHA256.fullmatch(sha):
        return []
    return [_untrusted("ManifestHashMismatch", prop, sha, "is not a sha256", "64 lower-case hex digits")]


def _broken(prop: str, value: str, problem: str, allowed: list[str]) -> TritonValidationError:
    return _untrusted(
        "ManifestBrokenReference", prop, value, problem, ", ".join(allowed[:20]) or "a model of the manifest"
    )


def _untrusted(code: str, prop: str, value: object, problem: str, allowed: str) -> TritonValidationError:
    return catalogued(
        code,
        prop=f"manifest {prop}",
        value=value,
        problem=problem,
        allowed=allowed,
        fix="do not edit the manifest by hand: rebuild with `cdk-triton build` (and `--upload`)",
    )
