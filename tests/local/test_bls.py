"""Business logic scripting on the real tritonserver: the python model ``pipe`` calls ``double`` through
``pb_utils.InferenceRequest(...).exec()`` in the python backend, both loaded from the repository the build
packaged (the callee joined it as an ensemble's step does) and loaded at start (the manifest's
``load_models``: one ``--load-model`` per callee, as the constructs put them in
SAGEMAKER_TRITON_ADDITIONAL_ARGS); the sample the build computed through the callee's reference is what
the server answers."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from cdk_triton.config.manifest import read_manifest
from cdk_triton.local import CpuOverlay, LocalEndpoint, build_request, invoke_sample, parse_response
from tests.unit.builder.test_bls import decl

pytestmark = pytest.mark.triton


@pytest.fixture(scope="module")
def pipe(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalEndpoint]:
    from cdk_triton.builder import run_build

    tmp = tmp_path_factory.mktemp("bls")
    result = run_build(decl(tmp), out_dir=tmp / "out", progress=False)
    with LocalEndpoint(
        read_manifest(result.manifest_path), "bls", overlay=CpuOverlay(instance_count=1)
    ) as ep:
        yield ep


def test_the_callee_is_loaded_at_start_as_the_container_loads_it(pipe: LocalEndpoint) -> None:
    assert pipe.server is not None
    argv = pipe.server.argv("tritonserver", "/backends")
    assert "--load-model=pipe" in argv and "--load-model=double" in argv
    log = pipe.server.log_path.read_text(errors="replace")
    loaded = [line.rsplit("::", 1)[-1] for line in log.splitlines() if "successfully loaded" in line]
    assert sorted(loaded) == ["double'\"", "pipe'\""]  # namespaced names, before any request
    assert "invocations" not in log


def test_the_caller_answers_through_its_callee(pipe: LocalEndpoint) -> None:
    body, ctype = build_request({"x": np.arange(4, dtype=np.float32).reshape(1, 4)})
    status, headers, data = pipe.invoke(body, ctype)
    assert status == 200, data.decode()
    np.testing.assert_allclose(parse_response(data, headers.get("content-type"))["z"], [[1, 3, 5, 7]])
    assert invoke_sample(
        pipe
    ).ok  # the build's sample (through the callee's reference) is the server's answer
