"""What a tuning run shows people: the table in the terminal, CSV, JSON and two PNG plots."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from cdk_triton.tune.objective import Measurement, Ranking, Row, pareto_front
from cdk_triton.tune.variants import Variant

COLUMNS = (
    "rank",
    "variant",
    "format",
    "dynamic_batching",
    "instance_group",
    "concurrency",
    "invocations_per_min",
    "p50_ms",
    "p90_ms",
    "p99_ms",
    "errors",
    "meets_slo",
    "instances_needed",
    "cost_per_hour",
)


def table_rows(ranking: Ranking, variants: Mapping[str, Variant]) -> list[dict[str, Any]]:
    out = []
    for i, row in enumerate(ranking.rows, 1):
        v = variants[row.variant]
        b = row.best
        out.append(
            {
                "rank": i,
                "variant": row.variant,
                "format": v.format,
                "dynamic_batching": v.dynamic_batching,
                "instance_group": v.instance_group,
                "concurrency": b.concurrency,
                "invocations_per_min": round(b.per_minute, 1),
                "p50_ms": round(b.p50_ms, 2),
                "p90_ms": round(b.p90_ms, 2),
                "p99_ms": round(b.p99_ms, 2),
                "errors": b.errors,
                "meets_slo": row.meets_slo,
                "instances_needed": row.instances_needed,
                "cost_per_hour": None if row.cost_per_hour is None else round(row.cost_per_hour, 3),
            }
        )
    return out


def render_table(ranking: Ranking, variants: Mapping[str, Variant], *, title: str, width: int = 160) -> str:
    """Seed 003's table, as text (rich), with the current declaration and the winner marked."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    heads = [
        "#",
        "variant",
        "format",
        "dyn. batching",
        "instances",
        "conc.",
        "inv/min",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "errors",
    ]
    has_cost = any(r.instances_needed is not None for r in ranking.rows)
    if has_cost:
        heads += ["instances needed", "$/hour"]
    for h in heads:
        table.add_column(
            h, justify="left" if h in ("variant", "format", "dyn. batching", "instances") else "right"
        )
    for r in table_rows(ranking, variants):
        mark = " (winner)" if r["variant"] == ranking.winner else ""
        mark += " (current)" if r["variant"] == ranking.current else ""
        cells = [
            str(r["rank"]),
            r["variant"] + mark,
            r["format"],
            r["dynamic_batching"],
            r["instance_group"],
            str(r["concurrency"]),
            f"{r['invocations_per_min']:,.0f}",
            f"{r['p50_ms']:.2f}",
            f"{r['p90_ms']:.2f}",
            f"{r['p99_ms']:.2f}" + ("" if r["meets_slo"] else " !"),
            str(r["errors"]),
        ]
        if has_cost:
            cells += [
                str(r["instances_needed"] or "-"),
                "-" if r["cost_per_hour"] is None else f"{r['cost_per_hour']:.2f}",
            ]
        table.add_row(*cells)
    console = Console(file=io.StringIO(), width=width, record=True, color_system=None)
    console.print(table)
    return console.export_text()


def write_csv(path: Path, ranking: Ranking, variants: Mapping[str, Variant]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS)
        writer.writeheader()
        for r in table_rows(ranking, variants):
            writer.writerow(r)


def write_json(
    path: Path,
    ranking: Ranking,
    variants: Mapping[str, Variant],
    measurements: Sequence[Measurement],
    meta: Mapping[str, Any],
) -> None:
    doc = {
        **meta,
        "winner": ranking.winner,
        "current": ranking.current,
        "gain": ranking.gain if ranking.gain != float("inf") else None,
        "decision": ranking.decision,
        "client_warning": ranking.client_warning,
        "table": table_rows(ranking, variants),
        "variants": {n: {"changes": v.changes, "current": v.current} for n, v in variants.items()},
        "measurements": [asdict(m) for m in measurements],
    }
    path.write_text(json.dumps(doc, indent=1, default=str) + "\n", encoding="utf-8")


def write_plots(out_dir: Path, ranking: Ranking, *, title: str) -> list[Path]:
    """throughput vs p99 per variant (Pareto front marked) and throughput vs concurrency."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows: Sequence[Row] = ranking.rows
    paths = []
    fig, ax = plt.subplots(figsize=(8, 5.5), dpi=110)
    pts = [(r.best.per_minute, r.best.p99_ms) for r in rows]
    front = set(pareto_front(pts))
    for i, (r, (t, lat)) in enumerate(zip(rows, pts, strict=True)):
        winner = r.variant == ranking.winner
        ax.scatter(
            [t],
            [lat],
            color="tab:red" if i in front else "tab:gray",
            zorder=3,
            marker="*" if winner else "o",
            s=180 if winner else 50,
        )
        ax.annotate(
            r.variant.split("__", 1)[-1], (t, lat), textcoords="offset points", xytext=(5, 4), fontsize=7
        )
    fpts = sorted(pts[i] for i in front)
    if len(fpts) > 1:
        ax.plot(
            [p[0] for p in fpts], [p[1] for p in fpts], color="tab:red", lw=1, ls="--", label="Pareto front"
        )
        ax.legend(loc="upper left")
    ax.set_xlabel("invocations per minute per instance (median of repeats)")
    ax.set_ylabel("p99 latency (ms)")
    ax.set_title(f"{title}: throughput vs p99")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    paths.append(out_dir / "throughput_vs_p99.png")
    fig.savefig(paths[-1])
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 5.5), dpi=110)
    for r in rows:
        xs = [p.concurrency for p in r.points]
        ys = [p.per_minute for p in r.points]
        ax.plot(
            xs,
            ys,
            marker="o",
            lw=2.5 if r.variant == ranking.winner else 1,
            label=r.variant.split("__", 1)[-1],
        )
    ax.set_xscale("log", base=2)
    ax.set_xlabel("concurrency (closed-loop clients)")
    ax.set_ylabel("invocations per minute per instance")
    ax.set_title(f"{title}: throughput vs concurrency")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    paths.append(out_dir / "throughput_vs_concurrency.png")
    fig.savefig(paths[-1])
    plt.close(fig)
    return paths
