"""``cdk-triton gpu-check``: on a CUDA host, build a declaration, run every GPU-placed model on the GPU
and write what it measured to the readings report (never into the manifest).

1. build (``run_build``: export, CPU parity, the device-portability check, package) into ``--out``;
2. for each GPU-placed model (``portability.gpu_placed``) of a format the GPU can run here: load its
   built artifact on CUDA (memory after loading), run it at its largest batch (peak allocated,
   reserved, the process's bytes from NVML), then parity at batch 1 and at the largest batch against
   eager on CUDA and on CPU (:mod:`cdk_triton.builder.device_parity`);
3. print measured against manifest figures, list what it could not check, write
   ``<out>/gpu-readings.json`` (the GPU_READINGS schema: a device entry merged by its name).

A parity failure is ``DeviceParityMismatch`` (exit 1) after the report is written. Without CUDA it
refuses with ``NoCudaDevice``. torch, onnxruntime, pynvml are imported inside the functions.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdk_triton.builder import device_parity, portability
from cdk_triton.config import gpu_readings
from cdk_triton.config.declaration import BuildSpec, ModelSpec
from cdk_triton.errors import BuildError

REPORT_KIND = gpu_readings.KIND  # the one reader's format (config/gpu_readings.py)
REPORT_VERSION = gpu_readings.VERSION
REPORT_NAME = "gpu-readings.json"
DEVICE = "cuda:0"


# ---------------------------------------------------------------------------- the readings report


def merge_report(existing: Mapping[str, Any] | None, device: Mapping[str, Any]) -> dict[str, Any]:
    """``existing`` with ``device`` in it: the entry of the same device name replaced, another appended."""
    devices: list[dict[str, Any]] = []
    placed = False
    for d in (existing or {}).get("devices", []):
        if isinstance(d, Mapping) and d.get("name") == device["name"]:
            if not placed:
                devices.append(dict(device))
                placed = True
        else:
            devices.append(dict(d))
    if not placed:
        devices.append(dict(device))
    return {"kind": REPORT_KIND, "version": REPORT_VERSION, "devices": devices}


def write_report(path: Path, device: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``device`` into the report at ``path`` and write it. The existing file and the result are
    read back with the one reader (``config.gpu_readings``): a file of another kind or a malformed entry
    is refused (``GpuReadingsInvalid``) before anything is written."""
    existing = None
    if path.is_file():
        existing = json.loads(path.read_text("utf-8"))
        gpu_readings.readings_from_dict(existing, source=str(path))
    report = merge_report(existing, device)
    gpu_readings.readings_from_dict(report, source=str(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(report, indent=2, sort_keys=False) + "\n", "utf-8")
    tmp.replace(path)
    return report


def _mib(n: int | None) -> str:
    return "-" if n is None else f"{n / 2**20:,.0f}"


def table(device: Mapping[str, Any]) -> str:
    """Measured against manifest figures, one row per model (MiB), with parity."""
    head = (
        "model",
        "format",
        "max batch",
        "manifest",
        "loaded",
        "peak",
        "reserved",
        "process",
        "parity b1/bmax",
    )
    rows = [head]
    for name, r in device.get("models", {}).items():
        par = r.get("parity") or {}
        cells = [
            f"{p['max_abs_diff']:.2g}/{p['tolerance']:.2g} {'ok' if p['ok'] else 'FAIL'}"
            for p in (par.get("batch_1"), par.get("batch_max"))
            if p
        ]
        rows.append(
            (
                name,
                str(r.get("format")),
                str(r.get("max_batch_size")),
                _mib(r.get("manifest_memory_bytes")),
                _mib(r.get("loaded_allocated_bytes")),
                _mib(r.get("peak_allocated_bytes")),
                _mib(r.get("reserved_bytes")),
                _mib(r.get("process_bytes")),
                ", ".join(cells) or "-",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    title = (
        f"{device['name']} (compute capability {device['compute_capability']}, driver {device.get('driver') or '?'}, "
        f"CUDA {device.get('cuda')}, torch {device.get('torch')}); memory in MiB"
    )
    return title + "\n" + "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- the device and NVML


def process_bytes(pid: int | None = None, *, run: Callable[..., Any] = subprocess.run) -> int | None:
    """GPU memory this process uses (all devices), from NVML (pynvml) or ``nvidia-smi``; None if neither."""
    pid = os.getpid() if pid is None else pid
    try:
        import pynvml  # type: ignore[import-not-found]

        pynvml.nvmlInit()
        try:
            total = 0
            for i in range(pynvml.nvmlDeviceGetCount()):
                h = pynvml.nvmlDeviceGetHandleByIndex(i)
                for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h):
                    if p.pid == pid and p.usedGpuMemory:
                        total += int(p.usedGpuMemory)
            return total
        finally:
            pynvml.nvmlShutdown()
    except Exception:
        pass
    out = _nvidia_smi(["--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"], run)
    if out is None:
        return None
    total, found = 0, False
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 2 and parts[0] == str(pid) and parts[1].isdigit():
            total += int(parts[1]) * 2**20  # MiB
            found = True
    return total if found else None


def driver_version(*, run: Callable[..., Any] = subprocess.run) -> str | None:
    """The NVIDIA driver version (pynvml, else nvidia-smi), None if unknown."""
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            v = pynvml.nvmlSystemGetDriverVersion()
            return v.decode() if isinstance(v, bytes) else str(v)
        finally:
            pynvml.nvmlShutdown()
    except Exception:
        pass
    out = _nvidia_smi(["--query-gpu=driver_version", "--format=csv,noheader"], run)
    return (out.splitlines() or [""])[0].strip() or None if out is not None else None


def _nvidia_smi(args: list[str], run: Callable[..., Any]) -> str | None:
    """``nvidia-smi ARGS``'s output; None without the tool or when it fails."""
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        return str(run(["nvidia-smi", *args], capture_output=True, text=True, timeout=30, check=True).stdout)
    except Exception:
        return None


def describe_device(torch: Any, *, now: str | None = None) -> dict[str, Any]:
    """The device entry's header (GPU_READINGS schema), CUDA initialised, ``context_bytes`` measured."""
    props = torch.cuda.get_device_properties(0)
    torch.zeros(1, device=DEVICE)  # CUDA context up
    torch.cuda.synchronize()
    proc = process_bytes()
    return {
        "name": torch.cuda.get_device_name(0),
        "compute_capability": f"{props.major}.{props.minor}",
        "total_memory_bytes": int(props.total_memory),
        "driver": driver_version(),
        "cuda": torch.version.cuda,
        "torch": torch.__version__,
        "measured_at": now or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "context_bytes": None if proc is None else proc - int(torch.cuda.memory_reserved()),
        "models": {},
    }


# ---------------------------------------------------------------------------- one model


@dataclass(kw_only=True, slots=True)
class Outcome:
    """What the check did: the device entry, what it could not check, the parity failures."""

    device: dict[str, Any]
    not_checked: list[str] = field(default_factory=list)
    failures: list[BuildError] = field(default_factory=list)


def measure_model(
    torch: Any,
    spec: BuildSpec,
    m: ModelSpec,
    entry: Path,
    *,
    manifest_bytes: int | None,
    eager: Callable[[], Any] | None,
) -> tuple[dict[str, Any], list[BuildError]]:
    """Load ``m``'s built artifact (``entry``: its model directory) on CUDA, measure it at its largest
    batch, check parity at batch 1 and the largest; the readings entry and the parity failures."""
    artifact = entry / "1" / str(m.row.artifact)
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    base = int(torch.cuda.memory_allocated())
    run, is_torch = _artifact_on_device(torch, m, artifact)
    torch.cuda.synchronize()
    loaded = int(torch.cuda.memory_allocated()) - base
    sizes = device_parity.batches(m)
    outs = {b: run(device_parity.inputs_at(m, b)) for b in reversed(sizes)}  # the largest first
    torch.cuda.synchronize()
    peak = int(torch.cuda.max_memory_allocated()) - base
    reserved = int(torch.cuda.memory_reserved())
    proc = process_bytes()
    del run
    gc.collect()
    torch.cuda.empty_cache()
    cpu_ref = _cpu_reference(spec, m, artifact, eager)
    device_ref = device_parity.device_runner(torch, eager().to(DEVICE), m, DEVICE) if eager else None
    parity: dict[str, Any] = {}
    failures: list[BuildError] = []
    for b in sizes:
        x = device_parity.inputs_at(m, b)
        ref_cpu = cpu_ref(x)
        check = device_parity.compare(m, b, outs[b], device_ref(x) if device_ref else ref_cpu, ref_cpu)
        parity["batch_1" if b <= 1 else "batch_max"] = check.reading()
        if not check.ok:
            failures.append(device_parity.mismatch(m, DEVICE, check))
    if len(sizes) == 1:
        parity["batch_max"] = parity["batch_1"]
    reading = {
        "format": m.format,
        "max_batch_size": m.max_batch_size,
        "manifest_memory_bytes": manifest_bytes,
        "loaded_allocated_bytes": loaded if is_torch else None,
        "peak_allocated_bytes": peak if is_torch else None,
        "reserved_bytes": reserved if is_torch else None,
        "process_bytes": proc,
        "parity": parity,
    }
    return reading, failures


def _artifact_on_device(torch: Any, m: ModelSpec, artifact: Path) -> tuple[device_parity.Runner, bool]:
    """A runner of the artifact on CUDA, and whether torch's allocator holds it: the format module's
    ``device_runner`` (``base.DeviceCheck``; only formats whose row is ``gpu_checkable`` get here)."""
    from cdk_triton.builder.export.base import device_check_of

    return device_check_of(m).device_runner(torch, m, artifact, DEVICE)


def _cpu_reference(
    spec: BuildSpec, m: ModelSpec, artifact: Path, eager: Callable[[], Any] | None
) -> device_parity.Runner:
    """The CPU eager model (a factory), else the artifact itself on CPU (a file source)."""
    from cdk_triton.builder.export.base import file_runner
    from cdk_triton.builder.reference import torch_runner

    if eager is not None:
        return torch_runner(eager(), m)
    return file_runner(m.format, artifact, m)


def can_check(m: ModelSpec) -> str | None:
    """Why ``m`` cannot run on the GPU here (None: it can): its format row says whether it is
    ``gpu_checkable``; the format's module says whether this machine can run it on CUDA."""
    if m.row.gpu_checkable:
        from cdk_triton.builder.export.base import device_check_of

        return device_check_of(m).device_unavailable()
    return m.row.not_gpu_checked or f"{m.format}: nothing of its own runs on a GPU (its steps are checked)"


# ---------------------------------------------------------------------------- the command


def run_check(
    config: str | os.PathLike[str],
    *,
    out: str | os.PathLike[str] | None = None,
    report: str | os.PathLike[str] | None = None,
    build: Callable[..., Any] | None = None,
    torch: Any = None,
    echo: Callable[[str], None] = print,
) -> Outcome:
    """Build ``config`` into ``out``, measure and check every GPU-placed model on CUDA, write the report.

    Raises:
        BuildError: NoCudaDevice before anything is built; DeviceParityMismatch after the report is
            written; any build failure (DevicePinnedExport ...).
    """
    torch = device_parity.require_cuda(torch)
    if build is None:
        from cdk_triton.builder.steps import run_build

        build = run_build
    out_dir = Path(out) if out is not None else Path(config).resolve().parent / "out"
    entries: dict[str, Path] = {}
    specs: dict[str, BuildSpec] = {}

    def keep(ctx: Any) -> None:
        specs["spec"] = ctx.spec
        for n in ctx.built:
            entries[n] = ctx.cache.entry_dir(n, ctx.resolved[n].key)

    t0 = time.perf_counter()
    result = build(config, out_dir=out_dir, progress=False, jobs="auto", on_success=keep)
    echo(f"built {len(entries)} models in {time.perf_counter() - t0:.0f}s into {out_dir}")
    spec = specs["spec"]
    outcome = Outcome(device=describe_device(torch))
    placed = portability.gpu_placed(spec)
    for n in placed:
        m = spec.model(n)
        if n not in entries:
            outcome.not_checked.append(
                f"{n}: not built here ({result.skipped_models.get(n, 'not selected')})"
            )
            continue
        why = can_check(m)
        if why is not None:
            outcome.not_checked.append(f"{n}: {why}")
            continue
        entry = result.manifest.models.get(n)
        eager = _eager_factory(spec, m)
        reading, failures = measure_model(
            torch,
            spec,
            m,
            entries[n],
            manifest_bytes=getattr(entry, "memory_bytes", None),
            eager=eager,
        )
        outcome.device["models"][n] = reading
        outcome.failures += failures
    outcome.not_checked += environment_gaps()
    path = Path(report) if report is not None else out_dir / REPORT_NAME
    write_report(path, outcome.device)
    echo(table(outcome.device))
    if outcome.not_checked:
        echo("not checked here:\n" + "\n".join(f"  - {w}" for w in outcome.not_checked))
    echo(f"readings: {path} (the manifest is unchanged)")
    if outcome.failures:
        if len(outcome.failures) == 1:
            raise outcome.failures[0]
        raise BuildError(" | ".join(str(f) for f in outcome.failures), code="DeviceParityMismatch")
    return outcome


def _eager_factory(spec: BuildSpec, m: ModelSpec) -> Callable[[], Any] | None:
    if m.source is None or not m.source.factory:
        return None
    from cdk_triton.builder.reference import build_eager

    return lambda: build_eager(spec, m)


def environment_gaps() -> list[str]:
    """What this machine cannot prove (TensorRT, onnxruntime-gpu, NVML)."""
    import importlib.util

    gaps = []
    if importlib.util.find_spec("tensorrt") is None:
        gaps.append("TensorRT plans: the tensorrt package is not installed (no plan was built or run)")
    if not device_parity.onnx_cuda_session_available():
        gaps.append("ONNX on CUDA: onnxruntime-gpu is not installed (CUDAExecutionProvider missing)")
    if importlib.util.find_spec("pynvml") is None and shutil.which("nvidia-smi") is None:
        gaps.append("process memory: neither pynvml nor nvidia-smi is available (process_bytes is null)")
    return gaps
