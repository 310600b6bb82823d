"""``cdk-triton tune``: the configuration sweep of one model, locally or on a tuning endpoint."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

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


def cmd_tune(args: argparse.Namespace) -> int:
    from cdk_triton.tune import prices, report
    from cdk_triton.tune.apply import dump_document, load_document
    from cdk_triton.tune.run import Options, tune
    from cdk_triton.tune.sources import EndpointSource, LocalSource, Source, tuning_declaration
    from cdk_triton.tune.variants import Axes, generate

    config = Path(args.config)
    if not config.is_file():
        raise TritonValidationError(
            "DeclarationNotFound",
            prop="--config",
            value=str(config),
            problem="does not exist",
            allowed="a models.yaml file",
            fix="pass --config build/models.yaml",
        )
    if args.repeats < 1:
        raise TritonValidationError(
            "TuneInvalid",
            prop="--repeats",
            value=args.repeats,
            problem="must be at least 1",
            allowed="1, 2, 3, ...",
            fix="pass --repeats 3",
        )
    if args.budget <= 0:
        raise TritonValidationError(
            "TuneInvalid",
            prop="--budget",
            value=args.budget,
            problem="must be positive",
            allowed="seconds > 0",
            fix="pass --budget 120",
        )
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
            "(README: 'Tuning on the target GPU'), then cdk-triton tune ... --endpoint-name",
            args.prepare_endpoint,
        )
        return 0
    price = args.price_per_hour
    if price is None and args.target_rate is not None and args.instance_type:
        price = prices.on_demand(args.instance_type)
    out_dir = Path(args.out) if args.out else config.parent / "out" / "tune" / args.model
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
    if args.endpoint_name:
        if not args.tuning_manifest:
            raise TritonValidationError(
                "TuneInvalid",
                prop="--tuning-manifest",
                value=None,
                problem="is required with --endpoint-name",
                allowed="the manifest.json of the tuning build",
                fix="pass --tuning-manifest build/out/tune-endpoint/manifest.json",
            )
        from cdk_triton.config.manifest import read_manifest

        source: Source = EndpointSource(
            args.endpoint_name,
            read_manifest(args.tuning_manifest),
            endpoint_url=args.endpoint_url or os.environ.get("AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME"),
        )
    else:
        source = LocalSource(config, args.model, out_dir=config.parent / "out" / "tune" / "build")
    outcome = tune(
        source,
        variants,
        opts,
        config=config,
        out_dir=out_dir,
        apply=args.apply,
        allow_local_apply=args.allow_local_apply,
        plots=not args.no_plots,
        progress=sys.stderr.isatty(),
    )
    measured = {
        n: v for n, v in outcome.variants.items() if any(r.variant == n for r in outcome.ranking.rows)
    }
    where = (
        "this machine's CPU stand-ins (not a GPU instance)"
        if outcome.source == "local"
        else f"endpoint {args.endpoint_name}"
    )
    print(
        report.render_table(
            outcome.ranking,
            measured,
            title=f"cdk-triton tune {args.model}: {where}, {opts.repeats} repeats, median",
        )
    )
    for name, why in outcome.skipped.items():
        print(f"skipped {name}: {why}")
    if outcome.ranking.client_warning:
        print(f"warning: {outcome.ranking.client_warning}")
    print(outcome.ranking.decision)
    for f in outcome.files:
        print(f"wrote {f}")
    if outcome.diff:
        print(outcome.diff, end="")
        print(
            f"applied to {config}"
            if outcome.applied
            else f"not applied: rerun with --apply{' --allow-local-apply' if outcome.source == 'local' else ''} to write it"
        )
    print(json.dumps({"winner": outcome.ranking.winner, "elapsed_s": round(outcome.elapsed_s, 1)}))
    return 0
