"""TensorRT plans from the ONNX export, with the tensorrt Python builder (GPU only).

The pure parts (optimization profiles, builder flags, plan metadata, the architecture check) run
anywhere and are unit-tested on CPU; :func:`build_plan` needs CUDA and the ``tensorrt`` package
matching the target release (``pip install cdk-triton[tensorrt]`` or build/Dockerfile).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cdk_triton.builder.pbtxt import IoTensor
from cdk_triton.config import tables
from cdk_triton.config.declaration import ModelSpec
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
) -> dict[str, Any]:
    """What is recorded beside a plan (``plan.json``): it only loads on this architecture and TensorRT."""
    return {
        "tensorrt_version": tensorrt_version,
        "gpu_architecture": f"sm{compute_capability[0]}{compute_capability[1]}",
        "gpu_name": gpu_name,
        "precision": precision,
        "profiles": [asdict(p) for p in profile_list],
    }


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
_DRIVER_FILES = ("/proc/driver/nvidia/version", "/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg")


def nvidia_driver_present() -> bool:
    """Whether this machine may have a CUDA GPU (an NVIDIA driver's files exist): a cheap check
    before importing torch."""
    return any(os.path.exists(p) for p in _DRIVER_FILES)


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
