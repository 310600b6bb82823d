"""The tensorrt format's exporter: TensorRT plans from the ONNX export, with the tensorrt Python
builder (GPU only), plus the declared prebuilt plans; and the GPU checks of preflight.

The pure parts (optimization profiles, builder flags, plan metadata, the architecture check) run
anywhere and are unit-tested on CPU; :func:`build_plan` needs CUDA and the ``tensorrt`` package
matching the target release (``pip install cdk-triton[tensorrt]`` or build/Dockerfile).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cdk_triton.builder.context import BuildContext, Exported
from cdk_triton.builder.export import artifact
from cdk_triton.builder.export import onnx as onnx_export
from cdk_triton.builder.pbtxt import IoTensor
from cdk_triton.builder.reference import Runner
from cdk_triton.config import tables
from cdk_triton.config.declaration import BuildSpec, ModelSpec
from cdk_triton.errors import BuildError

METADATA_FILE = "plan.json"


@dataclass(frozen=True, kw_only=True, slots=True)
class Profile:
    """One input's optimization profile shapes (with the batch dim when batching)."""

    name: str
    min: tuple[int, ...]
    opt: tuple[int, ...]
    max: tuple[int, ...]


def profiles(spec: ModelSpec, inputs: list[IoTensor]) -> list[Profile]:
    """One optimization profile: min/opt/max per input. Batch: 1 / opt batch / max_batch_size; each
    dynamic dim: its declared ``shape_range`` (trtexec's --minShapes/--optShapes/--maxShapes)."""
    out = []
    for t, declared in zip(inputs, spec.inputs, strict=True):
        if declared.dynamic_axes and declared.shape_range is None:
            raise BuildError(
                f"model '{spec.name}': input '{declared.name}' has the dynamic shape {list(declared.shape)} but "
                "no shape_range; a TensorRT plan needs the min/opt/max size of each dynamic dim: declare "
                "shape_range: {min: [...], opt: [...], max: [...]}",
                code="MissingShapeRange",
            )
        r = declared.shape_range
        lo, mid, hi = (r.min, r.opt, r.max) if r else ((declared.concrete_shape(),) * 3)
        mins, opts, maxs = (
            tuple(d if d != -1 else s for d, s in zip(t.dims, sizes, strict=True)) for sizes in (lo, mid, hi)
        )
        if spec.max_batch_size > 0:
            mbs = spec.max_batch_size
            pref = spec.dynamic_batching.preferred_batch_sizes if spec.dynamic_batching else ()
            opt = spec.tensorrt.opt_batch_size or (max(pref) if pref else mbs)
            opt = min(max(opt, 1), mbs)
            out.append(Profile(name=t.name, min=(1, *mins), opt=(opt, *opts), max=(mbs, *maxs)))
        else:
            out.append(Profile(name=t.name, min=mins, opt=opts, max=maxs))
    return out


def builder_flags(precision: str) -> tuple[list[str], list[str]]:
    """(flags to set, flags to clear) as trt.BuilderFlag names for a precision."""
    table = {
        "fp32": ([], ["TF32"]),
        "tf32": (["TF32"], []),
        "fp16": (["FP16"], []),
        "int8": (["INT8", "FP16"], []),
    }
    if precision not in table:
        raise BuildError(f"unknown TensorRT precision {precision!r}", code="TensorRTBuildFailed")
    return table[precision]


def plan_metadata(
    *,
    tensorrt_version: str,
    compute_capability: tuple[int, int],
    gpu_name: str,
    precision: str,
    profile_list: list[Profile],
    host_driver: str | None = None,
) -> dict[str, Any]:
    """What is recorded beside a plan (``plan.json``): it only loads on this architecture and TensorRT.

    ``host_driver``: the NVIDIA driver of the machine that built it (left out when unknown)."""
    meta: dict[str, Any] = {
        "tensorrt_version": tensorrt_version,
        "gpu_architecture": f"sm{compute_capability[0]}{compute_capability[1]}",
        "gpu_name": gpu_name,
        "precision": precision,
        "profiles": [asdict(p) for p in profile_list],
    }
    if host_driver is not None:
        meta["host_driver"] = host_driver
    return meta


def host_driver_version(proc_file: str = "/proc/driver/nvidia/version") -> str | None:
    """The NVIDIA kernel module's version (the host driver, e.g. ``535.54.03``); None without one."""
    try:
        text = Path(proc_file).read_text()
    except OSError:
        return None
    match = re.search(r"Kernel Module(?: for [^ ]+)?\s+(\d+\.\d+(?:\.\d+)?)", text)
    return match.group(1) if match else None


def check_plan_architecture(
    metadata: dict[str, Any],
    instance_types: list[str] | tuple[str, ...],
    *,
    model: str,
    triton_version: str | None = None,
) -> None:
    """Refuse to package a plan for an instance type whose GPU architecture (or TensorRT) differs."""
    arch = metadata.get("gpu_architecture")
    for it in instance_types:
        info = tables.instance_type_info(it)
        if info is None:
            raise BuildError(
                f"TensorRT plan of model '{model}' cannot run on {it}: no GPU facts for it in the instance table; "
                "plans need a GPU instance type such as ml.g5.xlarge",
                code="PlanArchitectureMismatch",
            )
        if info.sm != arch:
            raise BuildError(
                f"TensorRT plan of model '{model}' was built for {arch} but {it} has {info.gpu} ({info.sm}); "
                f"build it on a {info.sm} GPU (e.g. CodeBuild/EC2 with {info.gpu}), or use format onnx",
                code="PlanArchitectureMismatch",
            )
    if triton_version:
        want = tables.release(triton_version).tensorrt.value
        have = metadata.get("tensorrt_version")
        if want and have and want.split(".")[:2] != str(have).split(".")[:2]:
            raise BuildError(
                f"TensorRT plan of model '{model}' was built with TensorRT {have} but Triton {triton_version} "
                f"ships {want}; build inside build/Dockerfile (tensorrt=={want})",
                code="PlanArchitectureMismatch",
            )


#: files an NVIDIA driver creates (Linux; /dev/dxg under WSL)
DRIVER_FILES = ("/proc/driver/nvidia/version", "/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg")


def nvidia_driver_present() -> bool:
    """Whether this machine may have a CUDA GPU (an NVIDIA driver's files exist): a cheap check
    before importing torch."""
    return any(os.path.exists(p) for p in DRIVER_FILES)


def require_tensorrt() -> tuple[Any, tuple[int, int], str]:
    """Import tensorrt and find a CUDA GPU, else BuildError(TensorRTUnavailable).

    Without an NVIDIA driver on the machine, nothing is imported (torch takes seconds)."""
    has_gpu = False
    if nvidia_driver_present():
        try:
            import torch

            has_gpu = bool(torch.cuda.is_available())
        except Exception:
            has_gpu = False
    if not has_gpu:
        raise BuildError(
            "TensorRT plans need a CUDA GPU of the target architecture and none is visible here; build on a GPU "
            "(build/Dockerfile), declare the model optional: true to skip it, or use format onnx",
            code="TensorRTUnavailable",
        )
    try:
        import tensorrt as trt
    except ImportError as exc:
        raise BuildError(
            "the tensorrt package is not installed: pip install 'cdk-triton[tensorrt]' (tensorrt matching the "
            "target release) or build inside build/Dockerfile",
            code="TensorRTUnavailable",
        ) from exc
    import torch

    return trt, tuple(torch.cuda.get_device_capability(0)), torch.cuda.get_device_name(0)  # type: ignore[return-value]


def build_plan(
    onnx_path: Path,
    spec: ModelSpec,
    inputs: list[IoTensor],
    out_file: Path,
    *,
    timing_cache: Path | None = None,
) -> dict[str, Any]:
    """Build a serialized engine from the ONNX file; write it and ``plan.json`` beside it."""
    trt, cc, gpu_name = require_tensorrt()
    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network(0)
    parser = trt.OnnxParser(network, logger)
    if not parser.parse_from_file(str(onnx_path)):
        errors = "; ".join(str(parser.get_error(i)) for i in range(parser.num_errors))
        raise BuildError(
            f"model '{spec.name}': TensorRT cannot parse the ONNX file: {errors}", code="TensorRTBuildFailed"
        )
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, spec.tensorrt.workspace_mib << 20)
    on, off = builder_flags(spec.tensorrt.precision)
    for f in on:
        config.set_flag(getattr(trt.BuilderFlag, f))
    for f in off:
        config.clear_flag(getattr(trt.BuilderFlag, f))
    profile = builder.create_optimization_profile()
    plist = profiles(spec, inputs)
    for p in plist:
        profile.set_shape(p.name, p.min, p.opt, p.max)
    config.add_optimization_profile(profile)
    cache = None
    if timing_cache is not None:
        blob = timing_cache.read_bytes() if timing_cache.is_file() else b""
        cache = config.create_timing_cache(blob)
        config.set_timing_cache(cache, ignore_mismatch=False)
    engine = builder.build_serialized_network(network, config)
    if engine is None:
        raise BuildError(
            f"model '{spec.name}': the TensorRT builder returned no engine", code="TensorRTBuildFailed"
        )
    out_file.write_bytes(bytes(engine))
    if cache is not None and timing_cache is not None:
        tmp = timing_cache.with_suffix(".tmp")
        tmp.write_bytes(bytes(cache.serialize()))
        tmp.replace(timing_cache)
    meta = plan_metadata(
        tensorrt_version=trt.__version__,
        compute_capability=cc,
        gpu_name=gpu_name,
        precision=spec.tensorrt.precision,
        profile_list=plist,
        host_driver=host_driver_version(),
    )
    (out_file.parent / METADATA_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return meta


def load_plan_dir(directory: Path, *, model: str) -> tuple[Path, dict[str, Any]]:
    """A plan built elsewhere: ``model.plan`` + the ``plan.json`` written beside it."""
    plan, meta_file = directory / "model.plan", directory / METADATA_FILE
    if not plan.is_file() or not meta_file.is_file():
        raise BuildError(
            f"model '{model}': {directory} needs model.plan and {METADATA_FILE} (as a GPU build writes them)",
            code="PlanArchitectureMismatch",
        )
    meta: dict[str, Any] = json.loads(meta_file.read_text("utf-8"))
    for key in ("gpu_architecture", "tensorrt_version"):
        if not meta.get(key):
            raise BuildError(
                f"model '{model}': {meta_file} has no '{key}'; only plans recorded by cdk-triton can be packaged",
                code="PlanArchitectureMismatch",
            )
    return plan, meta


def compute_capability(arch: str) -> str:
    """``sm86`` -> ``8.6`` (the key of ``cc_model_filenames``)."""
    digits = arch.removeprefix("sm")
    return f"{digits[:-1]}.{digits[-1]}"


def plan_layout(metas: list[dict[str, Any]], *, model: str) -> tuple[list[str], dict[str, str] | None]:
    """File names of the plans inside ``1/`` and the ``cc_model_filenames`` map (None for one plan)."""
    archs = [m["gpu_architecture"] for m in metas]
    dup = sorted({a for a in archs if archs.count(a) > 1})
    if dup:
        raise BuildError(
            f"model '{model}' has several plans for {', '.join(dup)}; keep one per GPU architecture",
            code="PlanArchitectureMismatch",
        )
    if len(metas) == 1:
        return ["model.plan"], None
    names = [f"model_{a}.plan" for a in archs]
    return names, {compute_capability(a): n for a, n in zip(archs, names, strict=True)}


def check_plans(
    metas: list[dict[str, Any]],
    instance_types: list[str] | tuple[str, ...],
    *,
    model: str,
    triton_version: str | None = None,
    max_batch_size: int = 0,
) -> None:
    """Every instance type needs a plan of its GPU architecture; every plan the release's TensorRT
    and a profile reaching max_batch_size."""
    by_arch = {m["gpu_architecture"]: m for m in metas}
    for it in instance_types:
        info = tables.instance_type_info(it)
        if info is not None and info.sm in by_arch:
            check_plan_architecture(by_arch[info.sm], [it], model=model, triton_version=triton_version)
        else:
            check_plan_architecture(metas[0], [it], model=model, triton_version=triton_version)
    for meta in metas:
        for prof in meta.get("profiles", []):
            if max_batch_size > 0 and prof.get("max") and int(prof["max"][0]) < max_batch_size:
                raise BuildError(
                    f"TensorRT plan of model '{model}' ({meta['gpu_architecture']}) accepts batches up to "
                    f"{prof['max'][0]} for '{prof['name']}' but max_batch_size is {max_batch_size}; rebuild the plan",
                    code="PlanProfileMismatch",
                )


# ---------------------------------------------------------------------------- the Exporter protocol

warnings = artifact.no_warnings


def skip_reason(spec: BuildSpec, m: ModelSpec) -> str | None:
    """Why an optional TensorRT model that must be built is skipped here (None when it can be built):
    no GPU or tensorrt, or a GPU of another architecture than the endpoints' (a plan is specific to
    the GPU it is built on; a cached plan is checked against the endpoints when it is packaged)."""
    skip = None
    try:
        _, cc, gpu_name = require_tensorrt()
        mismatch = local_arch_mismatch(spec, m, f"sm{cc[0]}{cc[1]}", gpu_name)
        if mismatch and not m.tensorrt.plans:
            if not m.optional:
                raise BuildError(mismatch, code="PlanArchitectureMismatch")
            skip = mismatch
    except BuildError as exc:
        if exc.code != "TensorRTUnavailable":
            raise
        if not m.tensorrt.plans:
            if not m.optional:
                raise
            skip = str(exc)
    return skip


def check_source(spec: BuildSpec, m: ModelSpec) -> None:
    """Nothing beyond the source checks every format gets (prebuilt plans: :func:`check_prebuilt_plans`)."""


def local_arch_mismatch(spec: BuildSpec, m: ModelSpec, arch: str, gpu_name: str) -> str | None:
    """Why a plan built on this GPU cannot serve the endpoints that contain ``m`` (None if it can)."""
    for ep in spec.endpoints:
        if not any(m.name in spec.closure(r) for r in ep.models):
            continue
        for it in ep.instance_types:
            info = tables.instance_type_info(it)
            if info is None or info.sm != arch:
                want = f"{info.gpu} ({info.sm})" if info else "no known GPU"
                return (
                    f"model '{m.name}': this GPU is {gpu_name} ({arch}) but endpoint '{ep.name}' runs on {it} "
                    f"with {want}; build the plan on that GPU, or add prebuilt plans (tensorrt.plans)"
                )
    return None


def check_prebuilt_plans(spec: BuildSpec, m: ModelSpec) -> None:
    """Refuse prebuilt plans for another GPU before anything is written."""
    metas = [load_plan_dir(spec.resolve_path(d), model=m.name)[1] for d in m.tensorrt.plans]
    plan_layout(metas, model=m.name)
    for ep in spec.endpoints:
        if any(m.name in spec.closure(r) for r in ep.models):
            check_plans(
                metas,
                ep.instance_types,
                model=m.name,
                triton_version=spec.triton_version,
                max_batch_size=m.max_batch_size,
            )


def export_model(ctx: BuildContext, m: ModelSpec, tmp: Path) -> Exported:
    """Export to ONNX beside ``tmp``, check its parity, then build the plan on this GPU (when there
    is one) and add the declared prebuilt plans."""
    return artifact.export_model(ctx, m, tmp, write=_write, after=_after)


def _write(ctx: BuildContext, m: ModelSpec, src: artifact.Source) -> artifact.Written:
    onnx_file = src.tmp.parent / f"{src.tmp.name}.onnx"
    return onnx_export.write_onnx(ctx, m, src, onnx_file, what="the ONNX export feeding TensorRT")


def _after(ctx: BuildContext, m: ModelSpec, written: artifact.Written, vdir: Path) -> artifact.After:
    assert written.onnx_file is not None
    cc_files, plans = _plans(ctx, m, written.onnx_file, written.inputs, vdir)
    written.onnx_file.unlink(missing_ok=True)
    return artifact.After(cc_model_filenames=cc_files, plans=plans, parity=False)  # parity ran on the ONNX


def _plans(
    ctx: BuildContext, m: ModelSpec, onnx_file: Path, ins: list[IoTensor], vdir: Path
) -> tuple[dict[str, str] | None, list[dict[str, Any]]]:
    """Build a plan on this GPU (when there is one) and add the declared prebuilt plans.

    Returns (cc_model_filenames, the metadata of every plan)."""
    plans: list[tuple[Path, dict[str, Any]]] = []
    try:
        require_tensorrt()
        has_gpu = True
    except BuildError:
        if not m.tensorrt.plans:
            raise
        has_gpu = False
    if has_gpu:
        built = onnx_file.with_suffix(".plan")
        cache_file = Path(m.tensorrt.timing_cache) if m.tensorrt.timing_cache else ctx.out / "tensorrt.cache"
        meta = build_plan(onnx_file, m, ins, built, timing_cache=cache_file)
        (built.parent / METADATA_FILE).unlink(missing_ok=True)
        plans.append((built, meta))
    for d in m.tensorrt.plans:
        plans.append(load_plan_dir(ctx.spec.resolve_path(d), model=m.name))
    names, cc_files = plan_layout([meta for _, meta in plans], model=m.name)
    for (src, meta), name in zip(plans, names, strict=True):
        shutil.copyfile(src, vdir / name)
        stem = name.removesuffix(".plan").replace("model", "plan", 1)
        (vdir / f"{stem}.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    if has_gpu:
        plans[0][0].unlink(missing_ok=True)
    return cc_files, [meta for _, meta in plans]


def artifact_runner(ctx: BuildContext, m: ModelSpec, entry: Path) -> Runner:
    """None: a plan runs only on a GPU (parity ran on the ONNX export)."""
    raise BuildError(f"model '{m.name}': a {m.format} model cannot run on CPU", code="TensorRTUnavailable")
