"""The capacity arithmetic: residency, instances for all warm or for a cache-hit ratio, miss cost, price.

Pure: a manifest endpoint, an instance type, traffic and (optionally) measured cold loads in, one
``CapacityReport`` out. The residency rule and its assumptions are ``config.residency``'s (the synth
warning uses the same). The hit-ratio model: the most requested models are kept resident (first fit in
decreasing traffic order over the instances); the hit ratio of ``n`` instances is the traffic share of
the models resident on them. LRU approximates that set under steady traffic; bursts and the copies
SageMaker adds of a busy model on other instances make the real ratio lower: an optimistic estimate.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from cdk_triton.capacity import recommend
from cdk_triton.capacity.traffic import NONE, Traffic
from cdk_triton.config import residency, sizing, tables
from cdk_triton.config.gpu_readings import GpuReadings
from cdk_triton.config.manifest import EndpointEntry, Manifest
from cdk_triton.config.residency import Footprint, Usable
from cdk_triton.errors import TritonValidationError

#: How a miss is costed where no cold load was measured (the host-limit throughputs of config/sizing.py).
MISS_ESTIMATE = (
    f"estimate: archive at {sizing.DOWNLOAD_BYTES_PER_S // sizing.MB} MB/s (S3 download, untar) + memory at "
    f"{sizing.LOAD_BYTES_PER_S // sizing.MB} MB/s (load)"
)
MISS_MEASURED = "measured locally: CPU proxy of download, untar and GPU load"
HIT_MODEL = (
    "estimate: the most requested models stay resident (first fit in decreasing traffic order); hit ratio = "
    "traffic share of the resident models; LRU under steady traffic approximates it, bursts make it lower"
)


@dataclass(frozen=True, kw_only=True, slots=True)
class Options:
    """What the report is asked (the CLI's flags)."""

    instance_type: str
    target_hit_ratio: float = 0.95
    price_per_hour: float | None = None
    hot_share: float = recommend.HOT_SHARE
    rps_per_copy: float | None = None
    #: a GPU readings report (``--gpu-readings``): a model read on the instance type's GPU takes its
    #: peak allocated bytes from there instead of the manifest's estimate
    gpu_readings: GpuReadings | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelRow:
    """One TargetModel of the endpoint."""

    name: str
    target_model: str
    gpu_bytes: int
    host_bytes: int
    memory_source: str  # config.residency.SOURCES
    archive_bytes: int
    share: float
    rps: float | None
    fits: bool
    miss_s: float
    miss_source: str  # MISS_MEASURED or MISS_ESTIMATE
    placement: str  # recommend.COMPONENT | MME | NEITHER
    copies: int | None
    why: str


@dataclass(frozen=True, kw_only=True, slots=True)
class CurvePoint:
    """``instances`` instances: the hit ratio (None without traffic), models resident, added wait, cost."""

    instances: int
    resident: int
    hit_ratio: float | None
    miss_wait_s: float | None  # mean added seconds per request (share x miss cost over the misses)
    cost_per_hour: float | None


@dataclass(frozen=True, kw_only=True, slots=True)
class CapacityReport:
    """One endpoint's capacity: models resident per instance, instances to keep them warm, cost, advice per model."""

    endpoint: str
    mode: str
    instance_type: str
    usable: Usable
    models: list[ModelRow]
    traffic_kind: str
    total_rps: float | None
    unlisted: list[str]
    all_warm_instances: int | None  # None: a model fits no instance of the type
    lower_bound_instances: int
    resident_per_instance: list[int]  # in the all-warm packing
    most_on_one_instance: int  # the most models one instance holds (smallest first)
    target_hit_ratio: float
    instances_for_target: int | None
    curve: list[CurvePoint]
    price_per_hour: float | None
    price_source: str
    too_big: list[str]
    rest_warm_instances: int | None = None  # the all-warm count without the recommended components
    notes: list[str] = field(default_factory=list)
    assumptions: tuple[str, ...] = residency.ASSUMPTIONS
    hit_model: str = HIT_MODEL

    def cost(self, instances: int | None) -> float | None:
        if instances is None or self.price_per_hour is None:
            return None
        return round(instances * self.price_per_hour, 4)


def endpoint_entry(manifest: Manifest, name: str | None) -> EndpointEntry:
    """The endpoint to size: ``name``, else the manifest's one multi-model (or components) endpoint."""
    sized = [e for e in manifest.endpoints.values() if e.target_models]
    pooled = [e for e in manifest.endpoints.values() if e.instance_pools is not None and e not in sized]
    if name is None:
        if len(sized) == 1:
            return sized[0]
        problem = "is needed: the manifest has " + (
            f"{len(sized)} multi-model endpoints" if sized else "no multi-model endpoint"
        )
        raise _endpoint_error(None, problem, sized)
    if name not in manifest.endpoints:
        raise _endpoint_error(name, f"is not in the manifest {manifest.path or ''}".rstrip(), sized + pooled)
    entry = manifest.endpoints[name]
    if entry.instance_pools is not None:
        return entry  # the per-pool report (capacity/pools.py), whatever the mode
    refusal = entry.hosting_mode.capacity
    if refusal is not None or not entry.target_models:
        raise _endpoint_error(
            name,
            f"is a {entry.mode} endpoint without instance_pools: nothing loads on demand, and there are no "
            "pools to compare",
            sized + pooled,
        )
    return entry


def _endpoint_error(value: str | None, problem: str, sized: list[EndpointEntry]) -> TritonValidationError:
    return TritonValidationError(
        "CapacityEndpoint",
        prop="--endpoint",
        value=value,
        problem=problem,
        allowed=", ".join(e.name for e in sized)
        or "(no multi-model, inference-components or instance-pools endpoint)",
        fix="name a multi-model or inference-components endpoint of the manifest, or one with instance_pools",
    )


def usable_for(instance_type: str, formats: Iterable[str] = residency.ALL_FORMATS) -> Usable:
    usable = residency.usable_memory(instance_type, formats)
    if usable is None:
        raise TritonValidationError(
            "CapacityInstanceType",
            prop="--instance-type",
            value=instance_type,
            problem="is not in the instance table (its GPU and host memory are unknown)",
            allowed=", ".join(sorted(tables.instance_types())),
            fix="choose a GPU instance type of the table (config/data/instance-types.json)",
        )
    return usable


def endpoint_formats(manifest: Manifest, entry: EndpointEntry) -> list[str]:
    """The formats of the models the endpoint's archives hold (which backends its server loads)."""
    names = {m for t in entry.target_models.values() for m in t.models}
    return sorted({manifest.models[m].format for m in names if m in manifest.models})


def footprints(
    manifest: Manifest, entry: EndpointEntry, usable: Usable, readings: GpuReadings | None = None
) -> dict[str, Footprint]:
    """logical name -> footprint of each TargetModel (a model's bytes from ``readings`` where it was
    read on the instance type's GPU)."""
    has_gpu = usable.gpu_count > 0
    return {
        name: residency.target_footprint(
            name, t, manifest.models, has_gpu=has_gpu, readings=readings, instance_type=usable.instance_type
        )
        for name, t in sorted(entry.target_models.items())
    }


def miss_estimate_s(fp: Footprint, archive_bytes: int) -> float:
    """A cold load's seconds from the host-limit throughputs (no measurement)."""
    return archive_bytes / sizing.DOWNLOAD_BYTES_PER_S + fp.total_bytes / sizing.LOAD_BYTES_PER_S


def build_report(
    manifest: Manifest,
    entry: EndpointEntry,
    traffic: Traffic,
    options: Options,
    *,
    measured_s: Mapping[str, float] | None = None,
) -> CapacityReport:
    """The whole report (see the module docstring for the models behind each figure)."""
    usable = usable_for(options.instance_type, endpoint_formats(manifest, entry))
    fps = footprints(manifest, entry, usable, options.gpu_readings)
    measured = dict(measured_s or {})
    price, price_source = _price(options)
    order = sorted(fps.values(), key=lambda f: (-traffic.shares.get(f.name, 0.0), f.total_bytes, f.name))
    by_traffic = residency.pack(order, usable)
    curve = _curve(by_traffic, fps, traffic, measured, entry, price)
    warm = residency.pack(residency.by_size(fps.values()), usable)
    too_big = sorted(n for n, f in fps.items() if not residency.fits(f, usable))
    all_fit_one = not too_big and len(warm.instances) <= 1
    rows = _rows(fps, entry, traffic, measured, usable, options, all_fit_one=all_fit_one)
    target = _instances_for(curve, options.target_hit_ratio) if traffic.has_traffic else None
    placed = {r.name for r in rows if r.placement != recommend.MME}
    rest = residency.instances_to_hold_all([f for n, f in fps.items() if n not in placed], usable)
    notes = _notes(traffic, too_big, target, curve, options, entry) + _reading_notes(options, fps)
    smallest = residency.pack(
        sorted(fps.values(), key=lambda f: (f.total_bytes, f.name)), usable, max_instances=1
    )
    return CapacityReport(
        endpoint=entry.name,
        mode=entry.mode,
        instance_type=options.instance_type,
        usable=usable,
        models=rows,
        traffic_kind=traffic.kind,
        total_rps=traffic.total_rps,
        unlisted=list(traffic.unlisted),
        all_warm_instances=None if too_big else len(warm.instances),
        lower_bound_instances=residency.lower_bound(
            [f for f in fps.values() if residency.fits(f, usable)], usable
        ),
        resident_per_instance=[len(i) for i in warm.instances],
        most_on_one_instance=len(smallest.instances[0]) if smallest.instances else 0,
        target_hit_ratio=options.target_hit_ratio,
        instances_for_target=target,
        curve=curve,
        price_per_hour=price,
        price_source=price_source,
        too_big=too_big,
        rest_warm_instances=rest,
        notes=notes,
    )


def _price(options: Options) -> tuple[float | None, str]:
    if options.price_per_hour is not None:
        return options.price_per_hour, "--price-per-hour"
    price = tables.on_demand_price(options.instance_type)
    region = tables.price_table()["region"]
    if price is None:
        return None, f"not in the vendored price table ({region}): pass --price-per-hour"
    return price, f"vendored on-demand table, {region}, unconfirmed (config/data/instance-prices.json)"


def _miss(name: str, fp: Footprint, entry: EndpointEntry, measured: Mapping[str, float]) -> tuple[float, str]:
    if name in measured:
        return measured[name], MISS_MEASURED
    return miss_estimate_s(fp, entry.target_models[name].size_bytes), MISS_ESTIMATE


def _curve(
    packing: residency.Packing,
    fps: Mapping[str, Footprint],
    traffic: Traffic,
    measured: Mapping[str, float],
    entry: EndpointEntry,
    price: float | None,
) -> list[CurvePoint]:
    """One point per instance count 1..N of the traffic-order packing. First fit gives the first ``n``
    instances the same models whatever the bound, so one packing yields every point."""
    points = []
    resident: set[str] = set()
    for n, names in enumerate(packing.instances, start=1):
        resident.update(names)
        hit = wait = None
        if traffic.has_traffic:
            hit = sum(traffic.shares.get(m, 0.0) for m in resident)
            wait = sum(
                traffic.shares.get(m, 0.0) * _miss(m, fps[m], entry, measured)[0]
                for m in fps
                if m not in resident
            )
        points.append(
            CurvePoint(
                instances=n,
                resident=len(resident),
                hit_ratio=None if hit is None else round(min(hit, 1.0), 6),
                miss_wait_s=None if wait is None else round(wait, 6),
                cost_per_hour=None if price is None else round(n * price, 4),
            )
        )
    return points


def _instances_for(curve: list[CurvePoint], target: float) -> int | None:
    for point in curve:
        if point.hit_ratio is not None and point.hit_ratio + 1e-9 >= target:
            return point.instances
    return None


def _rows(
    fps: Mapping[str, Footprint],
    entry: EndpointEntry,
    traffic: Traffic,
    measured: Mapping[str, float],
    usable: Usable,
    options: Options,
    *,
    all_fit_one: bool,
) -> list[ModelRow]:
    rows = []
    for name, fp in fps.items():
        fits = residency.fits(fp, usable)
        share = traffic.shares.get(name, 0.0)
        rps = traffic.rps.get(name) if traffic.kind != NONE and traffic.rps else None
        miss_s, miss_source = _miss(name, fp, entry, measured)
        advice = recommend.recommend(
            fp,
            usable,
            share=share,
            rps=rps,
            has_traffic=traffic.has_traffic,
            all_fit_one=all_fit_one,
            hot_share=options.hot_share,
            rps_per_copy=options.rps_per_copy,
        )
        rows.append(
            ModelRow(
                name=name,
                target_model=entry.target_models[name].target_model,
                gpu_bytes=fp.gpu_bytes,
                host_bytes=fp.host_bytes,
                memory_source=fp.source,
                archive_bytes=entry.target_models[name].size_bytes,
                share=round(share, 6),
                rps=rps,
                fits=fits,
                miss_s=round(miss_s, 4),
                miss_source=miss_source,
                placement=advice.placement,
                copies=advice.copies,
                why=advice.why,
            )
        )
    return sorted(rows, key=lambda r: (-r.share, r.name))


def _reading_notes(options: Options, fps: Mapping[str, Footprint]) -> list[str]:
    """Which figure the model bytes came from when a readings report was given."""
    readings = options.gpu_readings
    if readings is None:
        return []
    device = readings.for_instance_type(options.instance_type)
    if device is None:
        names = ", ".join(f"{d.name} ({d.compute_capability})" for d in readings.devices) or "none"
        return [
            f"{readings.source} has no reading for the GPU of {options.instance_type} (devices: {names}): "
            "every model's bytes are the manifest's estimate"
        ]
    read = sorted(n for n, f in fps.items() if f.source.startswith(residency.READING))
    return [
        f"model bytes from the reading of {device.name} ({readings.source}, peak allocated) for "
        f"{len(read)} of {len(fps)} TargetModels; the others from the manifest (see the memory column)"
    ]


def _notes(
    traffic: Traffic,
    too_big: list[str],
    target: int | None,
    curve: list[CurvePoint],
    options: Options,
    entry: EndpointEntry,
) -> list[str]:
    notes = []
    if too_big:
        notes.append(
            f"{', '.join(too_big)} fit(s) no {options.instance_type}: every request to it fails to load "
            "(SageMaker answers 507 and unloads others in vain); choose an instance type with more memory"
        )
    if not traffic.has_traffic:
        why = "no traffic file given" if traffic.kind == NONE else "the traffic file gives every model 0"
        notes.append(f"{why}: hit ratios are undefined; the all-warm instance count applies")
    elif target is None:
        best = curve[-1].hit_ratio if curve else 0.0
        notes.append(
            f"a hit ratio of {options.target_hit_ratio:g} cannot be reached on {options.instance_type}: at most "
            f"{best:.3f} (the models that fit no instance carry the rest)"
        )
    if traffic.unlisted:
        notes.append(f"no traffic given for {len(traffic.unlisted)} model(s): counted as never requested")
    if not entry.hosting_mode.loads_on_demand:
        notes.append(
            f"endpoint '{entry.name}' is {entry.mode}: the residency figures are those of an MME of its models"
        )
    return notes


def gib(nbytes: int | float) -> float:
    return round(nbytes / sizing.GiB, 3)


def instances_for_hit(report: CapacityReport, ratio: float) -> int | None:
    """Instances for another hit ratio from the same curve (None: unreachable or no traffic)."""
    if not math.isfinite(ratio):
        return None
    return _instances_for(report.curve, ratio)
