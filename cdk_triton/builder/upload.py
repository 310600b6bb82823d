"""Upload to S3 with boto3: multipart + concurrency (TransferConfig), skip what exists, copy
server-side (CopyObject) what exists under another key, SSE-KMS on request."""

from __future__ import annotations

import json
import os
import random
import time
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
    """A boto3 S3 client (``AWS_ENDPOINT_URL`` / ``AWS_ENDPOINT_URL_S3`` honoured by boto3 itself) in
    botocore's standard retry mode, its connection pool sized for the objects placed at the same time."""
    import boto3
    from botocore.config import Config

    config = Config(
        retries={"mode": "standard", "max_attempts": 5}, max_pool_connections=2 * UPLOAD_CONCURRENCY
    )
    if endpoint_url:
        return boto3.client("s3", endpoint_url=endpoint_url, config=config)
    return boto3.client("s3", config=config)


#: objects placed at the same time (a bounded thread pool; boto3 clients are thread-safe)
UPLOAD_CONCURRENCY = 16
#: S3 error codes worth another try: 503 SlowDown (S3's request-rate limit per prefix), throttling,
#: transient server errors (botocore 1.44 retries/standard.py: the same throttling codes, 500/502/503/504)
RETRYABLE_CODES = frozenset(
    {
        "SlowDown",
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottled",
        "RequestThrottledException",
        "TooManyRequestsException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "ServiceUnavailable",
        "InternalError",
        "RequestTimeout",
        "503",
        "500",
    }
)


@dataclass(frozen=True, kw_only=True, slots=True)
class RetryPolicy:
    """Exponential backoff with full jitter: try ``n`` sleeps ``uniform(0, min(cap, base * 2**n))``."""

    attempts: int = 8
    base_seconds: float = 0.25
    cap_seconds: float = 20.0

    def delay(self, attempt: int, rand: Callable[[], float] = random.random) -> float:
        return rand() * min(self.cap_seconds, self.base_seconds * 2**attempt)


DEFAULT_RETRY = RetryPolicy()


def retryable(exc: BaseException) -> bool:
    """An S3 error that another try may get past (503 SlowDown, throttling, 500/503)."""
    from botocore.exceptions import ClientError, ConnectionError, ReadTimeoutError

    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        return err.get("Code") in RETRYABLE_CODES or status in (500, 502, 503, 504)
    if isinstance(exc, (ConnectionError, ReadTimeoutError)):
        return True
    # boto3's managed transfers (upload_file) wrap the ClientError's text in S3UploadFailedError
    return type(exc).__name__ == "S3UploadFailedError" and any(f"({c})" in str(exc) for c in RETRYABLE_CODES)


def with_retry(
    call: Callable[[], Any], policy: RetryPolicy, sleep: Callable[[float], None] | None = None
) -> Any:
    """``call()``, tried again after a backoff while it fails with a :func:`retryable` error."""
    for attempt in range(policy.attempts):
        try:
            return call()
        except Exception as exc:
            if attempt == policy.attempts - 1 or not retryable(exc):
                raise
            (sleep or time.sleep)(policy.delay(attempt))
    raise AssertionError("unreachable")


def _exists(client: Any, bucket: str, key: str, size: int, policy: RetryPolicy = DEFAULT_RETRY) -> bool:
    from botocore.exceptions import ClientError

    try:
        head = with_retry(lambda: client.head_object(Bucket=bucket, Key=key), policy)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
            return False
        raise BuildError(f"cannot read s3://{bucket}/{key}: {exc}", code="UploadFailed") from exc
    return int(head.get("ContentLength", -1)) == size


@dataclass(kw_only=True, slots=True)
class _Uploader:
    """One upload's shared state: the client, the ledger and what each placement did."""

    client: Any
    bucket: str
    config: Any
    extra: dict[str, Any]
    ledger: dict[str, str]
    policy: RetryPolicy
    progress: Callable[[int], None] | None

    def place(self, obj: UploadObject) -> str:
        """Skip, copy or upload one object; returns which (thread-safe: reads the ledger only)."""
        client, bucket = self.client, self.bucket
        if _exists(client, bucket, obj.key, obj.size, self.policy):
            if self.progress:
                self.progress(obj.size)
            return "skipped"
        src = self.ledger.get(obj.sha256) if obj.size else None
        if src and src != obj.key and _exists(client, bucket, src, obj.size, self.policy):
            with_retry(
                lambda: client.copy(
                    {"Bucket": bucket, "Key": src},
                    bucket,
                    obj.key,
                    ExtraArgs=dict(self.extra),
                    Config=self.config,
                ),
                self.policy,
            )
            return "copied"
        with_retry(
            lambda: client.upload_file(
                str(obj.local_path),
                bucket,
                obj.key,
                ExtraArgs={**self.extra, "Metadata": {"sha256": obj.sha256}},
                Config=self.config,
                Callback=self.progress,
            ),
            self.policy,
        )
        return "uploaded"


def upload(
    objects: list[UploadObject],
    location: ArtifactLocation,
    *,
    client: Any | None = None,
    ledger_path: Path | None = None,
    progress: Callable[[int], None] | None = None,
    concurrency: int = UPLOAD_CONCURRENCY,
    retry: RetryPolicy | None = None,
) -> UploadStats:
    """Place every object, ``concurrency`` at a time; existing keys are skipped, known content is
    copied server-side, and a throttled or unavailable S3 (503 SlowDown) is tried again with
    exponential backoff and jitter (``retry``). The first failure that outlives its retries stops
    what has not started and fails the upload; the ledger keeps only what was placed."""
    from boto3.s3.transfer import TransferConfig

    client = client or s3_client()
    retry = retry or DEFAULT_RETRY
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
    _check_bucket(client, bucket, retry)
    up = _Uploader(
        client=client,
        bucket=bucket,
        config=config,
        extra=extra,
        ledger=ledger,
        policy=retry,
        progress=progress,
    )

    def record(done: list[tuple[UploadObject, str]]) -> None:
        for obj, how in done:
            setattr(stats, how, getattr(stats, how) + 1)
            if how == "uploaded":
                stats.bytes_uploaded += obj.size
            if how != "skipped":
                stats.keys.append(obj.key)
            ledger[obj.sha256] = obj.key
            placed.add(obj.key)

    try:
        for batch in _batches(objects):  # the first object of each content, then the rest (copies)
            try:
                record(_run(up, batch, concurrency))
            except _Failed as failed:
                record(failed.done)
                raise failed.error from failed.__cause__
    finally:
        if ledger_path:
            _save_ledger(ledger_path, bucket, ledger, placed)
    return stats


def _check_bucket(client: Any, bucket: str, retry: RetryPolicy) -> None:
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        with_retry(lambda: client.head_bucket(Bucket=bucket), retry)
    except (ClientError, BotoCoreError) as exc:
        raise BuildError(
            f"upload to s3://{bucket}/ failed: the bucket does not exist or is not accessible ({exc}); create it "
            "or pass --artifact-location s3://<your-bucket>/<prefix>",
            code="UploadFailed",
        ) from exc


def _batches(objects: list[UploadObject]) -> list[list[UploadObject]]:
    """Objects whose content comes first in the list, then the others (they may be copied from it)."""
    seen: set[str] = set()
    first: list[UploadObject] = []
    rest: list[UploadObject] = []
    for o in objects:
        (rest if o.sha256 in seen and o.size else first).append(o)
        seen.add(o.sha256)
    return [b for b in (first, rest) if b]


def _run(up: _Uploader, batch: list[UploadObject], concurrency: int) -> list[tuple[UploadObject, str]]:
    """Place ``batch`` on a bounded thread pool; results in the batch's order (the ledger's bytes do not
    depend on timing). A failure cancels what has not started, waits for what has, and raises
    UploadFailed naming every key that failed (the others' results are returned in ``placed``)."""
    from concurrent.futures import ThreadPoolExecutor

    results: dict[int, str] = {}
    errors: list[tuple[UploadObject, BaseException]] = []
    with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="cdk-triton-upload") as pool:
        futures = {pool.submit(up.place, o): i for i, o in enumerate(batch)}
        for fut, i in futures.items():
            if fut.cancelled():
                continue
            try:
                results[i] = fut.result()
            except Exception as failure:
                errors.append((batch[i], failure))
                for other in futures:
                    other.cancel()
    done = [(batch[i], results[i]) for i in sorted(results)]
    if errors:
        obj, cause = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        error = (
            cause
            if isinstance(cause, BuildError)
            else BuildError(
                f"upload of s3://{up.bucket}/{obj.key} failed{more}: {cause}; what failed is not recorded and "
                "the manifest is not written: fix the cause and build with --upload again (what was placed is skipped)",
                code="UploadFailed",
            )
        )
        raise _Failed(done, error) from cause
    return done


class _Failed(Exception):
    """An upload batch that failed after placing ``done``."""

    def __init__(self, done: list[tuple[UploadObject, str]], error: BuildError) -> None:
        super().__init__(str(error))
        self.done = done
        self.error = error


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
