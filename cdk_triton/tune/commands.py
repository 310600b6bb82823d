"""``cdk-triton tune``: parse into a ``TuneRequest``, make one call (``run_tune`` / ``prepare_endpoint``), print.

The run itself lives in ``run.py``, the request and its checks in ``request.py``. Only the standard
library loads at import (``cdk-triton --help`` stays light); the tuning run loads inside ``cmd_tune``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cdk_triton.config import modes

if TYPE_CHECKING:
    from cdk_triton.tune.request import TuneRequest
    from cdk_triton.tune.run import PreparedEndpoint, TuneOutcome


def _ints(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of integers") from None


def _onoff(text: str) -> tuple[bool, ...]:
    values = {"on": True, "off": False}
    parts = [p.strip().lower() for p in text.split(",") if p.strip()]
    if not parts or any(p not in values for p in parts):
        raise argparse.ArgumentTypeError(f"{text!r}: use on, off or on,off")
    return tuple(values[p] for p in parts)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "tune",
        help="sweep formats, dynamic batching and instances of one model; rank, plot, write the winner back",
        description="Measure each variant (locally, or on a tuning endpoint with --endpoint-name), rank by "
        "throughput per instance with p99 under --p99-ms and zero errors, and print the models.yaml diff of the winner.",
    )
    p.add_argument(
        "--config", default="build/models.yaml", help="the declaration (default: build/models.yaml)"
    )
    p.add_argument("--model", required=True, help="the model (or ensemble) to tune")
    p.add_argument(
        "--formats",
        default=None,
        help="e.g. onnx,torchscript,tensorrt (default: declared + other exportable)",
    )
    p.add_argument(
        "--batching", type=_onoff, default=(False, True), help="dynamic batching: on, off or on,off (default)"
    )
    p.add_argument(
        "--queue-delays",
        type=_ints,
        default=(100,),
        help="max_queue_delay_microseconds candidates (default 100)",
    )
    p.add_argument("--instances", type=_ints, default=(1, 2), help="model instances per device (default 1,2)")
    p.add_argument(
        "--concurrency", type=_ints, default=(16,), help="closed-loop clients per phase (default 16)"
    )
    _add_run_options(p)
    p.set_defaults(func=cmd_tune)


def _add_run_options(p: argparse.ArgumentParser) -> None:
    """The objective, the measuring place and the outputs."""
    p.add_argument("--budget", type=float, default=120.0, help="seconds for the whole sweep (default 120)")
    p.add_argument(
        "--repeats", type=int, default=3, help="repeats per phase; the median is reported (default 3)"
    )
    p.add_argument(
        "--p99-ms", type=float, default=None, help="latency SLO: p99 at or under this (default: none)"
    )
    p.add_argument(
        "--margin",
        type=float,
        default=0.05,
        help="how much a variant must beat the current one by (default 0.05)",
    )
    p.add_argument(
        "--target-rate", type=float, default=None, help="requests/s to serve: adds instances needed and cost"
    )
    p.add_argument(
        "--instance-type", default=None, help="the hosting instance type (price lookup, tuning endpoint)"
    )
    p.add_argument("--price-per-hour", type=float, default=None, help="override the vendored on-demand price")
    p.add_argument("--endpoint-name", default=None, help="measure on this deployed tuning endpoint (boto3)")
    p.add_argument(
        "--tuning-manifest", default=None, help="the manifest of the tuning build (with --endpoint-name)"
    )
    p.add_argument(
        "--endpoint-url", default=None, help="SageMaker Runtime URL override (e.g. the local front)"
    )
    p.add_argument(
        "--prepare-endpoint",
        default=None,
        metavar="NAME",
        help="write the tuning endpoint's models.yaml and exit",
    )
    p.add_argument(
        "--components",
        action="store_true",
        help="with --prepare-endpoint: one inference component per variant (each on its own accelerator) "
        "instead of the TargetModels of one multi-model endpoint",
    )
    p.add_argument(
        "--out",
        default=None,
        help="where the table, CSV, JSON and plots go (default: <config dir>/out/tune/<model>)",
    )
    p.add_argument("--apply", action="store_true", help="write the winner's fields back into models.yaml")
    p.add_argument(
        "--allow-local-apply",
        action="store_true",
        help="let --apply write results measured on the local CPU stand-ins",
    )
    p.add_argument("--no-plots", action="store_true", help="skip the PNG plots")


def _request(args: argparse.Namespace) -> TuneRequest:
    from cdk_triton.tune.request import TuneRequest
    from cdk_triton.tune.variants import Axes

    return TuneRequest(
        config=Path(args.config),
        model=args.model,
        axes=Axes(
            formats=tuple(f.strip() for f in args.formats.split(",")) if args.formats else None,
            batching=args.batching,
            queue_delays_us=args.queue_delays,
            instance_counts=args.instances,
            concurrency=args.concurrency,
        ),
        budget_s=args.budget,
        repeats=args.repeats,
        p99_ms=args.p99_ms,
        margin=args.margin,
        target_rate=args.target_rate,
        instance_type=args.instance_type,
        price_per_hour=args.price_per_hour,
        endpoint_name=args.endpoint_name,
        tuning_manifest=Path(args.tuning_manifest) if args.tuning_manifest else None,
        endpoint_url=args.endpoint_url,
        out_dir=Path(args.out) if args.out else None,
        apply=args.apply,
        allow_local_apply=args.allow_local_apply,
        plots=not args.no_plots,
        progress=sys.stderr.isatty(),
    )


def cmd_tune(args: argparse.Namespace) -> int:
    from cdk_triton.tune.run import prepare_endpoint, run_tune

    request = _request(args)
    if args.prepare_endpoint:
        _print_prepared(prepare_endpoint(request, args.prepare_endpoint, components=args.components), request)
    else:
        _print_outcome(run_tune(request), request)
    return 0


def _print_prepared(prepared: PreparedEndpoint, request: TuneRequest) -> None:
    what = (
        "inference components of endpoint"
        if modes.get(prepared.mode).components
        else "TargetModels of multi-model endpoint"
    )
    print(
        f"wrote {prepared.path}: {prepared.variants} variants as {what} "
        f"{prepared.endpoint_name} on {prepared.instance_type}"
    )
    print(
        f"next: cdk-triton build --config {prepared.path} --out {prepared.build_out} --upload, deploy it "
        f"(docs/guides/tune.md, 'Where it measures'), then cdk-triton tune ... --endpoint-name {prepared.endpoint_name}"
    )


def _print_outcome(o: TuneOutcome, request: TuneRequest) -> None:
    from cdk_triton.tune import report

    where = (
        "this machine's CPU stand-ins (not a GPU instance)"
        if o.source == "local"
        else f"endpoint {request.endpoint_name}"
    )
    title = f"cdk-triton tune {request.model}: {where}, {request.repeats} repeats, median"
    print(report.render_table(o.ranking, o.measured, title=title))
    for name, why in o.skipped.items():
        print(f"skipped {name}: {why}")
    if o.ranking.client_warning:
        print(f"warning: {o.ranking.client_warning}")
    print(o.ranking.decision)
    for f in o.files:
        print(f"wrote {f}")
    if o.diff:
        print(o.diff, end="")
        flag = " --allow-local-apply" if o.source == "local" else ""
        print(
            f"applied to {request.config}"
            if o.applied
            else f"not applied: rerun with --apply{flag} to write it"
        )
    print(json.dumps({"winner": o.ranking.winner, "elapsed_s": round(o.elapsed_s, 1)}))
