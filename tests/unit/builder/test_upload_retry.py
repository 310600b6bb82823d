"""Uploads at fleet size: a bounded thread pool, backoff with jitter on S3's 503 SlowDown and throttling,
and a permanent failure that fails the build clearly with nothing half-recorded."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from time import sleep as real_sleep
from typing import Any

import pytest

from cdk_triton.builder import run_build
from cdk_triton.builder import upload as upload_mod
from cdk_triton.config.manifest import ArtifactLocation
from cdk_triton.errors import BuildError
from tests.unit.builder.test_parallel import py_decl

FAST = upload_mod.RetryPolicy(attempts=5, base_seconds=0.001, cap_seconds=0.01)


def _error(code: str, status: int, op: str = "PutObject") -> Exception:
    from botocore.exceptions import ClientError

    return ClientError(
        {"Error": {"Code": code, "Message": code}, "ResponseMetadata": {"HTTPStatusCode": status}}, op
    )


class Patched:
    """A real (moto) S3 client whose upload_file fails first as ``fail(key, attempt)`` says."""

    def __init__(self, client: Any, fail: Any) -> None:
        self._client = client
        self._fail = fail
        self.calls: dict[str, int] = {}
        self._lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def upload_file(self, filename: str, bucket: str, key: str, **kw: Any) -> None:
        with self._lock:
            attempt = self.calls[key] = self.calls.get(key, 0) + 1
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            real_sleep(0.02)
            exc = self._fail(key, attempt)
            if exc is not None:
                raise exc
            self._client.upload_file(filename, bucket, key, **kw)
        finally:
            with self._lock:
                self.in_flight -= 1


@pytest.fixture(scope="module")
def s3(moto_s3: Any) -> Any:
    moto_s3.create_bucket(Bucket="fleet-bucket")
    return moto_s3


def _decl(tmp: Path, prefix: str) -> Path:
    decl = py_decl(tmp, {f"p{i}": "" for i in range(4)})
    decl.write_text(decl.read_text().replace("s3://test-bucket/prefix/", f"s3://fleet-bucket/{prefix}/"))
    return decl


def test_slowdown_is_retried_with_backoff_until_the_upload_succeeds(
    s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(upload_mod, "DEFAULT_RETRY", FAST)
    slept: list[float] = []
    monkeypatch.setattr(upload_mod.time, "sleep", slept.append)
    flaky = Patched(s3, lambda key, attempt: _error("SlowDown", 503) if attempt <= 2 else None)
    decl = _decl(tmp_path, "slowdown")
    result = run_build(decl, out_dir=tmp_path / "out", progress=False, upload=True, s3_client=flaky)
    assert result.manifest.uploaded and result.uploaded == len(flaky.calls) >= 8
    assert set(flaky.calls.values()) == {3}  # two SlowDowns, then the upload
    assert len(slept) == 2 * len(flaky.calls) and all(0 <= s <= FAST.cap_seconds for s in slept)
    for t in result.manifest.endpoints["fleet"].target_models.values():
        body = s3.get_object(Bucket="fleet-bucket", Key=t.s3_uri.removeprefix("s3://fleet-bucket/"))[
            "Body"
        ].read()
        assert hashlib.sha256(body).hexdigest() == t.sha256
    assert 1 < flaky.most_in_flight <= upload_mod.UPLOAD_CONCURRENCY  # in parallel, bounded


def test_a_permanent_failure_fails_the_build_and_records_nothing_half(
    s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(upload_mod, "DEFAULT_RETRY", FAST)
    decl = _decl(tmp_path, "denied")
    out = tmp_path / "out"
    first = run_build(decl, out_dir=out, progress=False)
    manifest = (out / "manifest.json").read_bytes()
    denied = next(t for t in first.manifest.endpoints["fleet"].target_models.values())
    key = denied.s3_uri.removeprefix("s3://fleet-bucket/")
    broken = Patched(s3, lambda k, attempt: _error("AccessDenied", 403) if k == key else None)
    with pytest.raises(BuildError) as err:
        run_build(decl, out_dir=out, progress=False, upload=True, s3_client=broken)
    assert err.value.code == "UploadFailed" and key in str(err.value) and "AccessDenied" in str(err.value)
    assert broken.calls[key] == 1  # not retried: it is not a throttling or transient error
    assert (out / "manifest.json").read_bytes() == manifest  # the previous manifest, untouched
    ledger = (out / "uploads.json").read_text()
    assert key not in ledger
    again = run_build(decl, out_dir=out, progress=False, upload=True, s3_client=s3)  # the cause fixed
    assert again.manifest.uploaded and again.uploaded == 1  # what was placed before is skipped


def test_upload_placement_is_bounded_and_throttled_heads_are_retried(
    s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(upload_mod.time, "sleep", lambda s: None)
    objects = []
    for i in range(12):
        f = tmp_path / f"o{i}.bin"
        f.write_bytes(f"object {i}".encode())
        sha = hashlib.sha256(f.read_bytes()).hexdigest()
        objects.append(
            upload_mod.UploadObject(local_path=f, key=f"bounded/o{i}", sha256=sha, size=f.stat().st_size)
        )
    flaky = Patched(s3, lambda key, attempt: None)
    heads: dict[str, int] = {}
    real_head = s3.head_object

    def head_object(**kw: Any) -> Any:
        heads[kw["Key"]] = heads.get(kw["Key"], 0) + 1
        if heads[kw["Key"]] == 1:
            raise _error("503", 503, "HeadObject")  # HEAD errors carry no code: the status says SlowDown
        return real_head(**kw)

    flaky.head_object = head_object  # type: ignore[method-assign]
    loc = ArtifactLocation(bucket="fleet-bucket", prefix="bounded/")
    stats = upload_mod.upload(objects, loc, client=flaky, concurrency=3, retry=FAST)
    assert stats.uploaded == 12 and 1 < flaky.most_in_flight <= 3
    assert all(n == 2 for n in heads.values())


def test_stubbed_slowdown_then_success(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore's Stubber on a client with botocore's own retries off: our retry gets past SlowDown."""
    import boto3
    from botocore.config import Config
    from botocore.stub import Stubber

    monkeypatch.setattr(upload_mod.time, "sleep", lambda s: None)
    client = boto3.client(
        "s3",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=Config(retries={"total_max_attempts": 1}),
    )
    f = tmp_path / "m.tar.gz"
    f.write_bytes(b"archive")
    obj = upload_mod.UploadObject(
        local_path=f, key="p/m.tar.gz", sha256=hashlib.sha256(b"archive").hexdigest(), size=7
    )
    with Stubber(client) as stub:
        stub.add_response("head_bucket", {}, {"Bucket": "b"})
        stub.add_client_error("head_object", "404", http_status_code=404)
        stub.add_client_error("put_object", "SlowDown", "Please reduce your request rate.", 503)
        stub.add_response("put_object", {"ETag": '"x"'})
        stats = upload_mod.upload([obj], ArtifactLocation(bucket="b", prefix="p/"), client=client, retry=FAST)
        stub.assert_no_pending_responses()
    assert stats.uploaded == 1


def test_backoff_is_exponential_with_full_jitter() -> None:
    policy = upload_mod.RetryPolicy(attempts=6, base_seconds=0.5, cap_seconds=4.0)
    assert [policy.delay(n, rand=lambda: 1.0) for n in range(5)] == [0.5, 1.0, 2.0, 4.0, 4.0]
    assert policy.delay(3, rand=lambda: 0.25) == 1.0
    assert upload_mod.retryable(_error("SlowDown", 503)) and upload_mod.retryable(_error("Throttling", 400))
    assert not upload_mod.retryable(_error("AccessDenied", 403)) and not upload_mod.retryable(ValueError("x"))
