"""Upload to S3 with boto3: multipart + concurrency (TransferConfig), skip what exists, copy
server-side (CopyObject) what exists under another key, SSE-KMS on request."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdk_triton.config.manifest import ArtifactLocation
from cdk_triton.errors import BuildError

MULTIPART_THRESHOLD = 64 * 1024 * 1024
MULTIPART_CHUNK = 64 * 1024 * 1024
MAX_CONCURRENCY = 10


@dataclass(frozen=True, kw_only=True, slots=True)
class UploadObject:
    """One object to place: local file, S3 key (under the artifact bucket), content sha256."""

    local_path: Path
    key: str
    sha256: str
    size: int


@dataclass(kw_only=True, slots=True)
class UploadStats:
    uploaded: int = 0
    copied: int = 0
    skipped: int = 0
    bytes_uploaded: int = 0
    keys: list[str] = field(default_factory=list)


def s3_client(endpoint_url: str | None = None) -> Any:
    """A boto3 S3 client (``AWS_ENDPOINT_URL`` / ``AWS_ENDPOINT_URL_S3`` honoured by boto3 itself)."""
    import boto3

    return boto3.client("s3", endpoint_url=endpoint_url) if endpoint_url else boto3.client("s3")


def _exists(client: Any, bucket: str, key: str, size: int) -> bool:
    from botocore.exceptions import ClientError

    try:
        head = client.head_object(Bucket=bucket, Key=key)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
            return False
        raise BuildError(f"cannot read s3://{bucket}/{key}: {exc}", code="UploadFailed") from exc
    return int(head.get("ContentLength", -1)) == size


def upload(
    objects: list[UploadObject],
    location: ArtifactLocation,
    *,
    client: Any | None = None,
    ledger_path: Path | None = None,
    progress: Callable[[int], None] | None = None,
) -> UploadStats:
    """Place every object; existing keys are skipped, known content is copied server-side."""
    from boto3.exceptions import Boto3Error
    from boto3.s3.transfer import TransferConfig
    from botocore.exceptions import BotoCoreError, ClientError

    client = client or s3_client()
    config = TransferConfig(
        multipart_threshold=MULTIPART_THRESHOLD,
        multipart_chunksize=MULTIPART_CHUNK,
        max_concurrency=MAX_CONCURRENCY,
        use_threads=True,
    )
    extra: dict[str, Any] = {}
    if location.kms_key_arn:
        extra = {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": location.kms_key_arn}
    ledger, placed = _read_ledger(ledger_path, location.bucket) if ledger_path else ({}, set())
    stats = UploadStats()
    bucket = location.bucket
    try:
        client.head_bucket(Bucket=bucket)
    except (ClientError, BotoCoreError) as exc:
        raise BuildError(
            f"upload to s3://{bucket}/ failed: the bucket does not exist or is not accessible ({exc}); create it "
            "or pass --artifact-location s3://<your-bucket>/<prefix>",
            code="UploadFailed",
        ) from exc
    try:
        for obj in objects:
            if _exists(client, bucket, obj.key, obj.size):
                stats.skipped += 1
                ledger[obj.sha256] = obj.key
                placed.add(obj.key)
                if progress:
                    progress(obj.size)
                continue
            src = ledger.get(obj.sha256) if obj.size else None
            if src and src != obj.key and _exists(client, bucket, src, obj.size):
                client.copy(
                    {"Bucket": bucket, "Key": src}, bucket, obj.key, ExtraArgs=dict(extra), Config=config
                )
                stats.copied += 1
            else:
                client.upload_file(
                    str(obj.local_path),
                    bucket,
                    obj.key,
                    ExtraArgs={**extra, "Metadata": {"sha256": obj.sha256}},
                    Config=config,
                    Callback=progress,
                )
                stats.uploaded += 1
                stats.bytes_uploaded += obj.size
            ledger[obj.sha256] = obj.key
            placed.add(obj.key)
            stats.keys.append(obj.key)
    except (ClientError, BotoCoreError, Boto3Error) as exc:
        raise BuildError(f"upload to s3://{bucket}/ failed: {exc}", code="UploadFailed") from exc
    finally:
        if ledger_path:
            _save_ledger(ledger_path, bucket, ledger, placed)
    return stats


#: the ledger's key for the keys placed per bucket ('_' never starts a bucket name)
_PLACED = "_placed"


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text("utf-8")) if path.is_file() else {}
    except json.JSONDecodeError:
        data = {}
    return data if isinstance(data, dict) else {}


def _read_ledger(path: Path, bucket: str) -> tuple[dict[str, str], set[str]]:
    """(content sha256 -> a key holding it, every key placed) for ``bucket``: the first finds copy
    sources, the second says what is uploaded (identical files under several keys included)."""
    data = _load(path)
    ledger = dict(data.get(bucket, {}))
    return ledger, set(data.get(_PLACED, {}).get(bucket, [])) | set(ledger.values())


def _save_ledger(path: Path, bucket: str, ledger: dict[str, str], placed: set[str]) -> None:
    data = _load(path)
    if data.get(bucket) == ledger and set(data.get(_PLACED, {}).get(bucket, [])) == placed:
        return
    data[bucket] = ledger
    data.setdefault(_PLACED, {})[bucket] = sorted(placed)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    os.replace(tmp, path)


def all_recorded(objects: list[UploadObject], location: ArtifactLocation, ledger_path: Path) -> bool:
    """Whether an earlier upload placed every object (for a build run without --upload)."""
    if not ledger_path.is_file():
        return False
    _, keys = _read_ledger(ledger_path, location.bucket)
    return all(o.key in keys for o in objects)
