"""A python model with requirements, served by the real Triton python backend through its packed
execution environment (EXECUTION_ENV_PATH = $$TRITON_MODEL_DIRECTORY/python_env.tar.gz): the backend
extracts the archive, sources its bin/activate and the stub imports a package that exists only there."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from cdk_triton.config import python_env
from cdk_triton.config.manifest import read_manifest
from cdk_triton.local import CpuOverlay, LocalEndpoint, build_request, invoke_sample, parse_response
from tests.pyenv_wheels import make_wheel
from tests.unit.builder.helpers import write_decl
from tests.unit.builder.test_python_env import MODEL_PY

pytestmark = pytest.mark.triton

BODY = """
  - name: shout
    format: python
    source: {python: pymodel}
    requirements: [greet==1.0]
    inputs: [{name: x, dtype: FP32, shape: [4]}]
    outputs: [{name: y, dtype: FP32, shape: [4]}]
    max_batch_size: 4
    instance_groups: [{kind: KIND_CPU, count: 1}]
"""
ENDPOINT = """
  - name: shout
    mode: SingleModel
    instance_types: [ml.c5.xlarge]
    models: [shout]
"""


@pytest.fixture(scope="module")
def shout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalEndpoint]:
    from cdk_triton.builder import run_build

    tmp = tmp_path_factory.mktemp("pyenv")
    make_wheel(tmp / "wheelhouse", "greet", "1.0", source="VALUE = 42\n")
    (tmp / "pymodel").mkdir()
    (tmp / "pymodel" / "model.py").write_text(MODEL_PY.format(module="greet"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CDK_TRITON_WHEELHOUSE", str(tmp / "wheelhouse"))
        result = run_build(write_decl(tmp, BODY, endpoints=ENDPOINT), out_dir=tmp / "out", progress=False)
    with LocalEndpoint(
        read_manifest(result.manifest_path), "shout", overlay=CpuOverlay(instance_count=1)
    ) as ep:
        yield ep


def test_the_model_imports_its_package_from_the_packed_environment(shout: LocalEndpoint) -> None:
    body, ctype = build_request({"x": np.arange(4, dtype=np.float32).reshape(1, 4)})
    status, headers, data = shout.invoke(body, ctype)
    assert status == 200, data
    np.testing.assert_allclose(parse_response(data, headers.get("content-type"))["y"], [[42, 43, 44, 45]])
    assert invoke_sample(shout).ok
    changes = [c for c in shout.overlay_changes if c.field == python_env.ENV_ARCHIVE]
    assert [(c.before, c.after) for c in changes] == [("python 3.10", "python 3.11")]
