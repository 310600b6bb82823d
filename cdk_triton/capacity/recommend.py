"""Which models go where: an inference component (hot, with copies) or the MME (the long tail).

The rule, in order (the README's capacity use case states it too):

1. A model that fits no instance of the type goes nowhere on it (``neither``): a larger type.
2. Without traffic figures nothing is hot: every model stays on the MME.
3. A model whose requests need more than one copy's throughput (``rps > rps_per_copy``, both given;
   measure a copy with ``cdk-triton tune``) is a component with ``ceil(rps / rps_per_copy)`` copies:
   it needs compute of its own that scales with it, not with the whole MME.
4. When the MME cannot keep every model warm on one instance (its working set outgrows one instance's
   usable memory, so the long tail's loads evict), a hot model (at least ``hot_share`` of the requests,
   default 10 %) is a component, and so is a requested model that takes at least half an instance's
   usable GPU memory (each of its cold loads would evict about half an instance's cache).
5. The rest shares the MME: the long tail, and hot models of an MME whose models all fit one instance
   (it keeps them all warm; a component would reserve a GPU for nothing). A rare request pays a cold
   load (the report's miss cost) instead of a reserved accelerator.

Copies are 1 where rule 4 applies without ``rps_per_copy``. Each copy reserves
``NumberOfAcceleratorDevicesRequired`` (an integer >= 1) GPUs, so on a single-GPU instance type a copy
costs a whole instance: a component is worth it only for traffic that keeps a GPU busy or misses that
cost too much.
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
    """Where one model should be served: an inference component (with its copies), the MME, or neither, and why."""

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
    all_fit_one: bool,
    hot_share: float = HOT_SHARE,
    rps_per_copy: float | None = None,
) -> Advice:
    """The placement of one model by the rule of the module docstring (``all_fit_one``: every model of
    the endpoint fits one instance together)."""
    if not fits(fp, usable):
        return Advice(
            placement=NEITHER, copies=None, why=f"larger than one {usable.instance_type}'s usable memory"
        )
    if not has_traffic:
        return Advice(placement=MME, copies=None, why="no traffic given: nothing is hot")
    if rps and rps_per_copy and rps > rps_per_copy:
        copies = math.ceil(rps / rps_per_copy)
        return Advice(
            placement=COMPONENT, copies=copies, why=f"busy: {rps:g} rps / {rps_per_copy:g} per copy"
        )
    hot = share >= hot_share
    large = usable.gpu_bytes > 0 and fp.gpu_bytes >= LARGE_FRACTION * usable.gpu_bytes and share > 0
    if (hot or large) and not all_fit_one:
        why = (
            f"hot: {share:.1%} of requests (>= {hot_share:.0%})"
            if hot
            else f"large: {fp.gpu_bytes / max(usable.gpu_bytes, 1):.0%} of an instance's usable GPU memory"
        )
        return Advice(placement=COMPONENT, copies=1, why=why + ", and the MME's models outgrow one instance")
    if share == 0:
        return Advice(placement=MME, copies=None, why="not requested")
    if hot or large:
        return Advice(
            placement=MME, copies=None, why=f"{share:.1%} of requests, but every model fits one instance"
        )
    return Advice(placement=MME, copies=None, why=f"long tail: {share:.1%} of requests")
