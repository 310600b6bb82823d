"""``cdk-triton capacity`` of an endpoint with ``instance_pools``: one row per pool, in priority order.

SageMaker provisions from the first pool and falls back to the next when one has no capacity (its guide,
``config.instance_pools``), so every pool must hold the endpoint's models, and a fallback changes the
cost. Per pool: the instance type, its GPUs and GPU memory, whether every model fits one instance (the
memory figures of the synth checks: ``config.residency`` footprints from the manifest's model bytes,
``gpu_costs`` terms, GPU readings taken on that type when given), for inference components the copies of
each component one instance holds (its requirements as synth derives them), the on-demand price
(``tables.on_demand_price``) and its difference to priority 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from cdk_triton.capacity import estimate
from cdk_triton.config import components, instance_pools, residency, sizing, tables
from cdk_triton.config.gpu_readings import GpuReadings
from cdk_triton.config.manifest import EndpointEntry, Manifest, TargetModel


@dataclass(frozen=True, kw_only=True, slots=True)
class PoolRow:
    """One instance pool of the endpoint."""

    priority: int
    instance_type: str
    gpu_count: int
    gpu_memory_gib: float
    host_memory_gib: float
    fits: (
        bool  # every model (SingleModel: the whole repository; components: each component) fits one instance
    )
    too_big: list[str]
    copies_per_instance: dict[str, int] | None  # components: copies of each one instance holds
    price_per_hour: float | None
    delta_per_hour: float | None  # vs priority 1 (None: a price unknown)


@dataclass(frozen=True, kw_only=True, slots=True)
class PoolReport:
    """An endpoint's pools: what each holds and costs."""

    endpoint: str
    mode: str
    provision_timeout_s: int | None
    pools: list[PoolRow]
    price_source: str
    notes: list[str] = field(default_factory=list)


def build_pool_report(
    manifest: Manifest, entry: EndpointEntry, readings: GpuReadings | None = None
) -> PoolReport:
    """One row per pool of ``entry`` (which has ``instance_pools``)."""
    assert entry.instance_pools is not None
    types = list(entry.instance_pools.instance_types)
    targets = entry.target_models or {entry.name: _repository(entry)}
    formats = estimate.endpoint_formats(manifest, entry) if entry.target_models else _formats(manifest, entry)
    rows: list[PoolRow] = []
    first: float | None = None
    for priority, it in enumerate(types, start=1):
        usable = estimate.usable_for(it, formats)
        fps = {
            name: residency.target_footprint(
                name, t, manifest.models, has_gpu=usable.gpu_count > 0, readings=readings, instance_type=it
            )
            for name, t in sorted(targets.items())
        }
        too_big = sorted(n for n, f in fps.items() if not residency.fits(f, usable))
        price = tables.on_demand_price(it)
        first = price if priority == 1 else first
        info = tables.instance_type_info(it)
        rows.append(
            PoolRow(
                priority=priority,
                instance_type=it,
                gpu_count=usable.gpu_count,
                gpu_memory_gib=round(info.gpu_memory_gib, 1) if info else 0.0,
                host_memory_gib=round(info.host_memory_gib, 1) if info else 0.0,
                fits=not too_big,
                too_big=too_big,
                copies_per_instance=_copies(manifest, entry, it, types) if entry.components else None,
                price_per_hour=price,
                delta_per_hour=None if price is None or first is None else round(price - first, 4),
            )
        )
    region = tables.price_table()["region"]
    notes = [
        "a copy or instance may land on any pool (SageMaker falls back by priority when one has no capacity): "
        f"every pool must hold every model ({instance_pools.GUIDE}, read {instance_pools.READ})"
    ]
    if entry.components:
        notes.append(
            "components: one Specification for every pool, its requirements derived for the smallest pool "
            f"({instance_pools.smallest(types)})"
        )
    return PoolReport(
        endpoint=entry.name,
        mode=entry.mode,
        provision_timeout_s=entry.instance_pools.provision_timeout_s,
        pools=rows,
        price_source=f"vendored on-demand table, {region}, unconfirmed (config/data/instance-prices.json)",
        notes=notes,
    )


def _repository(entry: EndpointEntry) -> TargetModel:
    """A single-model endpoint's repository as one archive: every model on every instance."""
    return TargetModel(
        logical_name=entry.name,
        target_model="",
        model=entry.default_model or "",
        models=list(entry.models),
        local_path=entry.local_path or "",
        sha256=entry.sha256 or "",
        size_bytes=entry.size_bytes or 0,
        s3_uri=entry.s3_uri or "",
    )


def _formats(manifest: Manifest, entry: EndpointEntry) -> list[str]:
    return sorted({manifest.models[m].format for m in entry.models if m in manifest.models})


def _copies(manifest: Manifest, entry: EndpointEntry, it: str, types: list[str]) -> dict[str, int]:
    """Copies of each component one instance of ``it`` holds: its accelerators, CPU cores and memory as
    synth derives them (declared, else 1 accelerator when every pool has GPUs, 1 CPU core when one is a
    CPU type, memory by ``sizing.component_min_memory_mb``)."""
    info = tables.instance_type_info(it)
    if info is None:
        return {}
    smallest = tables.instance_type_info(instance_pools.smallest(types))
    gpu = smallest is not None and smallest.gpu_count > 0
    cpu_type = any(tables.instance_kind(t) == "cpu" for t in types)
    out: dict[str, int] = {}
    for name, c in sorted(entry.components.items()):
        target = entry.target_models[c.target_model]
        memory = sizing.component_min_memory_mb(
            c.min_memory_mb, [manifest.models[m] for m in target.models if m in manifest.models]
        )
        acc = (
            c.accelerators if c.accelerators is not None else (components.DEFAULT_ACCELERATORS if gpu else 0)
        )
        cpu = (
            c.cpu_cores
            if c.cpu_cores is not None
            else (components.DEFAULT_CPU_CORES_ON_CPU if cpu_type else 0)
        )
        limits = [info.host_memory_gib * 1024 / memory] if memory else []
        limits += [info.gpu_count / acc] if acc else []
        limits += [info.vcpus / cpu] if cpu else []
        out[name] = math.floor(min(limits)) if limits else 0
    return out


def to_json(r: PoolReport) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(r)


def render(r: PoolReport) -> str:
    """The pools as a table, highest priority first."""
    comps = sorted({n for p in r.pools for n in (p.copies_per_instance or {})})
    head = ["prio", "instance type", "GPUs", "GiB per GPU", "host GiB", "fits", "$/h", "vs prio 1"]
    head += [f"copies {n}" for n in comps]
    lines = [f"endpoint {r.endpoint} ({r.mode}): {len(r.pools)} instance pools, highest priority first"]
    if r.provision_timeout_s is not None:
        lines.append(f"provisioning timeout: {r.provision_timeout_s} s")
    table = [head]
    for p in r.pools:
        row = [
            str(p.priority),
            p.instance_type,
            str(p.gpu_count),
            f"{p.gpu_memory_gib:g}",
            f"{p.host_memory_gib:g}",
            "yes" if p.fits else "NO: " + ", ".join(p.too_big),
            "-" if p.price_per_hour is None else f"{p.price_per_hour:.4f}",
            "-" if p.delta_per_hour is None else f"{p.delta_per_hour:+.4f}",
        ]
        row += [str((p.copies_per_instance or {}).get(n, "-")) for n in comps]
        table.append(row)
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in table]
    lines.append(f"prices: {r.price_source}")
    lines += [f"note: {n}" for n in r.notes]
    return "\n".join(lines) + "\n"
