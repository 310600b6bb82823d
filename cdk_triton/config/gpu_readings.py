"""The GPU readings report (``gpu-readings.json``, written by the GPU check): read, validated, matched.

The report's format is agreed with the GPU check (``kind: cdk-triton/gpu-readings``, ``version: 1``,
``devices[]`` each with ``models{}``); it is never part of the manifest (which stays byte-identical
across machines). Pure, standard library only.

Matching a device to a SageMaker instance type: every whitespace-separated token of the type's ``gpu``
name (``instance-types.json``: "NVIDIA L4") is a token of the device ``name`` ("NVIDIA L4" does not
match "NVIDIA L40S"), and the compute capability is equal (the table's architecture ``sm89`` -> 8.9).

The figure capacity takes from a reading: ``peak_allocated_bytes`` (torch.cuda.max_memory_allocated
over a max-batch inference: the weights and the activation peak, what the manifest's estimate
estimates). Not ``reserved_bytes``: the caching allocator's reserve is one pool per process, shared by
every model the libtorch backend serves, so adding each model's reserve counts that slack once per
model; it is the fragmentation share of the capacity arithmetic instead. Not ``process_bytes``: it
holds the CUDA context, a per-process term of its own (``gpu_costs``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdk_triton.config import tables
from cdk_triton.errors import TritonValidationError

KIND = "cdk-triton/gpu-readings"
VERSION = 1
#: The reading capacity uses (see the module docstring for why).
FIGURE = "peak_allocated_bytes"


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelReading:
    """What one model held on one device."""

    name: str
    format: str | None
    max_batch_size: int | None
    manifest_memory_bytes: int | None
    loaded_allocated_bytes: int | None
    peak_allocated_bytes: int | None  # None: torch's allocator cannot see the backend (ONNX Runtime)
    reserved_bytes: int | None
    process_bytes: int | None


@dataclass(frozen=True, kw_only=True, slots=True)
class DeviceReadings:
    """One device's readings."""

    name: str
    compute_capability: str
    total_memory_bytes: int | None
    context_bytes: int | None
    measured_at: str | None
    models: dict[str, ModelReading] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True, slots=True)
class GpuReadings:
    """A readings report: its devices, and where it was read from (for messages)."""

    devices: tuple[DeviceReadings, ...]
    source: str = "gpu-readings.json"

    def for_instance_type(self, instance_type: str) -> DeviceReadings | None:
        """The device whose GPU is ``instance_type``'s (:func:`matches`), the first one listed."""
        return next((d for d in self.devices if matches(d, instance_type)), None)


def _bad(source: str, where: str, value: Any, problem: str, allowed: str) -> TritonValidationError:
    return TritonValidationError(
        "GpuReadingsInvalid",
        prop="gpu_readings",
        value=f"{source} {where}: {value!r}",
        problem=problem,
        allowed=allowed,
        fix="write the report with the GPU check (`cdk-triton gpu-check`), or fix the entry by hand",
    )


def _int(d: Mapping[str, Any], key: str, source: str, where: str, *, required: bool = False) -> int | None:
    v = d.get(key)
    if v is None and not required:
        return None
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise _bad(source, f"{where}.{key}", v, "is not a byte count", "an integer >= 0")
    return v


def readings_from_dict(data: Any, *, source: str = "gpu-readings.json") -> GpuReadings:
    """Validate a parsed report (TritonValidationError ``GpuReadingsInvalid`` naming the entry)."""
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise _bad(
            source, "kind", getattr(data, "get", lambda _k: None)("kind"), "is not a readings report", KIND
        )
    if data.get("version") != VERSION:
        raise _bad(source, "version", data.get("version"), "is not a version this reader reads", str(VERSION))
    devices = data.get("devices")
    if not isinstance(devices, list):
        raise _bad(source, "devices", devices, "is not a list", "a list of devices")
    out = []
    for i, d in enumerate(devices):
        where = f"devices[{i}]"
        if not isinstance(d, dict) or not isinstance(d.get("name"), str):
            raise _bad(source, f"{where}.name", d, "has no device name", "torch.cuda.get_device_name")
        cc = d.get("compute_capability")
        if not isinstance(cc, str) or not cc.replace(".", "", 1).isdigit():
            raise _bad(source, f"{where}.compute_capability", cc, "is not a compute capability", "'9.0'")
        models = d.get("models") or {}
        if not isinstance(models, dict):
            raise _bad(source, f"{where}.models", models, "is not a mapping", "model name -> reading")
        readings = {}
        for name, m in sorted(models.items()):
            mw = f"{where}.models.{name}"
            if not isinstance(m, dict):
                raise _bad(source, mw, m, "is not a reading", "a mapping")
            if FIGURE not in m:  # present always; null where torch's allocator cannot see the backend
                raise _bad(source, f"{mw}.{FIGURE}", None, "is missing", "an integer >= 0, or null")
            readings[name] = ModelReading(
                name=name,
                format=m.get("format") if isinstance(m.get("format"), str) else None,
                max_batch_size=m.get("max_batch_size") if isinstance(m.get("max_batch_size"), int) else None,
                manifest_memory_bytes=_int(m, "manifest_memory_bytes", source, mw),
                loaded_allocated_bytes=_int(m, "loaded_allocated_bytes", source, mw),
                peak_allocated_bytes=_int(m, FIGURE, source, mw),
                reserved_bytes=_int(m, "reserved_bytes", source, mw),
                process_bytes=_int(m, "process_bytes", source, mw),
            )
        out.append(
            DeviceReadings(
                name=d["name"],
                compute_capability=cc,
                total_memory_bytes=_int(d, "total_memory_bytes", source, where),
                context_bytes=_int(d, "context_bytes", source, where),
                measured_at=d.get("measured_at") if isinstance(d.get("measured_at"), str) else None,
                models=readings,
            )
        )
    return GpuReadings(devices=tuple(out), source=source)


def read_readings(path: str | os.PathLike[str]) -> GpuReadings:
    """Read and validate the report at ``path``."""
    p = Path(path)
    try:
        data = json.loads(p.read_text("utf-8"))
    except OSError as exc:
        raise _bad(str(p), "file", str(p), f"cannot be read ({exc.strerror})", "a readings report") from exc
    except json.JSONDecodeError as exc:
        raise _bad(str(p), "file", str(p), f"is not JSON ({exc.msg})", "a readings report") from exc
    return readings_from_dict(data, source=str(p))


def matches(device: DeviceReadings, instance_type: str) -> bool:
    """Whether ``device`` is the GPU of ``instance_type``: every token of the type's GPU name is a token
    of the device's, and the compute capabilities are equal."""
    info = tables.instance_type_info(instance_type)
    if info is None or not info.gpu or not info.gpu_count:
        return False
    tokens = set(device.name.split())
    return all(t in tokens for t in info.gpu.split()) and info.compute_capability == device.compute_capability


def reading_label(device: DeviceReadings) -> str:
    """How a figure from ``device`` is labelled: ``reading:<device name> peak allocated``."""
    return f"reading:{device.name} peak allocated"


def model_reading(
    readings: GpuReadings | None, instance_type: str | None, model: str
) -> tuple[int, str] | None:
    """(bytes, label) of ``model`` from the reading of ``instance_type``'s GPU; None without one."""
    if readings is None or not instance_type:
        return None
    device = readings.for_instance_type(instance_type)
    if device is None or model not in device.models:
        return None
    peak = device.models[model].peak_allocated_bytes
    if peak is None:  # a backend torch's allocator cannot see: the manifest's figure stands
        return None
    return peak, reading_label(device)
