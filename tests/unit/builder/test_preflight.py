"""Preflight: what is refused (or skipped) before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdk_triton.builder import run_build
from cdk_triton.errors import BuildError
from tests.unit.builder.helpers import plans_decl, tiny, write_decl


def test_fails_onnx_ir_version_too_new(tiny_build, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import onnx

    _, tmp = tiny_build
    model = onnx.load(str(next((tmp / "out" / "cache" / "models").glob("t_onnx-*[!n]")) / "1" / "model.onnx"))
    model.ir_version = 11
    f = tmp_path / "new.onnx"
    onnx.save(model, str(f))
    decl = write_decl(tmp_path, tiny().replace("factory: tiny_models:tiny, seed: 0", f"onnx: {f}"))
    with pytest.raises(BuildError, match=r"IR version 11.*up to 10: .*\[OnnxIrVersionTooNew\]"):
        run_build(decl, out_dir=tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


def test_fails_plan_for_another_gpu_or_profile(tmp_path: Path) -> None:
    decl = plans_decl(tmp_path / "a", "ml.p4d.24xlarge", mode="SingleModel")  # 8 GPUs: no MME
    with pytest.raises(BuildError, match=r"has .*sm80.*\[PlanArchitectureMismatch\]"):
        run_build(decl, out_dir=tmp_path / "a" / "out", progress=False)
    assert not (tmp_path / "a" / "out" / "manifest.json").exists()
    assert not (tmp_path / "a" / "out").exists()  # refused in preflight: nothing written
    decl = plans_decl(tmp_path / "b", "ml.g5.xlarge", max_batch=2)
    with pytest.raises(
        BuildError, match=r"accepts batches up to 2 .* max_batch_size is 4; .*\[PlanProfileMismatch\]"
    ):
        run_build(decl, out_dir=tmp_path / "b" / "out", progress=False)
    assert not (tmp_path / "b" / "out").exists()


def test_plan_built_on_another_gpu_is_refused_or_skipped(tmp_path: Path) -> None:
    from cdk_triton.builder.declarations import load_declaration
    from cdk_triton.builder.export.tensorrt import local_arch_mismatch
    from tests.unit.builder.helpers import EXAMPLE

    spec = load_declaration(EXAMPLE)
    trt_model = spec.model("classifier_trt")
    assert local_arch_mismatch(spec, trt_model, "sm86", "NVIDIA A10G") is None  # ml.g5 = A10G
    why = local_arch_mismatch(spec, trt_model, "sm90", "NVIDIA H100")
    assert why and "sm90" in why and "ml.g5.xlarge" in why and "sm86" in why
