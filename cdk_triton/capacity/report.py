"""What the capacity report shows people: the table (rich), the JSON document and the plot."""

from __future__ import annotations

import io
import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from cdk_triton.capacity.estimate import CapacityReport, gib


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _size(nbytes: int) -> str:
    """Bytes for people: B, KiB, MiB or GiB."""
    value = float(nbytes)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.2f} GiB"


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:,.2f}"


def summary_lines(r: CapacityReport) -> list[str]:
    """The figures under the table, one per line."""
    u = r.usable
    per = r.resident_per_instance
    warm = (
        "impossible: " + ", ".join(r.too_big) + " fit no instance"
        if r.all_warm_instances is None
        else (
            f"{r.all_warm_instances} (lower bound {r.lower_bound_instances}) at {_money(r.cost(r.all_warm_instances))}/h"
        )
    )
    lines = [
        f"instance: {r.instance_type}, usable per instance (estimate): GPU {gib(u.gpu_bytes):.1f} GiB, "
        f"host {gib(u.host_bytes):.1f} GiB",
        f"models resident per instance (estimate, all warm): {min(per) if per else 0}-{max(per) if per else 0}"
        f" (at most {r.most_on_one_instance} of them on one instance, smallest first)",
        f"instances to keep all {len(r.models)} models warm: {warm}",
    ]
    if r.instances_for_target is not None:
        point = r.curve[r.instances_for_target - 1]
        lines.append(
            f"instances for a cache-hit ratio >= {r.target_hit_ratio:g}: {r.instances_for_target} "
            f"(hit ratio {_ratio(point.hit_ratio)}, mean added wait {point.miss_wait_s or 0:.3f} s per request) "
            f"at {_money(r.cost(r.instances_for_target))}/h"
        )
    components = [m for m in r.models if m.placement == "component"]
    if components:
        copies = sum(m.copies or 1 for m in components)
        rest = "-" if r.rest_warm_instances is None else str(r.rest_warm_instances)
        lines.append(
            f"recommended inference components: {', '.join(m.name for m in components)} ({copies} "
            f"{'copy' if copies == 1 else 'copies'}, each at least one GPU); the rest stays warm on {rest} MME "
            "instance(s)"
        )
    lines.append(f"price: {_money(r.price_per_hour)}/h per instance ({r.price_source})")
    lines.append(f"hit-ratio model: {r.hit_model}")
    lines.append(
        "residency: an estimate (usable memory after the CUDA contexts, Triton's pools and fragmentation; "
        "SageMaker unloads unused models only when memory runs short): --json lists every assumption"
    )
    lines += [f"note: {n}" for n in r.notes]
    return lines


def render_table(r: CapacityReport, *, width: int = 160, rows: int = 0) -> str:
    """The per-model table (the ``rows`` most requested; 0: all) and the summary, as text."""
    from rich.console import Console
    from rich.table import Table

    table = Table(
        title=f"cdk-triton capacity: endpoint {r.endpoint} ({r.mode}) on {r.instance_type}",
        caption="memory: measured | estimated (manifest), files (size_bytes, manifest v1), archive "
        "(compressed bytes); miss: local cold load (CPU proxy of download, untar and GPU load) or estimate",
    )
    heads = ["model", "GPU", "host", "memory", "share", "rps", "miss s", "miss", "place", "copies", "why"]
    for h in heads:
        table.add_column(h, justify="left" if h in ("model", "memory", "miss", "place", "why") else "right")
    shown = r.models[:rows] if rows else r.models
    for m in shown:
        table.add_row(
            m.name,
            _size(m.gpu_bytes),
            _size(m.host_bytes),
            m.memory_source,
            f"{m.share:.3f}",
            "-" if m.rps is None else f"{m.rps:g}",
            f"{m.miss_s:.3f}",
            "measured (CPU proxy)" if m.miss_source.startswith("measured") else "estimate",
            m.placement + ("" if m.fits else " (too big)"),
            "-" if m.copies is None else str(m.copies),
            m.why,
        )
    if len(shown) < len(r.models):
        table.add_row(f"... {len(r.models) - len(shown)} more", *[""] * (len(heads) - 1))
    console = Console(file=io.StringIO(), width=width, record=True, color_system=None)
    console.print(table)
    return console.export_text() + "\n".join(summary_lines(r)) + "\n"


def to_json(r: CapacityReport) -> dict[str, Any]:
    """The whole report as JSON-ready data (bytes as integers, the assumptions spelled out)."""
    data = asdict(r)
    data["cost_all_warm_per_hour"] = r.cost(r.all_warm_instances)
    data["cost_for_target_per_hour"] = r.cost(r.instances_for_target)
    data["assumptions"] = list(r.assumptions)
    return data


def write_json(r: CapacityReport, path: Path) -> Path:
    return _atomic(path, (json.dumps(to_json(r), indent=1, sort_keys=True) + "\n").encode())


def write_plot(r: CapacityReport, path: Path) -> Path:
    """Hit ratio vs instances (left axis) and cost per hour (right axis); the all-warm count marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [p.instances for p in r.curve]
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    if any(p.hit_ratio is not None for p in r.curve):
        ax.plot(
            xs,
            [p.hit_ratio or 0.0 for p in r.curve],
            marker="o",
            color="tab:blue",
            label="hit ratio (estimate)",
        )
        ax.axhline(r.target_hit_ratio, color="tab:blue", ls=":", lw=1, label=f"target {r.target_hit_ratio:g}")
    else:
        ax.plot(
            xs,
            [p.resident / max(len(r.models), 1) for p in r.curve],
            marker="o",
            color="tab:blue",
            label="share of models resident (no traffic given)",
        )
    if r.all_warm_instances:
        ax.axvline(r.all_warm_instances, color="tab:green", ls="--", lw=1, label="all warm")
    ax.set_xlabel(f"instances ({r.instance_type})")
    ax.set_ylabel("cache-hit ratio")
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    if r.price_per_hour is not None:
        right = ax.twinx()
        right.plot(
            xs, [p.cost_per_hour or 0.0 for p in r.curve], color="tab:red", lw=1.5, label="USD per hour"
        )
        right.set_ylabel("cost (USD per hour, on-demand)")
        right.legend(loc="lower right")
    ax.legend(loc="center right")
    ax.set_title(f"endpoint {r.endpoint}: cache-hit ratio and cost vs instances")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return _atomic(path, buf.getvalue())


def _atomic(path: Path, data: bytes) -> Path:
    """Write to a temp file beside ``path`` and rename: never a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
