"""A sequence model (dynamic non-batch axis) built by the build stage and served by a real Triton
server: requests of two sequence lengths through the SageMaker route, in both formats."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from cdk_triton.config.manifest import Manifest, read_manifest
from cdk_triton.local import CpuOverlay, LocalEndpoint, build_request, parse_response
from tests.unit.builder.helpers import write_decl

pytestmark = pytest.mark.triton

BODY = """
  - name: {name}
    format: {format}
    source: {{factory: tiny_models:seq_mean, seed: 0}}
    inputs: [{{name: ids, dtype: INT64, shape: [-1], range: [0, 50], sample_shape: [7]}}]
    outputs: [{{name: y, dtype: FP32, shape: [3]}}]
    max_batch_size: 4
    instance_groups: [{{kind: KIND_CPU, count: 1}}]
"""
ENDPOINT = """
  - name: {name}
    mode: SingleModel
    instance_types: [ml.g5.xlarge]
    models: [{name}]
"""
FORMATS = {"seq_onnx": "onnx", "seq_ts": "torchscript"}


@pytest.fixture(scope="module")
def seq_manifest(tmp_path_factory: pytest.TempPathFactory) -> Manifest:
    from cdk_triton.builder import run_build

    tmp = tmp_path_factory.mktemp("seq-build")
    body = "".join(BODY.format(name=n, format=f) for n, f in FORMATS.items())
    endpoints = "".join(ENDPOINT.format(name=n) for n in FORMATS)
    result = run_build(write_decl(tmp, body, endpoints=endpoints), out_dir=tmp / "out", progress=False)
    return read_manifest(result.manifest_path)


@pytest.fixture(scope="module", params=sorted(FORMATS))
def seq_endpoint(request: pytest.FixtureRequest, seq_manifest: Manifest) -> Iterator[LocalEndpoint]:
    with LocalEndpoint(seq_manifest, request.param, overlay=CpuOverlay(instance_count=1)) as ep:
        yield ep


def _eager(ids: np.ndarray) -> np.ndarray:
    import torch

    from tests.unit.builder.tiny_models import seq_mean

    torch.manual_seed(0)  # the declared seed
    with torch.no_grad():
        return seq_mean()(torch.from_numpy(ids)).numpy()


def test_two_sequence_lengths_through_the_sagemaker_route(seq_endpoint: LocalEndpoint) -> None:
    config = seq_endpoint.manifest.models[seq_endpoint.name].config
    (inp,), (out,) = config["input"], config["output"]
    assert [int(d) for d in inp["dims"]] == [-1]
    for length in (5, 23):
        ids = np.random.default_rng(length).integers(0, 50, size=(2, length)).astype(np.int64)
        body, ctype = build_request({inp["name"]: ids})
        status, headers, data = seq_endpoint.invoke(body, ctype)
        assert status == 200, data
        got = parse_response(data, headers.get("content-type"))[out["name"]]
        np.testing.assert_allclose(got, _eager(ids), atol=1e-5)
