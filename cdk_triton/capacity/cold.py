"""The cost of a miss, measured: each TargetModel's first load into the real local Triton, timed.

The local multi-model endpoint (``cdk_triton.local``) does what SageMaker does on a miss, on this CPU:
check and untar the archive, apply the CPU overlay, ``POST /models`` (the backends build their sessions).
``bench/local_cold.py`` times the same call (``ModelManager.load``) and splits it. It is a CPU proxy of
download, untar and GPU load: no S3 download, no GPU copy, this machine's disk and cores; read it as the
order of a miss, not as the GPU instance's figure.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from cdk_triton.config.manifest import Manifest


@dataclass(frozen=True, kw_only=True, slots=True)
class ColdLoads:
    """Seconds of each TargetModel's first load (logical name -> s), and why others were not measured."""

    seconds: dict[str, float] = field(default_factory=dict)
    skipped: str | None = None


def choose(manifest: Manifest, endpoint: str, count: int) -> list[str]:
    """Which TargetModels to measure: the ``count`` largest archives (the costliest misses), then by name."""
    targets = manifest.endpoint(endpoint).target_models
    ranked = sorted(targets, key=lambda n: (-targets[n].size_bytes, n))
    return ranked[: max(count, 0)]


def measure(manifest: Manifest, endpoint: str, names: Sequence[str]) -> ColdLoads:
    """Load each of ``names`` into a fresh local MME (one server for all), timing each first load and
    unloading it before the next, so that every load is cold. A machine without the local server (or
    without the archives) gets ``skipped`` with the reason; the report then estimates every miss."""
    if not names:
        return ColdLoads(skipped="nothing to measure")
    if not manifest.endpoint(endpoint).hosting_mode.loads_on_demand:
        return ColdLoads(skipped="cold loads are measured on multi-model endpoints only")
    try:
        from cdk_triton.local import CpuOverlay, LocalEndpoint
    except ImportError as exc:  # pragma: no cover - the base install has no local layer deps
        return ColdLoads(skipped=f"the local endpoint is not installed ({exc})")
    missing = [
        n
        for n in names
        if not manifest.resolve(manifest.endpoint(endpoint).target_models[n].local_path).is_file()
    ]
    if missing:
        return ColdLoads(skipped=f"archives not on this machine: {', '.join(missing)} (build them first)")
    seconds: dict[str, float] = {}
    with LocalEndpoint(manifest, endpoint, overlay=CpuOverlay(instance_count=1)) as ep:
        models = ep.models
        assert models is not None  # a multi-model endpoint has its manager once started
        for name in names:
            t0 = time.perf_counter()
            models.load(name)
            seconds[name] = round(time.perf_counter() - t0, 4)
            models.unload(name)
    return ColdLoads(seconds=seconds)
