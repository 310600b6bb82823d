"""``cdk-triton tune``: the configuration sweep of one model, locally or on a tuning endpoint."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from cdk_triton.errors import TritonValidationError


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
    p.set_defaults(func=cmd_tune)


def _bad(
    prop: str, value: object, problem: str, allowed: str, fix: str, code: str = "TuneInvalid"
) -> TritonValidationError:
    return TritonValidationError(code, prop=prop, value=value, problem=problem, allowed=allowed, fix=fix)


def _check_args(args: argparse.Namespace) -> Path:
    """Every argument checked before anything is built, served or written; returns the declaration path."""
    config = Path(args.config)
    if not config.is_file():
        raise _bad(
            "--config",
            str(config),
            "does not exist",
            "a models.yaml file",
            "pass --config build/models.yaml",
            "DeclarationNotFound",
        )
    if args.repeats < 1:
        raise _bad("--repeats", args.repeats, "must be at least 1", "1, 2, 3, ...", "pass --repeats 3")
    if args.budget <= 0:
        raise _bad("--budget", args.budget, "must be positive", "seconds > 0", "pass --budget 120")
    if not 0 <= args.margin < 10:
        raise _bad(
            "--margin",
            args.margin,
            "must be a fraction",
            "0 <= margin < 10 (0.05 = 5 %)",
            "pass --margin 0.05",
        )
    if args.endpoint_name and not args.tuning_manifest:
        raise _bad(
            "--tuning-manifest",
            None,
            "is required with --endpoint-name",
            "the manifest.json of the tuning build",
            "pass --tuning-manifest build/out/tune-endpoint/manifest.json",
        )
    return config


def _prepare_endpoint(args: argparse.Namespace, config: Path, doc: object, variants: list) -> int:
    from cdk_triton.tune.apply import dump_document
    from cdk_triton.tune.sources import tuning_declaration

    instance_type = args.instance_type or "ml.g5.xlarge"
    tdoc = tuning_declaration(
        doc, args.model, variants, endpoint_name=args.prepare_endpoint, instance_type=instance_type
    )
    dest = config.parent / f"models.tune-{args.model}.yaml"
    dest.write_text(dump_document(tdoc), encoding="utf-8")
    print(
        f"wrote {dest}: {len(variants)} variants as TargetModels of multi-model endpoint {args.prepare_endpoint} on {instance_type}"
    )
    print(
        f"next: cdk-triton build --config {dest} --out {config.parent / 'out' / 'tune-endpoint'} --upload, deploy it "
        f"(README: 'Tuning on the target GPU'), then cdk-triton tune ... --endpoint-name {args.prepare_endpoint}"
    )
    return 0


def _source(args: argparse.Namespace, config: Path) -> object:
    from cdk_triton.tune.sources import EndpointSource, LocalSource

    if args.endpoint_name:
        from cdk_triton.config.manifest import read_manifest

        url = args.endpoint_url or os.environ.get("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME")
        return EndpointSource(args.endpoint_name, read_manifest(args.tuning_manifest), endpoint_url=url)
    return LocalSource(config, args.model, out_dir=config.parent / "out" / "tune" / "build")


def _print_outcome(args: argparse.Namespace, config: Path, outcome: object, repeats: int) -> None:
    from cdk_triton.tune import report

    o: Any = outcome
    measured = {n: v for n, v in o.variants.items() if any(r.variant == n for r in o.ranking.rows)}
    where = (
        "this machine's CPU stand-ins (not a GPU instance)"
        if o.source == "local"
        else f"endpoint {args.endpoint_name}"
    )
    print(
        report.render_table(
            o.ranking, measured, title=f"cdk-triton tune {args.model}: {where}, {repeats} repeats, median"
        )
    )
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
        print(f"applied to {config}" if o.applied else f"not applied: rerun with --apply{flag} to write it")
    print(json.dumps({"winner": o.ranking.winner, "elapsed_s": round(o.elapsed_s, 1)}))


def cmd_tune(args: argparse.Namespace) -> int:
    from cdk_triton.tune import prices
    from cdk_triton.tune.apply import load_document
    from cdk_triton.tune.run import Options, tune
    from cdk_triton.tune.variants import Axes, generate

    config = _check_args(args)
    formats = tuple(f.strip() for f in args.formats.split(",")) if args.formats else None
    axes = Axes(
        formats=formats,
        batching=args.batching,
        queue_delays_us=args.queue_delays,
        instance_counts=args.instances,
        concurrency=args.concurrency,
    )
    doc = load_document(config)
    variants = generate(doc, args.model, axes)
    if args.prepare_endpoint:
        return _prepare_endpoint(args, config, doc, variants)
    price = args.price_per_hour
    if price is None and args.target_rate is not None and args.instance_type:
        price = prices.on_demand(args.instance_type)
    opts = Options(
        model=args.model,
        axes=axes,
        budget_s=args.budget,
        repeats=args.repeats,
        p99_ms=args.p99_ms,
        margin=args.margin,
        target_rate=args.target_rate,
        price_per_hour=price,
    )
    out_dir = Path(args.out) if args.out else config.parent / "out" / "tune" / args.model
    outcome = tune(
        _source(args, config),  # type: ignore[arg-type]
        variants,
        opts,
        config=config,
        out_dir=out_dir,
        apply=args.apply,
        allow_local_apply=args.allow_local_apply,
        plots=not args.no_plots,
        progress=sys.stderr.isatty(),
    )
    _print_outcome(args, config, outcome, opts.repeats)
    return 0
