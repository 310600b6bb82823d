"""A crashed tritonserver is handled like SageMaker would: 503 meanwhile, restart, recovery, give-up.

Before: ``kill -9`` of tritonserver under load ended the whole ``serve``; clients saw 500
FileNotFoundError, 400 "endpoint not found", 503 and refused connections. Loopback only, bounded
in count and time.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from cdk_triton.local import CpuOverlay, LocalEndpoint, build_request

pytestmark = pytest.mark.triton


@pytest.fixture(scope="module")
def ep(manifest) -> Iterator[LocalEndpoint]:
    with LocalEndpoint(
        manifest, "local", overlay=CpuOverlay(instance_count=1), restart_backoff=(0.5, 1, 2)
    ) as e:
        yield e


def _kill_tritonserver(ep: LocalEndpoint) -> int:
    assert ep.server is not None
    for pid in ep.server.process_ids():
        if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].endswith(b"tritonserver"):
            os.kill(pid, signal.SIGKILL)
            return pid
    raise AssertionError("no tritonserver process")


def _ping(url: str) -> int:
    try:
        with urllib.request.urlopen(url + "/ping", timeout=5) as resp:  # noqa: S310 - 127.0.0.1 only
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def _wait(predicate, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_kill_9_under_load_sees_only_200_and_503_then_recovers(ep: LocalEndpoint) -> None:
    body, ctype = build_request({"RAW": np.zeros((1, 8), np.uint8)})
    seen: Counter[int] = Counter()
    after: Counter[int] = Counter()
    done = threading.Event()
    recovered = threading.Event()

    def client() -> None:
        for _ in range(2000):  # bounded: about 10 s at most
            if done.is_set():
                return
            status = ep.invoke(body, ctype, timeout=30)[0]
            (after if recovered.is_set() else seen)[status] += 1
            if status != 200:
                time.sleep(0.02)

    threads = [threading.Thread(target=client) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        time.sleep(0.5)
        _kill_tritonserver(ep)
        assert _wait(lambda: _ping(ep.url) == 503, 5), "ping did not turn unhealthy"
        assert _wait(lambda: _ping(ep.url) == 200, 60), f"no recovery; log {ep.log_path}"
        recovered.set()
        time.sleep(0.5)
    finally:
        done.set()
        for t in threads:
            t.join(60)
    assert set(seen) <= {200, 503} and seen[503] > 0, seen
    assert set(after) == {200}, after
    assert len(ep.restarts) == 1 and ep.failed is None


def test_a_server_that_keeps_crashing_is_given_up_naming_its_log(ep: LocalEndpoint) -> None:
    ep.max_restarts = len(ep.restarts)  # the restart of the test above used the whole allowance
    _kill_tritonserver(ep)
    assert _wait(lambda: ep.failed is not None, 10)
    assert ep.failed is not None and ep.failed.code == "ServerCrashed"
    assert str(ep.log_path) in str(ep.failed)
    status, headers, data = ep.invoke(b"{}", "application/json")
    assert status == 503 and headers["x-amzn-errortype"].startswith("ServiceUnavailable")
    assert json.loads(data)["message"] and _ping(ep.url) == 503
