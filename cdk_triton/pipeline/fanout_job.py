"""The S3 side of the pipeline's fan-out build: plan the shards, move shard outputs, summarize failures.

The fan-out's steps (``cdk_triton.pipeline.fanout``) run ``cdk-triton build`` and call this module for
everything that touches S3, with boto3 and the standard library only (no aws-cdk-lib), as
``python -m cdk_triton.pipeline.fanout_job <verb> ...``:

* ``plan``: read ``cdk-triton build --list-shards N``'s JSON and the declaration, split every shard's
  models into a CPU item (CodeBuild) and a TensorRT item (SageMaker job), write the two item lists the
  Distributed Maps read (``items-cpu.json``, ``items-tensorrt.json``), preflight the SageMaker job quota;
* ``put`` / ``get``: one build output directory as one tar.gz object (written whole or not at all);
* ``fetch``: the merge step's inputs: every shard output that exists, the ``--merge-manifest`` arguments
  for them, and the summary of the shards that failed (a missing TensorRT shard fails the merge: its
  plans cannot be built on the merge step's CPU; a missing CPU shard's models are built by the merge,
  which is then given ``--build-missing``: without it a merge of shard manifests refuses an incomplete set);
* ``summary``: the same summary alone, for the state machine's failure path.

Every key comes from ``cdk_triton.config.layout`` (``pipeline/fanout/<run>/...`` under the prefix).
``AWS_ENDPOINT_URL`` is honoured by boto3, so the tests run these verbs against moto.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cdk_triton.config import formats, layout
from cdk_triton.pipeline.gpu_job import GpuJobError, preflight_quota, safe_extract

CPU = layout.FANOUT_CPU
#: the shards of the GPU-only formats (``Format.gpu_only``), built by the GPU job
GPU = layout.FANOUT_GPU
MERGE_ARGS = "merge-args.txt"
#: Exit status of ``fetch`` when a GPU shard has no output (the merge cannot build them on CPU).
EXIT_GPU_SHARD_FAILED = 3
EXIT_TENSORRT_SHARD_FAILED = EXIT_GPU_SHARD_FAILED  # the former name


@dataclass(frozen=True, kw_only=True)
class Store:
    """Where a run's objects live: the artifact bucket, its prefix ('' or ending '/'), the KMS key."""

    bucket: str
    prefix: str
    kms_key_arn: str | None = None

    def key(self, relative: str) -> str:
        return f"{self.prefix}{relative}"


def _client(name: str) -> Any:
    import boto3

    return boto3.client(name)


def model_formats(declaration: Path) -> dict[str, str]:
    """Model name -> declared format, from models.yaml (read with ``yaml.safe_load``)."""
    import yaml

    data = yaml.safe_load(declaration.read_text("utf-8")) or {}
    return {str(m["name"]): str(m.get("format", "")) for m in data.get("models", []) or []}


def shard_items(
    assignment: dict[str, Any], model_format: dict[str, str], *, run: str, prefix: str, gpu: bool
) -> dict[str, list[dict[str, Any]]]:
    """The Distributed Maps' items of each kind: one per shard that has models of that kind.

    A shard's models of a GPU-only format (``Format.gpu_only``: TensorRT) go to the :data:`GPU` item
    only when the pipeline has a GPU job (``gpu``); every other model goes to the :data:`CPU` item
    (built with the CPU formats)."""
    shards = int(assignment["shards"])
    out: dict[str, list[dict[str, Any]]] = {CPU: [], GPU: []}
    for index, models in enumerate(assignment["assignment"]):
        by_kind: dict[str, list[str]] = {CPU: [], GPU: []}
        for m in models:
            kind = GPU if gpu and formats.is_gpu_only(model_format.get(m)) else CPU
            by_kind[kind].append(str(m))
        for kind, names in by_kind.items():
            if names:
                out[kind].append(
                    {
                        "shard": index,
                        "shards": shards,
                        "shard_arg": f"{index}/{shards}",
                        "kind": kind,
                        "models": names,
                        "output_key": prefix + layout.fanout_shard_output_key(run, index, kind),
                    }
                )
    return out


def _put_bytes(s3: Any, store: Store, key: str, body: bytes) -> None:
    kw: dict[str, Any] = {"Bucket": store.bucket, "Key": key, "Body": body}
    if store.kms_key_arn:
        kw.update(ServerSideEncryption="aws:kms", SSEKMSKeyId=store.kms_key_arn)
    s3.put_object(**kw)


def _add_file(tar: tarfile.TarFile, path: Path, arcname: str) -> None:
    """Add ``path`` as a regular file: the build hard-links outputs to its cache, and a hard-link member
    would be refused on extraction (only regular files and directories are extracted)."""
    info = tar.gettarinfo(str(path), arcname)
    info.type = tarfile.REGTYPE
    info.linkname = ""
    info.size = path.stat().st_size
    with path.open("rb") as f:
        tar.addfile(info, f)


def put_dir(s3: Any, store: Store, directory: Path, key: str) -> None:
    """Upload ``directory`` as one tar.gz object (one PUT of a finished file: whole or absent)."""
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "out.tar.gz"
        with tarfile.open(archive, "w:gz") as tar:
            for path in sorted(directory.rglob("*")):
                if path.is_file() and not path.is_symlink():
                    _add_file(tar, path, str(path.relative_to(directory)))
        extra = (
            {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": store.kms_key_arn} if store.kms_key_arn else {}
        )
        s3.upload_file(str(archive), store.bucket, key, ExtraArgs=extra or None)


def get_dir(s3: Any, store: Store, key: str, directory: Path) -> bool:
    """Extract the tar.gz at ``key`` into ``directory``; False when there is no such object."""
    try:
        s3.head_object(Bucket=store.bucket, Key=key)
    except Exception as exc:  # noqa: BLE001 - botocore's ClientError 404 and friends
        if "404" in str(exc) or "Not Found" in str(exc) or "NoSuchKey" in str(exc):
            return False
        raise
    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "in.tar.gz"
        s3.download_file(store.bucket, key, str(archive))
        staging = Path(tmp) / "x"
        staging.mkdir()
        with tarfile.open(archive, "r:gz") as tar:
            safe_extract(tar, staging)
        directory.mkdir(parents=True, exist_ok=True)
        for path in sorted(staging.rglob("*")):
            dest = directory / path.relative_to(staging)
            if path.is_dir():
                dest.mkdir(parents=True, exist_ok=True)
            else:
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.replace(path, dest)
    return True


def _items(s3: Any, store: Store, run: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for kind in (CPU, GPU):
        key = store.key(layout.fanout_items_key(run, kind))
        try:
            body = s3.get_object(Bucket=store.bucket, Key=key)["Body"].read()
        except Exception as exc:  # noqa: BLE001
            if "NoSuchKey" in str(exc) or "404" in str(exc):
                continue
            raise
        items += json.loads(body)
    return items


def _exists(s3: Any, store: Store, key: str) -> bool:
    try:
        s3.head_object(Bucket=store.bucket, Key=key)
    except Exception as exc:  # noqa: BLE001
        if "404" in str(exc) or "Not Found" in str(exc):
            return False
        raise
    return True


def summarize(s3: Any, store: Store, run: str, *, log: Any = print) -> dict[str, Any]:
    """The shards without an output and their models; written to ``failed-models.json`` and printed."""
    items = _items(s3, store, run)
    failed = [i for i in items if not _exists(s3, store, i["output_key"])]
    summary = {
        "run": run,
        "shards": len(items),
        "failed_shards": [
            {"shard": i["shard_arg"], "kind": i["kind"], "models": i["models"]} for i in failed
        ],
        "failed_models": sorted(m for i in failed for m in i["models"]),
    }
    _put_bytes(s3, store, store.key(layout.fanout_failures_key(run)), json.dumps(summary, indent=1).encode())
    if failed:
        log(f"{len(failed)} of {len(items)} shards failed; their models:")
        for i in failed:
            log(f"  shard {i['shard_arg']} ({i['kind']}): {', '.join(i['models'])}")
    else:
        log(f"all {len(items)} shards built")
    log(f"summary: s3://{store.bucket}/{store.key(layout.fanout_failures_key(run))}")
    return summary


def fetch(s3: Any, store: Store, run: str, out: Path, *, log: Any = print) -> int:
    """Download every shard output into ``out/<shard>-<kind>/`` and write ``out/merge-args.txt``."""
    summary = summarize(s3, store, run, log=log)
    failed = {(f["shard"], f["kind"]) for f in summary["failed_shards"]}
    args: list[str] = []
    for item in sorted(_items(s3, store, run), key=lambda i: (i["shard"], i["kind"])):
        if (item["shard_arg"], item["kind"]) in failed:
            continue
        where = out / f"{item['shard']}-{item['kind']}"
        get_dir(s3, store, item["output_key"], where)
        args += ["--merge-manifest", str(where / "manifest.json")]
    if failed and not any(f["kind"] == GPU for f in summary["failed_shards"]):
        args.append("--build-missing")  # the merge exports the failed CPU shards' models, with a warning each
    out.mkdir(parents=True, exist_ok=True)
    (out / MERGE_ARGS).write_text(" ".join(args) + "\n")
    trt = [f for f in summary["failed_shards"] if f["kind"] == GPU]
    if trt:
        log(
            "error: TensorRT shards failed and their plans cannot be built on the merge step's CPU: "
            + "; ".join(f"{f['shard']}: {', '.join(f['models'])}" for f in trt)
        )
        return EXIT_GPU_SHARD_FAILED
    if failed:
        log(
            "the models of the failed CPU shards are built by the merge step (--build-missing: a warning "
            "per model, counted apart in its summary)"
        )
    return 0


def write_items(
    s3: Any,
    store: Store,
    *,
    run: str,
    assignment: dict[str, Any],
    declaration: Path,
    gpu_kind: str | None,
    gpu_instance_type: str | None,
    sagemaker_concurrency: int,
    quotas: Any = None,
    log: Any = print,
) -> dict[str, list[dict[str, Any]]]:
    """Write the item lists of a run; preflight the SageMaker job quota when TensorRT items exist."""
    items = shard_items(
        assignment, model_formats(declaration), run=run, prefix=store.prefix, gpu=bool(gpu_kind)
    )
    if items[GPU] and gpu_kind and gpu_instance_type:
        value = preflight_quota(quotas or _client("service-quotas"), gpu_kind, gpu_instance_type, log=log)
        if value is not None and value < sagemaker_concurrency:
            log(
                f"warning: the quota allows {value:g} concurrent {gpu_kind} jobs on {gpu_instance_type} but the "
                f"TensorRT shards run up to {sagemaker_concurrency} at once: jobs over the quota are retried "
                "with backoff; lower sagemaker_concurrency or raise the quota"
            )
    for kind in (CPU, GPU):
        _put_bytes(s3, store, store.key(layout.fanout_items_key(run, kind)), json.dumps(items[kind]).encode())
    log(
        f"run {run}: {assignment['shards']} shards -> {len(items[CPU])} CodeBuild builds, "
        f"{len(items[GPU])} {gpu_kind or 'GPU'} jobs"
    )
    return items


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m cdk_triton.pipeline.fanout_job", description=__doc__.splitlines()[0]
    )
    p.add_argument("--bucket", required=True)
    p.add_argument("--prefix", default="")
    p.add_argument("--kms-key-arn", default=None)
    sub = p.add_subparsers(dest="verb", required=True)
    pl = sub.add_parser("plan", help="write the shard item lists of a run")
    pl.add_argument("--run", required=True)
    pl.add_argument("--assignment", required=True, help="the JSON of cdk-triton build --list-shards N")
    pl.add_argument("--config", required=True, help="models.yaml")
    pl.add_argument("--gpu-kind", default=None, choices=["processing", "training"])
    pl.add_argument("--gpu-instance-type", default=None)
    pl.add_argument("--sagemaker-concurrency", type=int, default=1)
    put = sub.add_parser("put", help="upload a directory as one tar.gz")
    put.add_argument("--dir", required=True)
    put.add_argument("--key", required=True)
    get = sub.add_parser("get", help="extract a tar.gz object into a directory")
    get.add_argument("--key", required=True)
    get.add_argument("--dir", required=True)
    fe = sub.add_parser("fetch", help="download the shard outputs of a run, write merge-args.txt")
    fe.add_argument("--run", required=True)
    fe.add_argument("--out", required=True)
    su = sub.add_parser("summary", help="write and print the failed shards of a run")
    su.add_argument("--run", required=True)
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    store = Store(bucket=args.bucket, prefix=args.prefix, kms_key_arn=args.kms_key_arn or None)
    s3 = _client("s3")
    try:
        if args.verb == "plan":
            write_items(
                s3,
                store,
                run=args.run,
                assignment=json.loads(Path(args.assignment).read_text("utf-8")),
                declaration=Path(args.config),
                gpu_kind=args.gpu_kind,
                gpu_instance_type=args.gpu_instance_type,
                sagemaker_concurrency=args.sagemaker_concurrency,
            )
        elif args.verb == "put":
            put_dir(s3, store, Path(args.dir), args.key)
        elif args.verb == "get":
            if not get_dir(s3, store, args.key, Path(args.dir)):
                print(f"error: no object s3://{store.bucket}/{args.key}", file=sys.stderr)
                return 1
        elif args.verb == "fetch":
            return fetch(s3, store, args.run, Path(args.out))
        else:
            summarize(s3, store, args.run)
    except GpuJobError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
