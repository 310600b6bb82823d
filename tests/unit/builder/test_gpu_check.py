"""The GPU check's CPU-side logic, with CUDA faked: the refusal without CUDA, the readings report (schema,
merge by device name), the table, what it could not check, parity failures. The real run is
``make gpu-check`` on a CUDA host (tests marked gpu run it too)."""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cdk_triton.builder import device_parity, gpu_check
from cdk_triton.cli import main
from cdk_triton.errors import BuildError, TritonValidationError
from tests.capabilities import has_cuda, skip_reasons
from tests.unit.builder.helpers import tiny, write_decl

GPU_MME = """
  - name: ep
    mode: MultiModel
    instance_types: [ml.g5.xlarge]
    models: [{models}]
"""


class FakeCuda:
    """torch.cuda on a machine without one: a device named like the H100 of the issue, an allocator
    that grows with every call, an NVML that reports nothing."""

    def __init__(self) -> None:
        self.allocated = 1000
        self.peak = 1000

    def is_available(self) -> bool:
        return True

    def get_device_name(self, i: int) -> str:
        return "NVIDIA H100 80GB HBM3"

    def get_device_properties(self, i: int) -> Any:
        return types.SimpleNamespace(major=9, minor=0, total_memory=85520809984)

    def synchronize(self) -> None:
        self.allocated += 4096
        self.peak = max(self.peak, self.allocated * 3)

    def memory_allocated(self) -> int:
        return self.allocated

    def max_memory_allocated(self) -> int:
        return self.peak

    def memory_reserved(self) -> int:
        return self.peak + 2**20

    def empty_cache(self) -> None: ...

    def reset_peak_memory_stats(self) -> None:
        self.peak = self.allocated


class FakeTorch:
    """Real torch (on CPU) with ``cuda`` and ``version.cuda`` faked."""

    def __init__(self, *, available: bool = True, cuda_build: str | None = "13.0") -> None:
        import torch

        self._torch = torch
        self.cuda = FakeCuda()
        if not available:
            self.cuda.is_available = lambda: False  # type: ignore[method-assign]
        self.version = types.SimpleNamespace(cuda=cuda_build)
        self.__version__ = "2.11.0+cu130" if cuda_build else "2.11.0+cpu"

    def __getattr__(self, name: str) -> Any:
        return getattr(self._torch, name)


@pytest.fixture
def on_fake_gpu(monkeypatch: pytest.MonkeyPatch) -> FakeTorch:
    monkeypatch.setattr(gpu_check, "DEVICE", "cpu")  # the "GPU" runs on CPU
    monkeypatch.setattr(gpu_check, "process_bytes", lambda pid=None, **_: None)
    monkeypatch.setattr(gpu_check, "driver_version", lambda **_: "580.159.04")
    return FakeTorch()


# ---------------------------------------------------------------------------- no CUDA


def test_refuses_without_cuda_before_building(tmp_path: Path) -> None:
    def build(*a: Any, **k: Any) -> None:
        raise AssertionError("built without CUDA")

    with pytest.raises(BuildError, match=r"torch 2.11.0\+cpu is a CPU build.*\[NoCudaDevice\]"):
        gpu_check.run_check("x.yaml", build=build, torch=FakeTorch(available=False, cuda_build=None))
    with pytest.raises(BuildError, match=r"\(CUDA 13.0\) sees no CUDA device.*CUDA_VISIBLE_DEVICES"):
        gpu_check.run_check("x.yaml", build=build, torch=FakeTorch(available=False))


@pytest.mark.skipif(has_cuda(), reason="a CUDA device is here")
def test_the_command_exits_1_on_this_machine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    decl = write_decl(tmp_path, tiny())
    assert main(["gpu-check", "--config", str(decl)]) == 1
    assert "[NoCudaDevice]" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------------------- the report


def _device(name: str, model: str = "m") -> dict[str, Any]:
    return {"name": name, "compute_capability": "9.0", "models": {model: {"peak_allocated_bytes": 1}}}


def test_report_merges_devices_by_name(tmp_path: Path) -> None:
    path = tmp_path / "r" / "gpu-readings.json"
    gpu_check.write_report(path, _device("NVIDIA H100 80GB HBM3", "a"))
    gpu_check.write_report(path, _device("NVIDIA L4", "b"))
    report = gpu_check.write_report(path, _device("NVIDIA H100 80GB HBM3", "c"))
    assert report == json.loads(path.read_text())
    assert report["kind"] == "cdk-triton/gpu-readings" and report["version"] == 1
    assert [(d["name"], list(d["models"])) for d in report["devices"]] == [
        ("NVIDIA H100 80GB HBM3", ["c"]),  # replaced in place
        ("NVIDIA L4", ["b"]),
    ]


def test_report_refuses_another_kind_of_file(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_text('{"schema_version": 3}')
    with pytest.raises(TritonValidationError, match=r"GpuReadingsInvalid"):
        gpu_check.write_report(path, _device("x"))
    assert path.read_text() == '{"schema_version": 3}'


def test_table_shows_measured_against_manifest() -> None:
    device = {
        "name": "NVIDIA H100 80GB HBM3",
        "compute_capability": "9.0",
        "driver": None,
        "cuda": "13.0",
        "torch": "2.11.0",
        "models": {
            "resnet": {
                "format": "torchscript",
                "max_batch_size": 32,
                "manifest_memory_bytes": 122047285,
                "loaded_allocated_bytes": 102500000,
                "peak_allocated_bytes": 465000000,
                "reserved_bytes": 619000000,
                "process_bytes": None,
                "parity": {
                    "batch_1": {"max_abs_diff": 0.0, "tolerance": 0.11, "ok": True},
                    "batch_max": {"max_abs_diff": 0.5, "tolerance": 0.11, "ok": False},
                },
            }
        },
    }
    text = gpu_check.table(device)
    assert "driver ?" in text and "memory in MiB" in text
    row = next(line for line in text.splitlines() if line.startswith("resnet"))
    assert row.split()[:8] == ["resnet", "torchscript", "32", "116", "98", "443", "590", "-"]
    assert "0/0.11 ok" in row and "0.5/0.11 FAIL" in row


def test_process_bytes_from_nvidia_smi(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(__import__("sys").modules, "pynvml", None)  # no pynvml
    monkeypatch.setattr(gpu_check.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    out = "4242, 1280\n17, 99\n"
    run = lambda *a, **k: types.SimpleNamespace(stdout=out)  # noqa: E731
    assert gpu_check.process_bytes(4242, run=run) == 1280 * 2**20
    assert gpu_check.process_bytes(5555, run=run) is None
    monkeypatch.setattr(gpu_check.shutil, "which", lambda name: None)
    assert gpu_check.process_bytes(4242, run=run) is None


# ---------------------------------------------------------------------------- parity rules


def test_tolerance_per_precision() -> None:
    ref = np.array([-110.0, 3.0])
    assert device_parity.tolerance("FP32", ref) == pytest.approx(0.11)
    assert device_parity.tolerance("FP16", ref) == pytest.approx(1.1)
    assert device_parity.tolerance("BF16", ref) == pytest.approx(3.3)
    assert device_parity.tolerance("INT64", ref) == 0.0


def test_compare_takes_the_worst_of_the_device_and_the_cpu(tmp_path: Path) -> None:
    from tests.unit.builder.helpers import spec_of

    m = spec_of(tmp_path, tiny()).model("tiny")
    ref = {"y": np.array([[100.0, 1.0, 1.0]])}
    near = {"y": np.array([[100.05, 1.0, 1.0]])}
    far = {"y": np.array([[100.5, 1.0, 1.0]])}
    ok = device_parity.compare(m, 1, near, near, ref)
    assert ok.ok and ok.max_abs_diff == 0.0 and ok.cpu_max_abs_diff == pytest.approx(0.05)
    bad = device_parity.compare(m, 4, far, near, ref)
    assert not bad.ok and bad.reading() == {
        "max_abs_diff": pytest.approx(0.45),
        "tolerance": 0.1,
        "ok": False,
    }
    assert "at batch 4" in str(device_parity.mismatch(m, "cuda:0", bad))


# ---------------------------------------------------------------------------- a whole check, CUDA faked


def _fleet(tmp_path: Path) -> Path:
    models = (
        tiny("ts", "torchscript")
        + tiny("ox", "onnx")
        + tiny("on_cpu", "torchscript")
        + "    instance_groups: [{kind: KIND_CPU}]\n"
    )
    return write_decl(tmp_path, models, endpoints=GPU_MME.format(models="ts, ox, on_cpu"))


def test_check_measures_gpu_placed_models_and_writes_the_report(
    tmp_path: Path, on_fake_gpu: FakeTorch, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(device_parity, "onnx_cuda_session_available", lambda: False)
    lines: list[str] = []
    outcome = gpu_check.run_check(_fleet(tmp_path), torch=on_fake_gpu, echo=lines.append)
    report = json.loads((tmp_path / "out" / "gpu-readings.json").read_text())
    (device,) = report["devices"]
    assert device["name"] == "NVIDIA H100 80GB HBM3" and device["compute_capability"] == "9.0"
    assert device["driver"] == "580.159.04" and device["cuda"] == "13.0" and device["context_bytes"] is None
    assert list(device["models"]) == ["ts"]  # ox: no onnxruntime-gpu; on_cpu: KIND_CPU
    ts = device["models"]["ts"]
    assert set(ts) == {
        "format",
        "max_batch_size",
        "manifest_memory_bytes",
        "loaded_allocated_bytes",
        "peak_allocated_bytes",
        "reserved_bytes",
        "process_bytes",
        "parity",
    }
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert ts["manifest_memory_bytes"] == manifest["models"]["ts"]["memory_bytes"]
    assert ts["loaded_allocated_bytes"] > 0 and ts["peak_allocated_bytes"] >= ts["loaded_allocated_bytes"]
    assert ts["parity"]["batch_1"]["ok"] and ts["parity"]["batch_max"]["ok"]
    assert "peak_allocated_bytes" not in (tmp_path / "out" / "manifest.json").read_text()
    assert any(w.startswith("ox: ONNX on CUDA needs onnxruntime-gpu") for w in outcome.not_checked)
    assert not any(w.startswith("on_cpu") for w in outcome.not_checked)
    text = "\n".join(lines)
    assert "ts  " in text and "not checked here" in text and "the manifest is unchanged" in text


def test_a_parity_failure_on_the_device_fails_after_the_report(
    tmp_path: Path, on_fake_gpu: FakeTorch, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    class Off(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.ones(x.shape[0], 3) * 5

    real = gpu_check._eager_factory

    def eager(spec: Any, m: Any) -> Any:
        made = real(spec, m)
        return (lambda: Off()) if m.name == "ts" else made

    monkeypatch.setattr(gpu_check, "_eager_factory", eager)
    with pytest.raises(
        BuildError, match=r"model 'ts': its artifact on cpu differs at batch 1.*\[DeviceParityMismatch\]"
    ):
        gpu_check.run_check(_fleet(tmp_path), torch=on_fake_gpu, echo=lambda s: None)
    report = json.loads((tmp_path / "out" / "gpu-readings.json").read_text())
    assert report["devices"][0]["models"]["ts"]["parity"]["batch_1"]["ok"] is False


def test_environment_gaps_name_tensorrt_and_onnxruntime_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "tensorrt" else real(n, *a))
    monkeypatch.setattr(device_parity, "onnx_cuda_session_available", lambda: False)
    gaps = gpu_check.environment_gaps()
    assert any("tensorrt package is not installed" in g for g in gaps)
    assert any("onnxruntime-gpu is not installed" in g for g in gaps)


# ---------------------------------------------------------------------------- the markers


@pytest.mark.parametrize(
    ("markers", "cuda", "trt", "skipped"),
    [
        ({"gpu"}, False, False, True),
        ({"gpu"}, True, False, False),
        ({"gpu", "tensorrt"}, True, False, True),  # a CUDA host without TensorRT skips plan builds
        ({"gpu", "tensorrt"}, True, True, False),
        ({"tensorrt"}, False, True, True),
        (set(), False, False, False),
    ],
)
def test_markers_skip_by_capability(markers: set[str], cuda: bool, trt: bool, skipped: bool) -> None:
    assert bool(skip_reasons(markers, cuda=cuda, tensorrt=trt)) is skipped


@pytest.mark.gpu
def test_the_check_runs_on_this_gpu(tmp_path: Path) -> None:
    outcome = gpu_check.run_check(_fleet(tmp_path), echo=lambda s: None)
    assert outcome.device["models"]["ts"]["loaded_allocated_bytes"] > 0


def test_a_gpu_checkable_format_added_as_a_row_is_checked(
    tmp_path: Path, on_fake_gpu: FakeTorch, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new format is its row and its exporter: ``toygpu`` (``gpu_checkable``, its exporter's
    ``device_runner``) is measured and parity-checked with no gpu_check line naming it."""
    from cdk_triton.config import formats
    from tests.toy_format import GPU_ROW

    with formats.registered(GPU_ROW):
        decl = write_decl(tmp_path, tiny("g", "toygpu"), endpoints=GPU_MME.format(models="g"))
        outcome = gpu_check.run_check(decl, torch=on_fake_gpu, echo=lambda _: None)
    report = json.loads((tmp_path / "out" / "gpu-readings.json").read_text())
    (device,) = report["devices"]
    assert list(device["models"]) == ["g"] and not any(w.startswith("g:") for w in outcome.not_checked)
    g = device["models"]["g"]
    assert g["format"] == "toygpu" and g["loaded_allocated_bytes"] is None  # outside torch's allocator
    assert g["parity"]["batch_1"]["ok"] and g["parity"]["batch_max"]["ok"]


def test_a_format_that_is_not_gpu_checkable_says_why_from_its_row() -> None:
    from cdk_triton.config import formats

    m = types.SimpleNamespace(format="python", row=formats.get("python"))
    assert gpu_check.can_check(m) == formats.get("python").not_gpu_checked  # type: ignore[arg-type]
    m = types.SimpleNamespace(format="ensemble", row=formats.get("ensemble"))
    assert "ensemble: nothing of its own runs on a GPU" in str(gpu_check.can_check(m))  # type: ignore[arg-type]
