"""One tuning run: measure every variant within a time budget, rank, report, optionally write back.

:func:`run_tune` runs a :class:`~cdk_triton.tune.request.TuneRequest` (``cdk-triton tune``): the variants
of the declaration, the source they are measured on (the local endpoint or a tuning endpoint), then
:func:`tune`. :func:`prepare_endpoint` writes the declaration of a tuning endpoint instead.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdk_triton.config import modes
from cdk_triton.tune import report
from cdk_triton.tune.apply import render_change, write_atomically
from cdk_triton.tune.objective import Measurement, Ranking, rank
from cdk_triton.tune.request import Options, TuneRequest
from cdk_triton.tune.sources import Source, run_phase
from cdk_triton.tune.variants import Variant, generate

#: a variant's build + server start, assumed until the first one is timed
DEFAULT_OPEN_S = 8.0
MIN_PHASE_S = 0.3


@dataclass
class TuneOutcome:
    """What a tuning run measured, skipped, ranked and wrote (``diff``: the winner's models.yaml change)."""

    variants: dict[str, Variant]
    measurements: list[Measurement]
    skipped: dict[str, str]
    ranking: Ranking
    elapsed_s: float
    source: str
    files: list[Path] = field(default_factory=list)
    diff: str = ""
    applied: bool = False

    @property
    def measured(self) -> dict[str, Variant]:
        """The variants that have a row in the ranking."""
        ranked = {r.variant for r in self.ranking.rows}
        return {n: v for n, v in self.variants.items() if n in ranked}


@dataclass(frozen=True, kw_only=True, slots=True)
class PreparedEndpoint:
    """The declaration :func:`prepare_endpoint` wrote: every variant a TargetModel of one MME, or a
    component of one inference-components endpoint (``mode``)."""

    path: Path
    variants: int
    endpoint_name: str
    instance_type: str
    build_out: Path
    mode: str = modes.MULTI_MODEL.name


def prepare_endpoint(
    request: TuneRequest, endpoint_name: str, *, components: bool = False
) -> PreparedEndpoint:
    """Write ``models.tune-<model>.yaml`` next to the declaration: the tuning endpoint's declaration
    (``components``: an inference-components endpoint, one component per variant)."""
    from cdk_triton.tune.apply import dump_document, load_document
    from cdk_triton.tune.sources import tuning_declaration

    request.check()
    config = Path(request.config)
    doc = load_document(config)
    variants = generate(doc, request.model, request.axes)
    instance_type = request.tuning_instance_type
    mode = (modes.INFERENCE_COMPONENTS if components else modes.MULTI_MODEL).name
    tdoc = tuning_declaration(
        doc, request.model, variants, endpoint_name=endpoint_name, instance_type=instance_type, mode=mode
    )
    dest = config.parent / f"models.tune-{request.model}.yaml"
    dest.write_text(dump_document(tdoc), encoding="utf-8")
    return PreparedEndpoint(
        path=dest,
        variants=len(variants),
        endpoint_name=endpoint_name,
        instance_type=instance_type,
        build_out=config.parent / "out" / "tune-endpoint",
        mode=mode,
    )


def run_tune(request: TuneRequest) -> TuneOutcome:
    """Check the request, generate the variants, measure them where asked, rank, report, write back."""
    from cdk_triton.tune import prices
    from cdk_triton.tune.apply import load_document

    request.check()
    config = Path(request.config)
    variants = generate(load_document(config), request.model, request.axes)
    price = request.price_per_hour
    if price is None and request.target_rate is not None and request.instance_type:
        price = prices.on_demand(request.instance_type)
    opts = dataclasses.replace(request, price_per_hour=price)  # a request is the Options of its sweep
    return tune(
        _source(request),
        variants,
        opts,
        config=config,
        out_dir=request.results_dir,
        apply=request.apply,
        allow_local_apply=request.allow_local_apply,
        plots=request.plots,
        progress=request.progress,
    )


def _source(request: TuneRequest) -> Source:
    """A tuning endpoint (``endpoint_name``) or the local endpoint, serving one variant at a time."""
    from cdk_triton.tune.sources import EndpointSource, LocalSource

    config = Path(request.config)
    if request.endpoint_name and request.tuning_manifest:
        from cdk_triton.config.manifest import read_manifest

        url = request.endpoint_url or os.environ.get("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME")
        manifest = read_manifest(request.tuning_manifest)
        return EndpointSource(request.endpoint_name, manifest, endpoint_url=url)
    return LocalSource(config, request.model, out_dir=config.parent / "out" / "tune" / "build")


def measure(
    source: Source, variants: Sequence[Variant], opts: Options, *, progress: bool = True
) -> tuple[list[Measurement], dict[str, str], float]:
    """Every variant at every concurrency, ``repeats`` times, inside the budget (the current one always)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    t0 = time.monotonic()
    measurements: list[Measurement] = []
    skipped: dict[str, str] = {}
    runnable = []
    for v in variants:
        reason = source.skip_reason(v)
        if reason:
            skipped[v.name] = reason
        else:
            runnable.append(v)
    phases_per_variant = len(opts.axes.concurrency) * opts.repeats
    open_s = DEFAULT_OPEN_S
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        disable=not progress,
        transient=True,
        console=_stderr_console(),
    ) as bar:
        task = bar.add_task("tuning", total=len(runnable) * phases_per_variant)
        for i, v in enumerate(runnable):
            left = opts.budget_s - (time.monotonic() - t0)
            variants_left = len(runnable) - i
            phase_s = (left - open_s * variants_left) / (variants_left * phases_per_variant * 1.3)
            if phase_s < MIN_PHASE_S and not v.current and i > 0:
                skipped[v.name] = f"time budget exhausted ({opts.budget_s:g} s): raise --budget to measure it"
                bar.advance(task, phases_per_variant)
                continue
            phase_s = max(phase_s, MIN_PHASE_S)
            bar.update(task, description=f"{v.name}: build + start")
            t_open = time.monotonic()
            with source.open(v) as target:
                open_s = 0.5 * open_s + 0.5 * (time.monotonic() - t_open) if i else time.monotonic() - t_open
                for repeat in range(opts.repeats):
                    for conc in opts.axes.concurrency:
                        bar.update(task, description=f"{v.name}: c={conc} repeat {repeat + 1}/{opts.repeats}")
                        measurements.append(run_phase(target, v, conc, repeat, phase_s, source.kind))
                        bar.advance(task)
    return measurements, skipped, time.monotonic() - t0


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(file=sys.stderr)


def tune(
    source: Source,
    variants: Sequence[Variant],
    opts: Options,
    *,
    config: Path,
    out_dir: Path,
    apply: bool = False,
    allow_local_apply: bool = False,
    progress: bool = True,
    plots: bool = True,
) -> TuneOutcome:
    """Measure, rank, write the table / CSV / JSON / plots to ``out_dir``, and the winner back if asked."""
    from cdk_triton.errors import TritonValidationError

    if apply and source.kind == "local" and not allow_local_apply:
        raise TritonValidationError(
            "TuneLocalApply",
            prop="--apply",
            value="local measurements",
            problem="would write results measured on this CPU's stand-in backends into models.yaml; they do not predict a GPU instance",
            allowed="--apply with --endpoint-name (measured on the target instance), or --apply --allow-local-apply",
            fix="measure on the target hardware with --endpoint-name, or pass --allow-local-apply to accept local figures",
        )
    measurements, skipped, elapsed = measure(source, variants, opts, progress=progress)
    by_name = {v.name: v for v in variants}
    current = next(v.name for v in variants if v.current)
    ranking = rank(
        measurements,
        current=current,
        p99_ms=opts.p99_ms,
        margin=opts.margin,
        target_rate=opts.target_rate,
        price_per_hour=opts.price_per_hour,
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    ranked = {r.variant for r in ranking.rows}
    measured = {n: v for n, v in by_name.items() if n in ranked}
    files = [out_dir / "results.csv", out_dir / "results.json"]
    report.write_csv(files[0], ranking, measured)
    meta = {
        "model": opts.model,
        "source": source.kind,
        "budget_s": opts.budget_s,
        "elapsed_s": round(elapsed, 1),
        "repeats": opts.repeats,
        "p99_slo_ms": opts.p99_ms,
        "margin": opts.margin,
        "skipped": skipped,
    }
    report.write_json(files[1], ranking, measured, measurements, meta)
    if plots:
        files += report.write_plots(out_dir, ranking, title=opts.model)
    outcome = TuneOutcome(by_name, measurements, skipped, ranking, elapsed, source.kind, files)
    if ranking.winner != current:
        new_text, outcome.diff = render_change(config, by_name[ranking.winner])
        if apply:
            write_atomically(config, new_text)
            outcome.applied = True
    return outcome
