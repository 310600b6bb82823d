"""A stateful python model (running sum per correlation id) under Triton's sequence batcher, built
by the build stage and served by a real Triton server through the SageMaker route, with the
``sequence_id`` / ``sequence_start`` / ``sequence_end`` parameters of the KServe v2 JSON body."""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest

from cdk_triton.config.manifest import read_manifest
from cdk_triton.local import CpuOverlay, LocalEndpoint, build_request, invoke_sample, parse_response
from tests.unit.builder.helpers import RUNNING_SUM_MODEL, write_decl

pytestmark = pytest.mark.triton

BODY = (
    RUNNING_SUM_MODEL  # ends inside sequence_batching: the next two lines are its keys, the last the model's
    + "      strategy: direct\n"
    + "      max_sequence_idle_microseconds: 60000000\n"
    + "    instance_groups: [{kind: KIND_CPU, count: 1}]\n"
)
ENDPOINT = """
  - name: running_sum
    mode: SingleModel
    instance_types: [ml.c5.xlarge]
    models: [running_sum]
"""


@pytest.fixture(scope="module")
def running_sum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalEndpoint]:
    from cdk_triton.builder import run_build

    tmp = tmp_path_factory.mktemp("sequence")
    result = run_build(write_decl(tmp, BODY, endpoints=ENDPOINT), out_dir=tmp / "out", progress=False)
    with LocalEndpoint(
        read_manifest(result.manifest_path), "running_sum", overlay=CpuOverlay(instance_count=1)
    ) as ep:
        yield ep


def _step(ep: LocalEndpoint, value: float, sequence_id: int, start: bool = False, end: bool = False) -> tuple:
    params = {"sequence_id": sequence_id, "sequence_start": start, "sequence_end": end}
    body, ctype = build_request({"VALUE": np.array([[value]], np.float32)}, parameters=params)
    assert json.loads(body)["parameters"]["sequence_id"] == sequence_id  # the KServe v2 JSON body
    status, headers, data = ep.invoke(body, ctype)
    if status != 200:
        return status, data.decode(errors="replace")
    return status, float(parse_response(data, headers.get("content-type"))["SUM"].reshape(-1)[0])


def test_interleaved_sequences_keep_separate_state(running_sum: LocalEndpoint) -> None:
    assert _step(running_sum, 1.0, 11, start=True) == (200, 1.0)
    assert _step(running_sum, 10.0, 22, start=True) == (200, 10.0)
    assert _step(running_sum, 2.0, 11) == (200, 3.0)
    assert _step(running_sum, 20.0, 22) == (200, 30.0)
    assert _step(running_sum, 3.0, 11, end=True) == (200, 6.0)
    assert _step(running_sum, 30.0, 22, end=True) == (200, 60.0)


def test_end_clears_the_sequence(running_sum: LocalEndpoint) -> None:
    assert _step(running_sum, 5.0, 33, start=True) == (200, 5.0)
    assert _step(running_sum, 1.0, 33, end=True) == (200, 6.0)
    status, text = _step(running_sum, 1.0, 33)  # the sequence ended: Triton wants a new start
    assert status != 200 and "START" in text
    assert _step(running_sum, 7.0, 33, start=True) == (200, 7.0)  # a new sequence starts from zero
    assert _step(running_sum, 1.0, 33, end=True) == (200, 8.0)


def test_a_request_without_a_correlation_id_is_refused(running_sum: LocalEndpoint) -> None:
    body, ctype = build_request({"VALUE": np.array([[1.0]], np.float32)})
    status, _, data = running_sum.invoke(body, ctype)
    assert status != 200 and b"correlation ID" in data


@pytest.mark.parametrize("binary", [False, True], ids=["json", "binary"])
def test_the_manifest_sample_is_a_one_request_sequence(running_sum: LocalEndpoint, binary: bool) -> None:
    result = invoke_sample(running_sum, binary=binary)
    assert result.status == 200, result.error
    assert result.matched is True
