"""``cdk-triton capacity``: parse, check the options, make the report (``estimate.build_report``), print.

Only the standard library loads at import (``cdk-triton --help`` stays light).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cdk_triton.errors import TritonValidationError, raise_all

DEFAULT_MANIFEST = "build/out/manifest.json"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "capacity",
        help="how many instances keep which models of a multi-model endpoint warm, at what cost",
        description="From the manifest's per-model memory, the instance type and optional traffic per model: "
        "models resident per instance (an estimate), instances to keep all warm or to reach a cache-hit ratio, "
        "the cost of a miss (a local cold load: CPU proxy of download, untar and GPU load), the cost per hour, "
        "and per model an inference component (hot) or the MME (long tail).",
    )
    p.add_argument(
        "--manifest", default=DEFAULT_MANIFEST, help=f"the build manifest (default: {DEFAULT_MANIFEST})"
    )
    p.add_argument(
        "--endpoint",
        default=None,
        help="the endpoint (default: the manifest's one multi-model endpoint); an endpoint with instance_pools "
        "gets one row per pool: what fits, copies per instance, cost vs priority 1",
    )
    p.add_argument("--instance-type", default=None, help="default: the endpoint's first instance type")
    p.add_argument("--traffic", default=None, help="YAML/JSON: rps: {model: n} or share: {model: weight}")
    p.add_argument("--target-hit-ratio", type=float, default=0.95, help="0 < ratio <= 1 (default 0.95)")
    p.add_argument("--price-per-hour", type=float, default=None, help="override the vendored on-demand price")
    p.add_argument(
        "--hot-share",
        type=float,
        default=None,
        help="traffic share from which a model is a component (default 0.10)",
    )
    p.add_argument(
        "--rps-per-copy",
        type=float,
        default=None,
        help="one component copy's throughput (copies = rps / this)",
    )
    p.add_argument("--no-measure", action="store_true", help="estimate every miss; start no local server")
    p.add_argument(
        "--measure-count",
        type=int,
        default=3,
        help="cold loads to measure, largest archives first (default 3)",
    )
    p.add_argument(
        "--rows", type=int, default=25, help="table rows, most requested first; 0: all (default 25)"
    )
    p.add_argument(
        "--gpu-readings",
        default=None,
        metavar="PATH",
        help="a GPU readings report (gpu-readings.json of the GPU check): models read on the instance "
        "type's GPU take their peak allocated bytes from it instead of the manifest's estimate",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON instead of the table")
    p.add_argument(
        "--plot",
        default=None,
        metavar="PATH",
        help="write a PNG: hit ratio vs instances, cost on a second axis",
    )
    p.set_defaults(func=cmd_capacity)


def _bad(prop: str, value: object, allowed: str) -> TritonValidationError:
    return TritonValidationError(
        "CapacityInvalid",
        prop=prop,
        value=value,
        problem="is out of range",
        allowed=allowed,
        fix=f"pass {prop} within {allowed}",
    )


def check_options(args: argparse.Namespace) -> None:
    """Every option's range, all problems at once, before anything is read or written."""
    errs = []
    if not 0 < args.target_hit_ratio <= 1:
        errs.append(_bad("--target-hit-ratio", args.target_hit_ratio, "0 < ratio <= 1"))
    if args.hot_share is not None and not 0 < args.hot_share <= 1:
        errs.append(_bad("--hot-share", args.hot_share, "0 < share <= 1"))
    if args.price_per_hour is not None and args.price_per_hour < 0:
        errs.append(_bad("--price-per-hour", args.price_per_hour, "a price >= 0"))
    if args.rps_per_copy is not None and args.rps_per_copy <= 0:
        errs.append(_bad("--rps-per-copy", args.rps_per_copy, "a rate > 0"))
    if args.rows < 0:
        errs.append(_bad("--rows", args.rows, "a count >= 0"))
    if args.measure_count < 0:
        errs.append(_bad("--measure-count", args.measure_count, "a count >= 0"))
    raise_all(errs)


def cmd_capacity(args: argparse.Namespace) -> int:
    from cdk_triton.capacity import cold, estimate, recommend, report
    from cdk_triton.capacity.traffic import no_traffic, read_traffic
    from cdk_triton.config.gpu_readings import read_readings
    from cdk_triton.config.manifest import read_manifest

    check_options(args)
    readings = read_readings(args.gpu_readings) if args.gpu_readings else None
    manifest = read_manifest(args.manifest)
    entry = estimate.endpoint_entry(manifest, args.endpoint)
    if entry.instance_pools is not None:  # one row per pool (capacity/pools.py)
        from cdk_triton.capacity import pools

        pool_report = pools.build_pool_report(manifest, entry, readings)
        if args.json:
            print(json.dumps(pools.to_json(pool_report), indent=1, sort_keys=True))
        else:
            print(pools.render(pool_report), end="")
        return 0
    instance_type = args.instance_type or (entry.instance_types[0] if entry.instance_types else "")
    estimate.usable_for(instance_type)  # an unknown type fails before any server starts
    names = sorted(entry.target_models)
    aliases = {t.target_model: n for n, t in entry.target_models.items()}
    traffic = read_traffic(args.traffic, names, aliases) if args.traffic else no_traffic(names)
    options = estimate.Options(
        instance_type=instance_type,
        target_hit_ratio=args.target_hit_ratio,
        price_per_hour=args.price_per_hour,
        hot_share=recommend.HOT_SHARE if args.hot_share is None else args.hot_share,
        rps_per_copy=args.rps_per_copy,
        gpu_readings=readings,
    )
    measured = cold.ColdLoads(skipped="--no-measure")
    if not args.no_measure:
        measured = cold.measure(manifest, entry.name, cold.choose(manifest, entry.name, args.measure_count))
    result = estimate.build_report(manifest, entry, traffic, options, measured_s=measured.seconds)
    if measured.skipped and not args.no_measure:
        result.notes.append(f"cold loads not measured: {measured.skipped}")
    if args.plot:
        path = report.write_plot(result, Path(args.plot))
        print(f"wrote {path}", file=sys.stderr)
    if args.json:
        print(json.dumps(report.to_json(result), indent=1, sort_keys=True))
    else:
        print(report.render_table(result, rows=args.rows), end="")
    return 0
