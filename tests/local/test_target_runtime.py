"""``serve --runtime target`` with a real Triton: the onnxruntime and pytorch stand-ins' stubs run in Triton
24.09's own libtorch 2.5.0 / ONNX Runtime 1.19.2 (the release environment, created once: marked
target_runtime) and answer their samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdk_triton.config import target_runtime as rules
from cdk_triton.config.manifest import read_manifest
from cdk_triton.local import CpuOverlay, LocalEndpoint, invoke_sample
from cdk_triton.local import target as local_target
from tests.conftest import RUNTIMES_ROOT
from tests.unit.builder.helpers import tiny, write_decl

pytestmark = [pytest.mark.triton, pytest.mark.target_runtime]


def _mapped(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return ""


def test_stand_ins_answer_from_the_release_runtimes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cdk_triton.builder import run_build

    monkeypatch.setenv(rules.ROOT_VARIABLE, str(RUNTIMES_ROOT))
    decl = write_decl(
        tmp_path,
        tiny("t_ts", "torchscript") + tiny("t_onnx"),
        endpoints="""
  - name: m
    mode: MultiModel
    instance_types: [ml.g5.xlarge]
    models: [t_ts, t_onnx]
""",
    )
    result = run_build(decl, out_dir=tmp_path / "out", progress=False, target_runtime=True)
    # recorded before the call sets it, so the test's end removes it (a later server of the session, a
    # consumer's serve among them, must not run its stubs in this release's environment)
    monkeypatch.setenv(rules.STUB_PYTHON_VARIABLE, "")
    env = local_target.use_target_runtime(result.manifest_path)
    manifest = read_manifest(result.manifest_path)
    with LocalEndpoint(manifest, "m", overlay=CpuOverlay(instance_count=1)) as ep:
        for model in ("t_ts", "t_onnx"):
            answer = invoke_sample(ep, model)
            assert answer.ok and answer.matched, (model, answer)
        assert ep.server is not None
        maps = "".join(_mapped(p) for p in ep.server.process_ids())
    site = str(env.site_packages())
    assert f"{site}/torch/lib/libtorch_cpu.so" in maps  # the pytorch stand-in's stub: torch 2.5.0
    assert f"{site}/onnxruntime/capi/" in maps  # the onnxruntime stand-in's stub: ONNX Runtime 1.19.2
