"""A bounded load test on loopback: 16 concurrent clients, 2,000 requests, zero errors.

Latency and throughput are printed (run with -s), never asserted: performance targets live in
bench/local_bench.py.
"""

from __future__ import annotations

import json

import pytest

from cdk_triton.local import LocalEndpoint, build_request
from cdk_triton.local.load import run_load

pytestmark = pytest.mark.triton


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_16_clients_2000_requests_zero_errors(sme: LocalEndpoint, facts, binary: bool) -> None:
    body, ctype = build_request({"RAW": facts.raw[:1]}, binary=binary)
    result = run_load(sme.url, "local", body, ctype, concurrency=16, requests=2000)
    print(f"\nload ({'binary' if binary else 'json'}):", json.dumps(result.summary()))
    assert result.requests == 2000
    assert result.errors == 0, result.first_error
    assert result.statuses == {200: 2000}


def test_mme_load_zero_errors(mme: LocalEndpoint, facts) -> None:
    body, ctype = build_request({"INPUT__0": facts.x[:1]})
    result = run_load(mme.url, "multi", body, ctype, target_model="ts", concurrency=16, requests=500)
    print("\nload (mme ts):", json.dumps(result.summary()))
    assert result.errors == 0, result.first_error
