"""``cdk-triton build``: run the build stage with progress bars and a summary table.

Exit codes (cdk_triton/cli.py): 0 success, 1 BuildError, 2 bad declarations (TritonValidationError).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

DEFAULT_CONFIG = "build/models.yaml"
#: the most rows the summary table shows (a fleet's build shows the models that changed)
SUMMARY_ROWS = 40


def register(subparsers: Any) -> None:
    """Add the ``build`` subcommand."""
    p = subparsers.add_parser(
        "build",
        help="export, verify, package (and upload) the declared models; write the manifest",
        description="Build Triton model repositories from build/models.yaml and write <out>/manifest.json.",
    )
    p.add_argument("--config", default=DEFAULT_CONFIG, help=f"declaration file (default: {DEFAULT_CONFIG})")
    p.add_argument("--out", default=None, help="output directory (default: <config dir>/out)")
    p.add_argument("--upload", action="store_true", help="upload artifacts to the artifact location (S3)")
    p.add_argument("--only", default=None, metavar="NAME", help="build only this model or endpoint")
    p.add_argument("--force", action="store_true", help="rebuild everything, ignoring the cache")
    p.add_argument(
        "--artifact-location",
        default=None,
        metavar="S3_URI",
        help="override the declared s3://bucket/prefix (or set CDK_TRITON_ARTIFACT_LOCATION)",
    )
    p.add_argument(
        "--formats",
        default=None,
        metavar="LIST",
        help="build only models of these formats, e.g. onnx,torchscript,python,ensemble "
        "(an endpoint is built only when all its models are built or merged)",
    )
    p.add_argument(
        "--merge-manifest",
        action="append",
        default=None,
        metavar="PATH",
        help="join another build's manifest (repeatable: the TensorRT build on a GPU, every --shard of a "
        "fleet); its models are taken from its cache, not exported again",
    )
    p.add_argument(
        "--build-missing",
        action="store_true",
        help="with --merge-manifest of --shard manifests: export here the models no shard holds (a failed "
        "shard), each with a warning (default: an incomplete shard set is IncompleteShardSet)",
    )
    p.add_argument(
        "--jobs",
        default="auto",
        metavar="N",
        help="worker processes exporting models in parallel (default: auto = the cores, bounded by the "
        "available memory over a worker's peak RSS); the outputs are the same bytes whatever N is",
    )
    p.add_argument(
        "--shard",
        default=None,
        metavar="I/N",
        help="build only shard I (0-based) of N: a stable share of the models (rendezvous hashing, "
        "ensembles with their steps), no endpoint; join the shards with --merge-manifest",
    )
    p.add_argument(
        "--list-shards",
        default=None,
        metavar="N",
        help='print {"shards": N, "assignment": [[model, ...], ...]} as JSON and build nothing',
    )
    p.add_argument(
        "--verify",
        action="store_true",
        help="hash every cached model and output in full (rebuild what is corrupt) instead of trusting size/mtime",
    )
    p.add_argument(
        "--no-target-runtime",
        action="store_true",
        help="skip the release-runtime check (every TorchScript / ONNX artifact loaded and run on its sample in "
        "the declared release's own libtorch / ONNX Runtime, an environment per release created once from the "
        "package index); the manifest records the models skipped and synth warns they may not load",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument(
        "--verbose",
        action="store_true",
        help="print each warning's full detail (e.g. the CVE list of an advisory warning) under its one line "
        "(default: one line per warning, naming the command that shows the detail)",
    )
    p.set_defaults(func=run)
    register_gpu_check(subparsers)


def register_gpu_check(subparsers: Any) -> None:
    """Add the ``gpu-check`` subcommand (logic: ``cdk_triton.builder.gpu_check``)."""
    p = subparsers.add_parser(
        "gpu-check",
        help="on a CUDA host: build, run every GPU-placed model on the GPU (parity, memory), write the readings",
        description="Build the declaration, run each GPU-placed model's artifact on CUDA at batch 1 and its "
        "max_batch_size against eager (on the GPU and on CPU), measure its GPU memory, print measured against "
        "manifest figures and write <out>/gpu-readings.json (never the manifest). Exits 1 without CUDA.",
    )
    p.add_argument("--config", default=DEFAULT_CONFIG, help=f"declaration file (default: {DEFAULT_CONFIG})")
    p.add_argument("--out", default=None, help="build output directory (default: <config dir>/out)")
    p.add_argument("--report", default=None, help="readings report path (default: <out>/gpu-readings.json)")
    p.set_defaults(func=run_gpu_check)


def run_gpu_check(args: argparse.Namespace) -> int:
    from cdk_triton.builder.gpu_check import run_check

    run_check(args.config, out=args.out, report=args.report)
    return 0


def run(args: argparse.Namespace) -> int:
    """Run the build and print a summary table (a plain build first asks the no-op stamp)."""
    if args.list_shards is not None:
        return list_shards(args.config, args.list_shards)
    from cdk_triton.builder import stamp

    plain = stamp.plain_options(args)
    known = stamp.answer(plain) if plain is not None else None
    if known is not None:  # nothing moved since a no-op build: its lines, without loading the build
        lines, warnings = known
        if not args.no_progress:
            for w in warnings:
                print(f"warning: {w}", file=sys.stderr)
        sys.stdout.write(lines)
        return 0
    import time

    from cdk_triton.builder.steps import run_build

    started = time.time_ns()

    def write_stamp(ctx: Any) -> None:
        if plain is not None:
            stamp.record(ctx, plain, started, noop_text(ctx.result))

    result = run_build(
        args.config,
        out_dir=args.out,
        upload=args.upload,
        only=args.only,
        force=args.force,
        progress=not args.no_progress,
        artifact_location=args.artifact_location,
        formats=args.formats,
        merge_manifest=args.merge_manifest,
        verify=args.verify,
        jobs=args.jobs,
        shard=args.shard,
        build_missing=args.build_missing,
        on_success=write_stamp,
        verbose=args.verbose,
        target_runtime=False if args.no_target_runtime else None,
    )
    text = noop_text(result)
    if text is not None:
        # a no-op build: plain lines, without rich's import (most of a no-op's time is starting up)
        sys.stdout.write(text)
        return 0
    totals = _totals(result)
    from rich.console import Console
    from rich.table import Table

    console = Console(file=sys.stdout)
    table = Table(title="cdk-triton build")
    for col in ("model", "format", "status", "parity max |diff|"):
        table.add_column(col)
    rows = result.rows
    if len(rows) > SUMMARY_ROWS:  # a fleet: the models that changed, and a count of the others
        rows = [r for r in rows if r["status"] != "cached"][:SUMMARY_ROWS]
    for row in rows:
        table.add_row(row["model"], row["format"], row["status"], row["parity"])
    if len(rows) < len(result.rows):
        cached = sum(1 for r in result.rows if r["status"] == "cached")
        table.caption = (
            f"{len(result.rows) - len(rows)} of {len(result.rows)} models not shown; {cached} were cached"
        )
    console.print(table)
    console.print(totals)
    for name, why in result.skipped_models.items():
        console.print(f"[yellow]skipped[/yellow] {name}: {why}")
    return 0


def _totals(result: Any) -> str:
    missing = getattr(result, "built_missing", [])
    apart = f" ({len(missing)} of them in no merged shard: --build-missing)" if missing else ""
    return (
        f"exported {result.exported}{apart}, reconfigured {result.reconfigured}, packaged {result.packaged}, uploaded {result.uploaded}, "
        f"copied {result.copied}, up to date {result.skipped}; "
        f"manifest: {result.manifest_path} (uploaded: {str(result.manifest.uploaded).lower()})"
    )


def noop_text(result: Any) -> str | None:
    """What a build that found every model cached prints (None when it exported or reconfigured one)."""
    if not all(r["status"] in ("cached", "skipped") for r in result.rows):
        return None
    cached = sum(1 for r in result.rows if r["status"] == "cached")
    lines = [f"cdk-triton build: {cached} models up to date", _totals(result)]
    lines += [f"skipped {name}: {why}" for name, why in result.skipped_models.items()]
    return "\n".join(lines) + "\n"


def list_shards(config: str, count: str) -> int:
    """``--list-shards N``: the shard assignment as JSON on stdout (nothing built or written)."""
    from cdk_triton.builder import shards
    from cdk_triton.builder.declarations import load_declaration

    n = shards.parse_count(count)
    spec = load_declaration(config)
    shards.check_count(spec, n, prop="--list-shards", value=count)
    print(json.dumps({"shards": n, "assignment": shards.assign(spec, n)}))
    return 0
