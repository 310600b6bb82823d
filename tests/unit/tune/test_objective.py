"""The objective: throughput per instance under the SLO with zero errors, beating the current one by a margin."""

from __future__ import annotations

import math

import pytest

from cdk_triton.tune.objective import Measurement, pareto_front, rank


def m(
    variant: str,
    rps: float,
    p99: float = 10.0,
    errors: int = 0,
    repeat: int = 0,
    conc: int = 16,
    cores: float = 0.1,
) -> Measurement:
    return Measurement(variant, conc, repeat, 1000, errors, rps, p99 / 2, p99 * 0.9, p99, cores)


def runs(variant: str, rps: list[float], **kw: float) -> list[Measurement]:
    return [m(variant, r, repeat=i, **kw) for i, r in enumerate(rps)]


def test_the_fastest_variant_under_the_slo_wins() -> None:
    ms = (
        runs("cur", [100, 102, 98])
        + runs("fast", [150, 160, 155])
        + runs("faster_but_slow", [300, 300, 300], p99=90)
    )
    r = rank(ms, current="cur", p99_ms=50)
    assert r.winner == "fast" and math.isclose(r.gain, 155 / 100)
    assert [row.variant for row in r.rows] == ["fast", "cur", "faster_but_slow"]
    assert r.rows[-1].reason == "p99 90.0 ms over the SLO 50 ms"


def test_errors_disqualify() -> None:
    ms = runs("cur", [100, 100, 100]) + runs("broken", [500, 500, 500], errors=1)
    r = rank(ms, current="cur")
    assert r.winner == "cur" and r.rows[1].reason == "3 errors"


def test_the_current_declaration_stays_within_the_margin() -> None:
    ms = runs("cur", [100, 100, 100]) + runs("bit_better", [104, 104, 104])
    r = rank(ms, current="cur", margin=0.05)
    assert r.winner == "cur" and r.gain == 1.0
    assert "does not beat the current declaration by 5%" in r.decision


def test_a_noisy_repeat_keeps_the_current_declaration() -> None:
    # median 1.3x, but one repeat only 1.02x: not a reliable win
    ms = runs("cur", [100, 100, 100]) + runs("noisy", [130, 102, 140])
    r = rank(ms, current="cur")
    assert r.winner == "cur" and "worst repeat 1.02x" in r.decision


def test_best_concurrency_under_the_slo_is_taken_per_variant() -> None:
    ms = [m("cur", 100, p99=5, conc=1), m("cur", 180, p99=40, conc=16), m("cur", 250, p99=120, conc=64)]
    row = rank(ms, current="cur", p99_ms=50).rows[0]
    assert row.best.concurrency == 16 and [p.concurrency for p in row.points] == [1, 16, 64]


def test_instances_and_cost_from_a_target_rate() -> None:
    ms = runs("cur", [100, 100, 100])
    row = rank(ms, current="cur", target_rate=950, price_per_hour=1.5).rows[0]
    assert row.instances_needed == 10 and row.cost_per_hour == pytest.approx(15.0)


def test_a_busy_client_is_flagged() -> None:
    assert rank(runs("cur", [100], cores=0.9), current="cur").client_warning.startswith(
        "the load client kept 0.90 cores busy"
    )
    assert rank(runs("cur", [100], cores=0.1), current="cur").client_warning is None


def test_pareto_front() -> None:
    pts = [(100, 10), (150, 20), (120, 30), (90, 5), (150, 25)]
    assert pareto_front(pts) == [0, 1, 3]


def test_fails_when_the_current_one_was_not_measured() -> None:
    with pytest.raises(ValueError, match="'cur' was not measured"):
        rank(runs("other", [1]), current="cur")
