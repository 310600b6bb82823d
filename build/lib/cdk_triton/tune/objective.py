"""The one objective of a tuning run, and the ranking it implies. Pure.

The winner is the variant with the highest throughput per instance at a concurrency where its p99
latency is at or under the SLO and no request failed, taken as the median over the repeats. It must
beat the current declaration by ``margin`` (default 5 %) in the median AND in its worst repeat against
the current one's median; otherwise the current declaration stays (a noisy measurement never rewrites
``models.yaml``). With a target rate and an hourly price: instances needed and cost per hour.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Measurement:
    """One closed-loop phase: one variant at one concurrency, one repeat (warm-up excluded)."""

    variant: str
    concurrency: int
    repeat: int
    requests: int
    errors: int
    throughput_rps: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    #: cores the load client itself kept busy (on a small machine it competes with the server)
    client_cores: float = 0.0
    #: "local" (the CPU stand-ins here) or "endpoint" (a SageMaker endpoint on the target instance)
    source: str = "local"
    instances: int = 1


@dataclass(frozen=True)
class Point:
    """The median of the repeats of one variant at one concurrency."""

    variant: str
    concurrency: int
    throughput_rps: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    errors: int
    repeats: int
    worst_rps: float
    client_cores: float

    @property
    def per_minute(self) -> float:
        return self.throughput_rps * 60.0


@dataclass(frozen=True)
class Row:
    """One variant in the ranking: its best point under the SLO (or its best point, marked failing)."""

    variant: str
    best: Point
    meets_slo: bool
    points: tuple[Point, ...]
    instances_needed: int | None = None
    cost_per_hour: float | None = None
    #: why it does not qualify, or "" when it does
    reason: str = ""


@dataclass(frozen=True)
class Ranking:
    rows: tuple[Row, ...]
    winner: str
    current: str
    #: median throughput of the winner / of the current declaration (1.0 when the current one stays)
    gain: float
    decision: str
    client_warning: str | None = None
    notes: list[str] = field(default_factory=list)


#: a client kept this many cores busy: the measurement is bounded by the client, not the server
CLIENT_CORES_WARNING = 0.5


def aggregate(measurements: Iterable[Measurement]) -> list[Point]:
    """Median over repeats per (variant, concurrency)."""
    groups: dict[tuple[str, int], list[Measurement]] = {}
    for m in measurements:
        groups.setdefault((m.variant, m.concurrency), []).append(m)
    points = []
    for (variant, conc), ms in groups.items():
        points.append(
            Point(
                variant=variant,
                concurrency=conc,
                throughput_rps=statistics.median(m.throughput_rps for m in ms),
                p50_ms=statistics.median(m.p50_ms for m in ms),
                p90_ms=statistics.median(m.p90_ms for m in ms),
                p99_ms=statistics.median(m.p99_ms for m in ms),
                errors=sum(m.errors for m in ms),
                repeats=len(ms),
                worst_rps=min(m.throughput_rps for m in ms),
                client_cores=max(m.client_cores for m in ms),
            )
        )
    return points


def rank(
    measurements: Sequence[Measurement],
    *,
    current: str,
    p99_ms: float | None = None,
    margin: float = 0.05,
    target_rate: float | None = None,
    price_per_hour: float | None = None,
) -> Ranking:
    """Rank variants by throughput per instance under the SLO; decide whether the current one stays."""
    points = aggregate(measurements)
    by_variant: dict[str, list[Point]] = {}
    for p in points:
        by_variant.setdefault(p.variant, []).append(p)
    if current not in by_variant:
        raise ValueError(f"the current declaration {current!r} was not measured")
    rows = [_row(v, ps, p99_ms, target_rate, price_per_hour) for v, ps in by_variant.items()]
    rows.sort(key=lambda r: (not r.meets_slo, -r.best.throughput_rps, r.best.p99_ms))
    cur = next(r for r in rows if r.variant == current)
    best = next((r for r in rows if r.meets_slo), None)
    notes: list[str] = []
    if best is None:
        decision = (
            "no variant met the objective (p99 under the SLO with zero errors): the current declaration stays"
        )
        winner, gain = current, 1.0
    elif best.variant == current:
        decision, winner, gain = "the current declaration is the best: it stays", current, 1.0
    else:
        base = cur.best.throughput_rps if cur.meets_slo else 0.0
        gain = best.best.throughput_rps / base if base else math.inf
        worst_gain = best.best.worst_rps / base if base else math.inf
        if gain >= 1 + margin and worst_gain >= 1 + margin:
            winner = best.variant
            decision = f"{best.variant} wins: {gain:.2f}x the current declaration's throughput per instance (margin {margin:.0%})"
        else:
            winner, gain = current, 1.0
            decision = (
                f"{best.variant} measured best but does not beat the current declaration by {margin:.0%} in every "
                f"repeat (median {best.best.throughput_rps / base if base else 0:.2f}x, worst repeat {worst_gain:.2f}x): the current one stays"
            )
    busy = max((p.client_cores for p in points), default=0.0)
    warning = (
        f"the load client kept {busy:.2f} cores busy: on a small machine it competes with the server, so the "
        "figures are a lower bound"
        if busy >= CLIENT_CORES_WARNING
        else None
    )
    return Ranking(tuple(rows), winner, current, gain, decision, warning, notes)


def _row(
    variant: str, points: list[Point], slo: float | None, rate: float | None, price: float | None
) -> Row:
    ok = [p for p in points if p.errors == 0 and (slo is None or p.p99_ms <= slo)]
    best = max(ok or points, key=lambda p: (p.throughput_rps, -p.p99_ms))
    reason = ""
    if not ok:
        failing = min(points, key=lambda p: p.p99_ms)
        reason = (
            f"{failing.errors} errors"
            if failing.errors
            else f"p99 {failing.p99_ms:.1f} ms over the SLO {slo:g} ms"
        )
    needed = cost = None
    if rate is not None and best.throughput_rps > 0:
        needed = max(1, math.ceil(rate / best.throughput_rps))
        cost = needed * price if price is not None else None
    return Row(
        variant, best, bool(ok), tuple(sorted(points, key=lambda p: p.concurrency)), needed, cost, reason
    )


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indexes of the (throughput, p99) points no other point beats on both (higher throughput, lower p99)."""
    front = []
    for i, (t, lat) in enumerate(points):
        dominated = any(
            (t2 >= t and l2 <= lat) and (t2 > t or l2 < lat) for j, (t2, l2) in enumerate(points) if j != i
        )
        if not dominated:
            front.append(i)
    return front
