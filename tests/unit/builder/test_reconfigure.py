"""Variants that differ only in config.pbtxt reuse the cached artifact: nothing is exported again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cdk_triton.builder import run_build
from cdk_triton.builder.export import onnx as onnx_export
from cdk_triton.builder.export import torchscript as ts_export
from tests.unit.builder.helpers import tiny, write_decl

ENDPOINTS = """
  - name: m
    mode: MultiModel
    instance_types: [ml.g5.xlarge]
    models: [t]
"""


def _no_export(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []

    def boom(*args: Any, **kwargs: Any) -> None:
        calls.append("export")
        raise AssertionError("exported")

    monkeypatch.setattr(onnx_export, "export", boom)
    monkeypatch.setattr(ts_export, "export", boom)
    return calls


@pytest.mark.parametrize(
    "extra",
    [
        "    dynamic_batching: {preferred_batch_sizes: [2, 4], max_queue_delay_microseconds: 50}\n",
        "    instance_groups: [{kind: KIND_CPU, count: 2}]\n",
        "    warmup: [{name: w, batch_size: 1, data: zero}]\n",
    ],
    ids=["dynamic_batching", "instance_groups", "warmup"],
)
def test_a_config_change_exports_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: str) -> None:
    first = run_build(
        write_decl(tmp_path, tiny("t"), endpoints=ENDPOINTS), out_dir=tmp_path / "out", progress=False
    )
    assert first.exported == 1
    calls = _no_export(monkeypatch)
    decl = write_decl(tmp_path, tiny("t") + extra, endpoints=ENDPOINTS)
    second = run_build(decl, out_dir=tmp_path / "out", progress=False)
    assert calls == [] and second.exported == 0 and second.reconfigured == 1 and second.packaged == 1
    assert [r["status"] for r in second.rows] == ["reconfigured"]
    entry = second.manifest.models["t"]
    assert entry.files["1/model.onnx"] == first.manifest.models["t"].files["1/model.onnx"]
    assert entry.config_sha256 != first.manifest.models["t"].config_sha256
    # the regenerated config is the one a full export writes
    monkeypatch.undo()
    forced = run_build(decl, out_dir=tmp_path / "forced", progress=False, force=True)
    assert forced.exported == 1 and forced.manifest.models["t"].config == entry.config
    assert forced.manifest.models["t"].files == entry.files
    # and back: the first configuration is still cached
    back = run_build(
        write_decl(tmp_path, tiny("t"), endpoints=ENDPOINTS), out_dir=tmp_path / "out", progress=False
    )
    assert (
        back.exported == 0
        and back.manifest.models["t"].config_sha256 == first.manifest.models["t"].config_sha256
    )


def test_a_change_of_what_shapes_the_export_exports_again(tmp_path: Path) -> None:
    run_build(write_decl(tmp_path, tiny("t")), out_dir=tmp_path / "out", progress=False)
    decl = write_decl(tmp_path, tiny("t").replace("max_batch_size: 4", "max_batch_size: 2"))
    again = run_build(decl, out_dir=tmp_path / "out", progress=False)
    assert again.exported == 1 and again.reconfigured == 0
