"""The pure checks of the built models against the endpoint's image and instance type.

GPU placement of the recorded instance groups, release agreement (TensorRT, TorchScript, ONNX against
the image's release), the response cache, and the one-instance rule of sequence-batched models. Like
``checks``: plain values in, ``TritonValidationError`` lists (and warnings) out, no construct.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from cdk_triton.config import formats, residency, tables, target_runtime
from cdk_triton.config.manifest import ModelEntry
from cdk_triton.config.placement import Group, check_gpu_placement, memory_warnings
from cdk_triton.constructs._tokens import is_token
from cdk_triton.constructs.checks.instance import check_instance
from cdk_triton.constructs.errors import catalogued
from cdk_triton.errors import TritonValidationError

if TYPE_CHECKING:
    from cdk_triton.config.gpu_readings import GpuReadings

#: A finding for ``Annotations.add_warning_v2``: (warning id, message).
Warning = tuple[str, str]


def instance_groups_of(entry: ModelEntry) -> list[Group]:
    """The model's ``instance_group`` entries as (kind, count, gpus), as the placement rules read them."""
    return [
        (str(g.get("kind", "KIND_GPU")), int(g.get("count", 1)), [int(x) for x in g.get("gpus", [])])
        for g in entry.config.get("instance_group", []) or []
    ]


def check_gpu_placement_of_models(
    instance_type: str,
    built_models: dict[str, ModelEntry],
    *,
    sizes: dict[str, int] | None = None,
    multi_model: bool = False,
) -> tuple[list[TritonValidationError], list[Warning]]:
    """Each built model's instance groups on ``instance_type``: KIND_GPU on a CPU type and GPU indexes
    beyond its GPUs are errors; the whole repository over one GPU's memory, or over the host's, a warning
    (``sizes``: bytes of one instance per model, see :func:`model_sizes`)."""
    if is_token(instance_type):
        return [], []
    errs: list[TritonValidationError] = []
    for name, entry in built_models.items():
        errs += [
            catalogued(e.code, **_fields(e))
            for e in check_gpu_placement(instance_type, instance_groups_of(entry), model=name)
        ]
    sized = {n: (instance_groups_of(e), (sizes or {}).get(n)) for n, e in built_models.items()}
    return errs, memory_warnings(instance_type, sized, multi_model=multi_model)


class InstanceFit(NamedTuple):
    """What :func:`check_instance_fit` found: errors, the instance's warnings, the placement's, the sizes."""

    errors: list[TritonValidationError]
    warnings: list[tuple[str, str]]
    placement_warnings: list[tuple[str, str]]
    sizes: dict[str, int]


def check_instance_fit(
    instance_type: str, info: tables.InstanceTypeInfo | None, *, triton_version: str | None, artifacts: Any
) -> InstanceFit:
    """An instance type (the endpoint's, or one of its pools) against the built models: release,
    TensorRT plans and mode (``check_instance``), then the GPU placement of the models at their sizes
    on it (``model_sizes``, ``check_gpu_placement_of_models``)."""
    art = artifacts
    multi_model = art.hosting_mode.loads_on_demand
    found, warnings = check_instance(
        instance_type,
        info,
        triton_version=triton_version,
        gpu_architectures=art.gpu_architectures,
        packaged_instance_types=art.packaged_instance_types,
        multi_model=multi_model,
    )
    sizes = model_sizes(art.built_models, readings=art.gpu_readings, instance_type=instance_type)
    placed, placement_warnings = check_gpu_placement_of_models(
        instance_type, art.built_models, sizes=sizes, multi_model=multi_model
    )
    return InstanceFit(found + placed, list(warnings), list(placement_warnings), sizes)


def model_sizes(
    built_models: dict[str, ModelEntry],
    *,
    readings: GpuReadings | None = None,
    instance_type: str | None = None,
) -> dict[str, int]:
    """Bytes one instance of each model holds (``residency.model_bytes``: its GPU reading on
    ``instance_type``'s GPU, else the manifest's ``memory_bytes``, else its files' bytes); models of
    unknown or zero bytes are left out."""
    out = {}
    itype = None if instance_type is None or is_token(instance_type) else instance_type
    for name, e in built_models.items():
        size, _ = residency.model_bytes(e, readings=readings, instance_type=itype)
        if size:
            out[name] = size
    return out


def _fields(e: TritonValidationError) -> dict[str, Any]:
    return {"prop": e.prop, "value": e.value, "problem": e.problem, "allowed": e.allowed, "fix": e.fix}


def check_release_agreement(
    triton_version: str | None,
    built_models: dict[str, ModelEntry],
    *,
    tool_versions: dict[str, str],
    built_for: str | None,
) -> tuple[list[TritonValidationError], list[Warning]]:
    """Artifacts against the image's release: a TensorRT plan from another TensorRT, TorchScript saved
    by a newer torch than the release's libtorch (when confirmed), an ONNX model whose recorded opset or
    IR version is above the image's ONNX Runtime limits are errors; an ONNX model of a manifest without
    that record, built for a release whose ONNX Runtime reads more than the image's, is a warning.
    Portable artifacts (within the image's limits, or built for the same or an older release) pass."""
    if triton_version is None:
        return [], []
    try:
        rel = tables.release(triton_version)
    except TritonValidationError:
        return [], []
    errs: list[TritonValidationError] = []
    warnings: list[Warning] = []
    image = f"sagemaker-tritonserver:{triton_version}-py3"
    for name, entry in built_models.items():
        row = formats.FORMATS.get(entry.format)
        fact = row.release_fact if row else None  # the release fact giving the format's backend version
        trt = rel.tensorrt.value
        if fact == "tensorrt" and entry.tensorrt_version and trt:  # noqa: SIM102
            if entry.tensorrt_version.split(".")[:3] != trt.split(".")[:3]:
                errs.append(
                    catalogued(
                        "TensorRTVersionMismatch",
                        prop="image",
                        value=image,
                        problem=f"ships TensorRT {rel.tensorrt.value}, and model '{name}' is a TensorRT "
                        f"plan built with TensorRT {entry.tensorrt_version} (plans load only in the "
                        "TensorRT that built them)",
                        allowed=f"an image whose TensorRT is {entry.tensorrt_version}",
                        fix=f"rebuild the plan for triton_version {triton_version}, or deploy the image "
                        "the build targeted",
                    )
                )
        torch = tool_versions.get("torch")
        libtorch = rel.libtorch
        checked = _target_runtime(name, entry, rel, tool_versions)
        warnings += checked[1]
        if checked[0]:  # loaded and matched in this release's own runtime at build
            continue
        if fact == "libtorch" and torch and libtorch.value and libtorch.confirmed:  # noqa: SIM102
            if tables.is_newer(tables.minor(torch) or "", tables.minor(libtorch.value) or ""):
                errs.append(
                    catalogued(
                        "TorchScriptTooNew",
                        prop="image",
                        value=image,
                        problem=f"ships libtorch {libtorch.value}, and model '{name}' was saved by torch "
                        f"{torch}",
                        allowed=f"TorchScript saved by torch {tables.minor(libtorch.value)} or older",
                        fix="export with the torch of the target release, or deploy a newer image",
                    )
                )
        if fact == "onnxruntime" and (entry.onnx_opset is not None or entry.onnx_ir_version is not None):
            errs += _onnx_too_new(name, entry, rel, image)
        elif fact == "onnxruntime" and built_for and built_for != triton_version:
            warnings += _onnx_warning(name, rel, built_for, image)  # a manifest without the record
    return errs, warnings


def _target_runtime(
    name: str, entry: ModelEntry, rel: tables.TritonRelease, tool_versions: dict[str, str]
) -> tuple[bool, list[Warning]]:
    """The build's release-runtime record of one model against the image's release: (passed in the
    image's own runtime version, the warnings to show). A record of another runtime version than the
    image's (a manifest built for another release) is not a pass; skipped / unavailable records warn
    with the may-not-load text and the reason (``config.target_runtime.display``)."""
    check = entry.target_runtime
    if check is None:
        return False, []
    image_version = getattr(rel, check.runtime).value if hasattr(rel, check.runtime) else None
    if check.status == target_runtime.PASSED:
        if image_version == check.version:
            return True, []
        return False, [
            (
                "cdk-triton:TargetRuntimeNotChecked",
                f"model '{name}' was checked in {check.runtime} {check.version} at build; "
                f"sagemaker-tritonserver:{rel.version}-py3 ships {check.runtime} {image_version}: rebuild with "
                f"triton_version {rel.version} so the check runs in that runtime",
            )
        ]
    shown = target_runtime.display(name, check, triton_version=rel.version, tool_versions=tool_versions)
    if shown is None or shown[0] != "warning":
        return False, []
    return False, [("cdk-triton:TargetRuntimeNotChecked", shown[1])]


def _onnx_too_new(
    name: str, entry: ModelEntry, rel: tables.TritonRelease, image: str
) -> list[TritonValidationError]:
    """An ONNX model whose recorded opset or IR version is above what the image's ONNX Runtime reads."""
    over = [
        f"{what} {have} > {limit}"
        for what, have, limit in (
            ("opset", entry.onnx_opset, rel.onnx_max_opset),
            ("IR", entry.onnx_ir_version, rel.onnx_max_ir_version),
        )
        if have is not None and limit is not None and have > limit
    ]
    if not over:
        return []
    return [
        catalogued(
            "OnnxTooNewForImage",
            prop="image",
            value=image,
            problem=f"ships ONNX Runtime {rel.onnxruntime.value} (opset <= {rel.onnx_max_opset}, IR <= "
            f"{rel.onnx_max_ir_version}), and model '{name}' is ONNX opset {entry.onnx_opset}, IR "
            f"{entry.onnx_ir_version} ({', '.join(over)}): it would fail to load",
            allowed=f"ONNX models within opset {rel.onnx_max_opset} and IR {rel.onnx_max_ir_version}",
            fix=f"rebuild with triton_version {rel.version} (the build exports an opset that release reads), "
            "or deploy the image the build targeted",
        )
    ]


def _onnx_warning(name: str, rel: tables.TritonRelease, built_for: str, image: str) -> list[Warning]:
    try:
        target = tables.release(built_for)
    except TritonValidationError:
        return []
    limits = (rel.onnx_max_opset or 0, rel.onnx_max_ir_version or 0)
    if limits >= (target.onnx_max_opset or 0, target.onnx_max_ir_version or 0):
        return []
    return [
        (
            "cdk-triton:OnnxMayNotLoad",
            f"model '{name}' was built for Triton {built_for} (ONNX opset <= {target.onnx_max_opset}, IR <= "
            f"{target.onnx_max_ir_version}); {image} ships ONNX Runtime {rel.onnxruntime.value} (opset <= "
            f"{rel.onnx_max_opset}, IR <= {rel.onnx_max_ir_version}): rebuild with triton_version "
            f"{rel.version} unless the model's opset is within that",
        )
    ]


def check_response_cache(
    built_models: dict[str, ModelEntry], *, cache_configured: bool
) -> list[TritonValidationError]:
    """Models with ``response_cache`` enabled need a cache on the server (ServerOptions)."""
    cached = sorted(
        n for n, e in built_models.items() if (e.config.get("response_cache") or {}).get("enable")
    )
    if not cached or cache_configured:
        return []
    return [
        catalogued(
            "ResponseCacheNotConfigured",
            prop="server_options.response_cache_byte_size",
            value=None,
            problem=f"is unset, and {', '.join(cached)} enable response_cache: the server has no cache, "
            "so every request would run uncached",
            allowed="a cache size in bytes when a model sets response_cache: true",
            fix="pass server_options=ServerOptions(response_cache_byte_size=...) or drop response_cache",
        )
    ]


def check_sequence_batching_instances(
    built_models: dict[str, ModelEntry], count: int, *, prop: str
) -> list[TritonValidationError]:
    """A stateful model needs every request of a sequence on one instance: at most one behind the endpoint.

    SageMaker routes each request to any instance; its stateful sessions need session ids that the
    container creates, and Triton's SageMaker server creates none. Several Triton model instances
    inside the one server are fine (the sequence batcher routes within it).
    """
    stateful = sorted(n for n, e in built_models.items() if e.sequence_batching)
    if not stateful or is_token(count) or count <= 1:
        return []
    return [
        catalogued(
            "SequenceBatchingInstances",
            prop=prop,
            value=count,
            problem=f"lets SageMaker spread the requests of a sequence of {', '.join(stateful)} (sequence "
            "batching: state per correlation id) over several instances, and each instance keeps its own "
            "state; SageMaker's stateful sessions would need session ids, which Triton's SageMaker server "
            "does not create",
            allowed="1 (several Triton model instances inside the one server are fine)",
            fix=f"use {prop}=1 and scale the model with instance_groups count, or serve stateless models only",
        )
    ]


def check_model_source(
    model_path: str | None, *, artifacts: bool, props: Iterable[str]
) -> list[TritonValidationError]:
    """An endpoint's model: either a model (``model_path``: its construct path), or the props of the model
    to define (``artifacts`` at least): not both, not neither."""
    given = sorted([*(["artifacts"] if artifacts else []), *props])
    if model_path is not None and given:
        return [
            catalogued(
                "ModelGivenTwice",
                prop=", ".join(given),
                value=model_path,
                problem="are props of the model, and model= gives a model already",
                allowed="either model=TritonModel(...) or the model's props (artifacts=..., image=..., ...)",
                fix=f"pass {', '.join(given)} to the TritonModel you give, or drop model= and let the "
                "endpoint define its model",
            )
        ]
    if model_path is None and not artifacts:
        return [
            catalogued(
                "ModelRequired",
                prop="model/artifacts",
                value=None,
                problem="are both unset: the endpoint has no model to serve",
                allowed="model=TritonModel(...), or artifacts=ModelArtifacts.from_manifest(...) with the "
                "model's other props",
                fix="pass artifacts=ModelArtifacts.from_manifest(path, key), or model=TritonModel(...)",
            )
        ]
    return []
