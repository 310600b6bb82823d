"""Where each TensorRT plan is built and the GPU check runs: the GPU job of a declaration (pure, no torch, no AWS).

A TensorRT plan only loads on the GPU model and TensorRT version it was built with. For every
``format: tensorrt`` model of ``models.yaml`` this module finds the instance types of the endpoints that
serve it, and chooses a build job whose GPU is the same model, by construction:

* ``codebuild``: CodeBuild's GPU environment, where its GPU is the endpoint's GPU model
  (``BUILD_GENERAL1_SMALL`` = A10G = ml.g5, ``BUILD_GENERAL1_LARGE`` = V100 = ml.p3);
* ``processing``: a SageMaker Processing job on the endpoint's own instance type;
* ``training``: a SageMaker Training job on it, for types Processing does not offer (p3dn, p4d, p5).

The same job runs ``cdk-triton gpu-check`` for every GPU-placed model (:func:`gpu_placed_models`, the
rule of ``config.placement.runs_on_gpu``), so a fleet with GPU-placed models and no TensorRT model gets a
GPU job too: on the GPU of its endpoints' instance types, chosen by the same rule.

The facts live in ``cdk_triton/config/data/gpu-build.json`` (with sources); :func:`job_kind` is the
rule. Errors are :class:`~cdk_triton.errors.TritonValidationError` with a stable code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from cdk_triton._deprecation import deprecated_property
from cdk_triton.config import formats, gpu_hosts, placement, tables
from cdk_triton.config.declaration.file import invalid_yaml, read_declaration_text
from cdk_triton.config.declaration.view import RawDeclaration
from cdk_triton.errors import TritonValidationError, raise_all

CODEBUILD = "codebuild"
PROCESSING = "processing"
TRAINING = "training"
JOB_KINDS = (CODEBUILD, PROCESSING, TRAINING)


@cache
def gpu_build_table() -> dict[str, Any]:
    """The vendored table ``gpu-build.json`` (CodeBuild GPU compute types, SageMaker job types)."""
    text = resources.files("cdk_triton.config").joinpath("data", "gpu-build.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def codebuild_gpu(compute_type: str) -> str | None:
    """The GPU model of a CodeBuild GPU compute type, or None for a type with no GPU."""
    row = gpu_build_table()["codebuild_gpu"]["compute_types"].get(compute_type)
    return None if row is None else str(row["gpu"])


@dataclass(frozen=True, kw_only=True, slots=True)
class GpuJob:
    """One way to build plans for an instance type's GPU: the kind of job and where it runs.

    Attributes:
        kind: ``codebuild``, ``processing`` or ``training``.
        instance_type: the SageMaker instance type a processing/training job runs on (the endpoint's).
        gpu: the GPU model the job runs on, e.g. ``NVIDIA A10G``.
        codebuild_compute_type: the CodeBuild compute type (kind ``codebuild`` only).
    """

    kind: str
    instance_type: str
    gpu: str
    codebuild_compute_type: str | None = None


def job_kinds(instance_type: str) -> list[GpuJob]:
    """Every job kind that runs on ``instance_type``'s GPU model, preferred first (may be empty)."""
    info = tables.instance_type_info(instance_type)
    row = gpu_build_table()["instance_types"].get(instance_type)
    if info is None or row is None:
        return []
    out: list[GpuJob] = []
    compute = row.get("codebuild_compute_type")
    if compute and codebuild_gpu(compute) == info.gpu:
        out.append(
            GpuJob(kind=CODEBUILD, instance_type=instance_type, gpu=info.gpu, codebuild_compute_type=compute)
        )
    for kind in (PROCESSING, TRAINING):
        if row.get(kind):
            out.append(GpuJob(kind=kind, instance_type=instance_type, gpu=info.gpu))
    return out


def job_kind(instance_type: str, *, prefer: str | None = None) -> GpuJob:
    """The job that builds plans for ``instance_type``: the preferred kind available, else the first.

    Raises TritonValidationError(NoGpuBuildPath) for a type with no GPU job (a CPU type, or a GPU
    type in no table) or when ``prefer`` is not offered for it.
    """
    jobs = job_kinds(instance_type)
    if prefer is not None:
        jobs = [j for j in jobs if j.kind == prefer]
    if not jobs:
        offered = [j.kind for j in job_kinds(instance_type)]
        raise TritonValidationError(
            "NoGpuBuildPath",
            prop="instance_type",
            value=instance_type,
            problem=(
                f"has no GPU build job of kind {prefer!r}"
                if prefer and offered
                else "has no GPU build job to build a TensorRT plan on its GPU model"
            ),
            allowed=", ".join(offered) if offered else ", ".join(sorted(gpu_build_table()["instance_types"])),
            fix="serve the model on a GPU instance type from the list, or use format onnx for this endpoint",
        )
    return jobs[0]


@dataclass(frozen=True, kw_only=True, slots=True)
class GpuBuildOptions:
    """How the pipeline's GPU job builds TensorRT plans and checks the GPU-placed models. Every field
    defaults to the path that matches by construction.

    Attributes:
        kind: force ``codebuild``, ``processing`` or ``training``. Default: codebuild where its GPU is
            the endpoint's GPU model, else processing, else training.
        codebuild_compute_type: the CodeBuild GPU compute type. Default: the one whose GPU matches.
        tensorrt_version: the TensorRT pin of the build image. Default: the Triton release's own.
        gpu_check: run ``cdk-triton gpu-check`` (every GPU-placed model on the job's GPU, parity against
            eager; a failure stops the deploy) in the GPU job. Default: on. Off, a fleet without a
            TensorRT model gets no GPU job, and the TensorRT job builds plans only.
    """

    kind: str | None = None
    codebuild_compute_type: str | None = None
    tensorrt_version: str | None = None
    gpu_check: bool = True


@dataclass(frozen=True, kw_only=True, slots=True)
class GpuBuildTarget:
    """The one GPU job of a declaration: the TensorRT plans it builds and the models it checks.

    Attributes:
        models: the ``format: tensorrt`` models it builds (empty: a GPU check only).
        check_models: the GPU-placed models ``cdk-triton gpu-check`` runs on its GPU (empty: no check).
        tensorrt_version: the build image's TensorRT pin ('' for a check-only job of a release whose
            TensorRT version is unknown: the image then has no TensorRT).
        note: why some GPU-placed models are checked on another GPU model than one serving them (or
            None): one pipeline has one GPU job.
    """

    job: GpuJob
    triton_version: str
    tensorrt_version: str
    sm: str
    models: tuple[str, ...]
    endpoints: tuple[str, ...]
    check_models: tuple[str, ...] = ()
    note: str | None = None

    @property
    def builds_models(self) -> bool:
        """Whether the job builds models (of the GPU-only formats: TensorRT plans)."""
        return bool(self.models)

    tensorrt = deprecated_property(
        lambda self: self.builds_models,
        old="cdk_triton.pipeline.gpu_targets.GpuBuildTarget.tensorrt",
        new="builds_models",
        since="0.3.0",
    )

    @property
    def gpu_check(self) -> bool:
        """Whether the job runs ``cdk-triton gpu-check``."""
        return bool(self.check_models)


def read_declaration(path: str | Path) -> RawDeclaration:
    """``models.yaml`` (``yaml.safe_load``) through the lenient view: the rules are not run, and only
    ``triton_version``, ``models`` and ``endpoints`` are read."""
    p = Path(path)
    text = read_declaration_text(
        p, prop="declaration", fix="pass the declaration the build stage reads (e.g. build/models.yaml)"
    )
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise invalid_yaml(p, exc, prop="declaration") from None
    if not isinstance(data, dict):
        raise TritonValidationError(
            "InvalidType",
            prop="declaration",
            value=str(p),
            problem=f"is a YAML {type(data).__name__}, not a mapping",
            allowed="a YAML mapping with models and endpoints",
            fix="write models.yaml as the build stage reads it (keys triton_version, models, endpoints)",
        )
    return RawDeclaration(data)


def gpu_only_models(declaration: RawDeclaration) -> list[str]:
    """The models of a GPU-only format (``Format.gpu_only``: built by the GPU job), in declared order."""
    return [str(m["name"]) for m in declaration.models if formats.is_gpu_only(m.get("format"))]


def _group_kinds(model: Mapping[str, Any]) -> list[str]:
    """The kinds of a raw model's instance groups (a group without ``kind`` is KIND_GPU, as the build reads it)."""
    groups = model.get("instance_groups") or []
    return [str(g.get("kind") or "KIND_GPU").upper() for g in groups if isinstance(g, Mapping)]


def gpu_placed_models(declaration: RawDeclaration) -> list[str]:
    """Every model that may run on a GPU (``placement.runs_on_gpu``, the rule the build's portability
    check and ``cdk-triton gpu-check`` use): a KIND_GPU group, or Triton's default placement on a GPU
    instance type. Ensembles have no artifact of their own (their steps are checked)."""
    out: list[str] = []
    for m in declaration.models:
        name = str(m.get("name"))
        if formats.is_composed(m.get("format")):
            continue
        types = list(dict.fromkeys(t for its in declaration.serving(name).values() for t in its))
        if placement.runs_on_gpu(_group_kinds(m), types):
            out.append(name)
    return out


def _check_job(
    view: RawDeclaration, models: list[str], rel: tables.TritonRelease, opts: GpuBuildOptions
) -> tuple[GpuJob | None, list[str]]:
    """The GPU job of a check-only declaration: the first (sorted) GPU instance type serving a GPU-placed
    model that has a GPU job and meets the release's compute capability, as for TensorRT; and its endpoints."""
    min_cc = rel.min_compute_capability.value
    served: dict[str, set[str]] = {}
    for model in models:
        for ep, its in view.serving(model).items():
            for t in its:
                served.setdefault(t, set()).add(ep)
    for t in sorted(served):
        info = tables.instance_type_info(t)
        if info is None or not job_kinds(t):
            continue
        if min_cc and float(info.compute_capability) < float(min_cc):
            continue
        return _job_for(t, info.gpu, opts), sorted(served[t])
    return None, []


def _check_note(view: RawDeclaration, models: tuple[str, ...], job: GpuJob) -> str | None:
    """Which checked models are served on another GPU model than the job's (or None)."""
    other: dict[str, list[str]] = {}
    for model in models:
        gpus = {
            info.gpu
            for its in view.serving(model).values()
            for t in its
            if (info := tables.instance_type_info(t)) is not None
        }
        if gpus and job.gpu not in gpus:
            other[model] = sorted(gpus)
    if not other:
        return None
    listed = "; ".join(f"{m} (served on {', '.join(g)})" for m, g in sorted(other.items()))
    return (
        f"cdk-triton gpu-check runs on {job.gpu} ({job.instance_type}), the one GPU job of this pipeline; "
        f"these GPU-placed models are served on another GPU model, so their parity on CUDA is checked on "
        f"{job.gpu}, not on their own GPU: {listed}"
    )


def _jobs_for_types(
    types: dict[str, tuple[str, str]],
    rel: tables.TritonRelease,
    opts: GpuBuildOptions,
    source: str,
    errors: list[TritonValidationError],
    format_of: Mapping[str, str] | None = None,
) -> dict[str, GpuJob]:
    """The build job of every endpoint instance type serving a model of a GPU-only format (``format_of``:
    model -> its format, for the texts); problems go to ``errors``."""
    format_of = format_of or {}
    version = rel.version
    jobs: dict[str, GpuJob] = {}
    for t, (model, ep) in sorted(types.items()):
        info = tables.instance_type_info(t)
        if info is None:
            errors.append(
                TritonValidationError(
                    "NoGpuBuildPath",
                    prop=f"endpoints[{ep}].instance_types",
                    value=t,
                    problem=f"has no GPU, so {format_of.get(model, 'tensorrt')} model '{model}' has nowhere to run",
                    allowed=f"a GPU instance type ({', '.join(f'ml.{f}' for f in tables.gpu_families())})",
                    fix=f"serve the {format_of.get(model, 'tensorrt')} model on a GPU instance type, or use format "
                    f"{' or '.join(formats.where(gpu_only=False, runs_onnx=True))} for a CPU endpoint",
                    path=source,
                )
            )
            continue
        min_cc = rel.min_compute_capability.value
        if min_cc and float(info.compute_capability) < float(min_cc):
            errors.append(
                TritonValidationError(
                    "GpuBelowRelease",
                    prop=f"endpoints[{ep}].instance_types",
                    value=t,
                    problem=f"has {info.gpu} (compute capability {info.compute_capability}) but Triton "
                    f"{version} needs at least {min_cc}",
                    allowed=f"GPUs with compute capability >= {min_cc}",
                    fix="choose a newer GPU instance type or an older triton_version",
                    path=source,
                )
            )
            continue
        try:
            jobs[t] = _job_for(t, info.gpu, opts)
        except TritonValidationError as exc:
            errors.append(exc.at(source))
    return jobs


def _tensorrt_errors(
    trt: str | None, opts: GpuBuildOptions, version: str, source: str
) -> list[TritonValidationError]:
    errors: list[TritonValidationError] = []
    if not trt:
        errors.append(
            TritonValidationError(
                "TensorRtVersionUnknown",
                prop="triton_version",
                value=version,
                problem="has no known TensorRT version, so a plan cannot be pinned to it",
                allowed="releases with a TensorRT version in triton-releases.json",
                fix="choose another triton_version, or add the release's TensorRT version to the table",
                path=source,
            )
        )
    elif opts.tensorrt_version and opts.tensorrt_version != trt:
        errors.append(
            TritonValidationError(
                "TensorRtVersionMismatch",
                prop="gpu_build.tensorrt_version",
                value=opts.tensorrt_version,
                problem=f"differs from TensorRT {trt} of Triton {version}, the server that loads the plan",
                allowed=trt,
                fix=f"pin tensorrt=={trt} in the build image (leave tensorrt_version unset) or change triton_version",
                path=source,
            )
        )
    return errors


def gpu_build_targets(
    declaration: Mapping[str, Any] | RawDeclaration,
    *,
    options: GpuBuildOptions | None = None,
    source: str = "models.yaml",
) -> GpuBuildTarget | None:
    """The GPU job of the declaration: its TensorRT models' build and the GPU check of its GPU-placed
    models (``options.gpu_check``, default on), or None when it has neither.

    With TensorRT models, the job runs on their endpoints' GPU model. Validates eagerly and raises every
    problem at once: a TensorRT model no endpoint serves, an instance type with no GPU or no GPU job, a
    GPU below the release's minimum compute capability, models on several GPU models (one job per
    pipeline), a release whose TensorRT version is unknown, and a build job (forced kind, compute type or
    TensorRT pin) that differs from the endpoint's side.

    Without TensorRT models, the GPU-placed models' endpoints choose the job by the same rule (the first
    GPU instance type, sorted, with a GPU job and the release's compute capability); where none serves
    them on such a type there is nothing to check them on and the result is None.
    """
    opts = options or GpuBuildOptions()
    view = declaration if isinstance(declaration, RawDeclaration) else RawDeclaration(declaration)
    models = gpu_only_models(view)
    checks = tuple(gpu_placed_models(view)) if opts.gpu_check else ()
    if not models:
        return _check_only_target(view, checks, opts, source)
    version = view.triton_version or tables.DEFAULT_TRITON_VERSION
    errors: list[TritonValidationError] = []
    types: dict[str, tuple[str, str]] = {}  # instance type -> (model, endpoint)
    endpoints: set[str] = set()
    format_of = {str(m.get("name")): str(m.get("format")) for m in view.models}
    for model in models:
        served = view.serving(model)
        if not served:
            errors.append(
                TritonValidationError(
                    "TensorRtModelNotServed",
                    prop="models[].name",
                    value=model,
                    problem=f"is a {format_of[model]} model that no endpoint serves, so no GPU model is known to "
                    "build it on",
                    allowed="a model listed in an endpoint's models (directly or as an ensemble step)",
                    fix="add it to an endpoint or remove it",
                    path=source,
                )
            )
        for ep, its in served.items():
            endpoints.add(ep)
            for t in its:
                types.setdefault(t, (model, ep))
    try:
        rel = tables.release(version)
    except TritonValidationError as exc:
        raise exc.at(f"{source}: triton_version") from None
    trt = rel.tensorrt.value
    jobs = _jobs_for_types(types, rel, opts, source, errors, format_of)
    gpus = sorted({j.gpu for j in jobs.values()})
    if len(gpus) > 1:
        errors.append(
            TritonValidationError(
                "TensorRtOnSeveralGpuModels",
                prop="endpoints[].instance_types",
                value=sorted(jobs),
                problem=f"put the tensorrt models on several GPU models ({', '.join(gpus)}); a pipeline "
                "builds plans on one GPU model",
                allowed="tensorrt models served on instance types of one GPU model",
                fix="serve every tensorrt model on one GPU family, or use format onnx on the others",
                path=source,
            )
        )
    errors += _tensorrt_errors(trt, opts, version, source)
    raise_all(errors)
    if not jobs:
        return None
    first = jobs[sorted(jobs)[0]]
    info = tables.instance_type_info(first.instance_type)
    assert info is not None and trt is not None
    return GpuBuildTarget(
        job=first,
        triton_version=version,
        tensorrt_version=trt,
        sm=info.sm,
        models=tuple(models),
        endpoints=tuple(sorted(endpoints)),
        check_models=checks,
        note=_check_note(view, checks, first),
    )


def _check_only_target(
    view: RawDeclaration, checks: tuple[str, ...], opts: GpuBuildOptions, source: str
) -> GpuBuildTarget | None:
    """The GPU job of a declaration without TensorRT models: the GPU check only (None: nothing to check)."""
    if not checks:
        return None
    version = view.triton_version or tables.DEFAULT_TRITON_VERSION
    try:
        rel = tables.release(version)
    except TritonValidationError as exc:
        raise exc.at(f"{source}: triton_version") from None
    trt = rel.tensorrt.value
    try:
        job, endpoints = _check_job(view, list(checks), rel, opts)
    except TritonValidationError as exc:
        raise exc.at(source) from None
    raise_all(_tensorrt_errors(trt, opts, version, source) if opts.tensorrt_version else [])
    if job is None:
        return None
    info = tables.instance_type_info(job.instance_type)
    assert info is not None
    return GpuBuildTarget(
        job=job,
        triton_version=version,
        tensorrt_version=trt or "",
        sm=info.sm,
        models=(),
        endpoints=tuple(endpoints),
        check_models=checks,
        note=_check_note(view, checks, job),
    )


def _job_for(instance_type: str, gpu: str, opts: GpuBuildOptions) -> GpuJob:
    if opts.codebuild_compute_type:
        cb_gpu = codebuild_gpu(opts.codebuild_compute_type)
        if cb_gpu != gpu:
            raise TritonValidationError(
                "GpuModelMismatch",
                prop="gpu_build.codebuild_compute_type",
                value=opts.codebuild_compute_type,
                problem=f"builds on {cb_gpu or 'no GPU'} but endpoint type {instance_type} runs {gpu}; "
                "a plan only loads on the GPU model it was built on",
                allowed=", ".join(
                    j.codebuild_compute_type or "" for j in job_kinds(instance_type) if j.kind == CODEBUILD
                )
                or "none for this type (use kind processing or training)",
                fix="leave codebuild_compute_type unset to build on the endpoint's own GPU model",
            )
        return GpuJob(
            kind=CODEBUILD,
            instance_type=instance_type,
            gpu=gpu,
            codebuild_compute_type=opts.codebuild_compute_type,
        )
    if opts.kind is not None and opts.kind not in JOB_KINDS:
        raise TritonValidationError(
            "UnknownGpuJobKind",
            prop="gpu_build.kind",
            value=opts.kind,
            problem="is not a GPU build job kind",
            allowed=", ".join(JOB_KINDS),
            fix="choose one of the kinds, or leave it unset",
        )
    return job_kind(instance_type, prefer=opts.kind)


def job_host_driver(kind: str) -> int | None:
    """The NVIDIA driver branch of a GPU build job host of ``kind``; None where no source states it."""
    value = gpu_build_table()["job_host_drivers"].get(kind)
    return None if value is None else int(value)


def job_host_warning(target: GpuBuildTarget) -> str | None:
    """Why the job host's driver is not established for the target's release (None when it is).

    The jobs have no AMI knob; the rule is ``config.gpu_hosts.runs_on`` (the release's CUDA against the
    host's driver, or confirmed forward compatibility)."""
    cuda = gpu_hosts.release_cuda(target.triton_version)
    driver = job_host_driver(target.job.kind)
    job = target.job
    where = (
        f"the CodeBuild GPU host ({job.codebuild_compute_type}, {job.gpu})"
        if job.kind == CODEBUILD
        else f"the {job.kind} job host ({job.instance_type})"
    )
    if cuda is not None and driver is not None:
        verdict, why = gpu_hosts.runs_on(target.triton_version, cuda, driver)
        if verdict == "runs":
            return None
        reason = why
    else:
        reason = "no primary source states its NVIDIA driver" if cuda else "the release's CUDA is unknown"
    return (
        f"{where}: whether its driver runs Triton {target.triton_version} (CUDA {cuda or 'unknown'}) is not "
        f"established ({reason}; facts read {gpu_hosts.facts_read()}). The job runs the build through the NGC "
        "entrypoint (CUDA forward compatibility), logs the driver (nvidia-smi) and records it in each "
        "plan.json; if the job fails with 'CUDA driver version is insufficient', choose another GPU build kind"
    )
