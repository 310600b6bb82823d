"""Which models go where: an inference component (hot, with copies) or the MME (the long tail).

The rule, in order (the README's capacity use case states it too):

1. A model that fits no instance of the type goes nowhere on it (``neither``): a larger type.
2. Without traffic figures nothing is hot: every model stays on the MME.
3. A model with at least ``hot_share`` of the requests (default 10 %) is hot: a component. Its requests
   would otherwise keep it resident anyway, and a component gives it its own compute, copies that scale
   (to zero too) and no cold load behind other models' traffic.
4. A requested model that takes at least half an instance's usable GPU memory is a component too: each
   cold load of it in the MME would evict about half an instance's cache.
5. The rest, the long tail, shares the MME: one GPU holds many of them and a rare request pays a cold
   load (the report's miss cost) instead of a reserved accelerator.

Copies: ``ceil(rps / rps_per_copy)`` when both are known (measure a copy's throughput with
``cdk-triton tune``), else 1. Each copy reserves ``NumberOfAcceleratorDevicesRequired`` (an integer
>= 1) GPUs, so on a single-GPU instance type a copy costs a whole instance: a component is worth it only
for traffic that would keep a GPU busy or a miss that costs too much.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cdk_triton.config.residency import Footprint, Usable, fits

COMPONENT = "component"
MME = "MME"
NEITHER = "neither"

#: The traffic share from which a model is hot (rule 3).
HOT_SHARE = 0.10
#: The share of an instance's usable GPU memory from which a requested model is large (rule 4).
LARGE_FRACTION = 0.5


@dataclass(frozen=True, kw_only=True, slots=True)
class Advice:
    placement: str  # COMPONENT, MME or NEITHER
    copies: int | None  # components only
    why: str


def recommend(
    fp: Footprint,
    usable: Usable,
    *,
    share: float,
    rps: float | None,
    has_traffic: bool,
    hot_share: float = HOT_SHARE,
    rps_per_copy: float | None = None,
) -> Advice:
    """The placement of one model by the rule of the module docstring."""
    if not fits(fp, usable):
        return Advice(
            placement=NEITHER, copies=None, why=f"larger than one {usable.instance_type}'s usable memory"
        )
    if not has_traffic:
        return Advice(placement=MME, copies=None, why="no traffic given: nothing is hot")
    large = usable.gpu_bytes > 0 and fp.gpu_bytes >= LARGE_FRACTION * usable.gpu_bytes
    if share >= hot_share or (large and share > 0):
        copies = math.ceil(rps / rps_per_copy) if rps and rps_per_copy else 1
        why = (
            f"hot: {share:.1%} of requests (>= {hot_share:.0%})"
            if share >= hot_share
            else f"large: {fp.gpu_bytes / max(usable.gpu_bytes, 1):.0%} of an instance's usable GPU memory"
        )
        if rps and rps_per_copy:
            why += f"; {rps:g} rps / {rps_per_copy:g} per copy"
        return Advice(placement=COMPONENT, copies=max(copies, 1), why=why)
    if share == 0:
        return Advice(placement=MME, copies=None, why="not requested")
    return Advice(placement=MME, copies=None, why=f"long tail: {share:.1%} of requests")
