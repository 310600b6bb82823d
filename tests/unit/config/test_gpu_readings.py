"""The GPU readings report: read, validated, matched to instance types, preferred over the manifest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cdk_triton.config import gpu_costs, gpu_readings, residency
from cdk_triton.config.gpu_readings import DeviceReadings, matches, read_readings, readings_from_dict
from cdk_triton.config.manifest import ModelEntry
from cdk_triton.errors import TritonValidationError

H100 = Path(__file__).resolve().parents[2] / "fixtures" / "gpu-readings" / "h100.json"


def _raw() -> dict[str, Any]:
    return json.loads(H100.read_text())


def _device(name: str, cc: str) -> DeviceReadings:
    return DeviceReadings(
        name=name, compute_capability=cc, total_memory_bytes=None, context_bytes=None, measured_at=None
    )


def test_the_h100_report_reads_and_matches_p5_only() -> None:
    r = read_readings(H100)
    (dev,) = r.devices
    assert dev.models["resnet50_ts"].peak_allocated_bytes == 465_152_000
    assert r.for_instance_type("ml.p5.48xlarge") is dev
    assert r.for_instance_type("ml.g5.xlarge") is None  # an A10G
    assert r.for_instance_type("ml.m5.xlarge") is None  # no GPU


def test_matching_takes_every_token_of_the_gpu_name_and_the_compute_capability() -> None:
    assert matches(_device("NVIDIA L4", "8.9"), "ml.g6.xlarge")
    assert not matches(_device("NVIDIA L40S", "8.9"), "ml.g6.xlarge")  # "L4" is not a token of it
    assert matches(_device("NVIDIA L40S", "8.9"), "ml.g6e.xlarge")
    assert not matches(_device("NVIDIA H100 80GB HBM3", "8.0"), "ml.p5.48xlarge")  # another capability


@pytest.mark.parametrize(
    ("mutate", "where"),
    [
        (lambda d: d.update(kind="other"), "kind"),
        (lambda d: d.update(version=2), "version"),
        (lambda d: d["devices"][0].update(compute_capability=9), "compute_capability"),
        (
            lambda d: d["devices"][0]["models"]["resnet50_ts"].pop("peak_allocated_bytes"),
            "peak_allocated_bytes",
        ),
        (lambda d: d["devices"][0]["models"]["resnet50_ts"].update(reserved_bytes=-1), "reserved_bytes"),
    ],
)
def test_a_malformed_report_is_refused_naming_the_entry(mutate: Any, where: str) -> None:
    data = _raw()
    mutate(data)
    with pytest.raises(TritonValidationError, match=f"GpuReadingsInvalid.*|.*{where}") as err:
        readings_from_dict(data, source="r.json")
    assert err.value.code == "GpuReadingsInvalid" and where in str(err.value)


def test_a_missing_or_broken_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TritonValidationError, match="GpuReadingsInvalid"):
        read_readings(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(TritonValidationError, match="not JSON"):
        read_readings(tmp_path / "bad.json")


def _entry(name: str, memory: int, fmt: str = "torchscript") -> ModelEntry:
    return ModelEntry(
        name=name,
        format=fmt,
        platform=None,
        backend=None,
        config={"instance_group": [{"kind": "KIND_GPU", "count": 2}]},
        config_sha256="0" * 64,
        files={},
        memory_bytes=memory,
        memory_source="activations/fake-tensor",
    )


def test_a_reading_for_the_target_gpu_wins_over_the_manifest_and_says_so() -> None:
    r = read_readings(H100)
    e = _entry("resnet50_ts", 481_370_184)
    assert residency.model_bytes(e) == (481_370_184, "activations/fake-tensor")
    on_p5 = residency.model_bytes(e, readings=r, instance_type="ml.p5.48xlarge")
    assert on_p5 == (465_152_000, "reading:NVIDIA H100 80GB HBM3 peak allocated")
    # another GPU, or a model the report does not hold: the manifest's figure
    assert residency.model_bytes(e, readings=r, instance_type="ml.g5.xlarge")[0] == 481_370_184
    assert residency.model_bytes(_entry("other", 7), readings=r, instance_type="ml.p5.48xlarge")[0] == 7
    assert gpu_readings.model_reading(None, "ml.p5.48xlarge", "resnet50_ts") is None


def test_a_python_gpu_instance_adds_its_stub_context_to_the_footprint() -> None:
    from cdk_triton.config.manifest import TargetModel

    t = TargetModel(
        logical_name="p",
        target_model="p.tar.gz",
        model="p",
        models=["p"],
        local_path="p",
        sha256="0" * 64,
        size_bytes=1,
        s3_uri="s3://b/p.tar.gz",
    )
    py = residency.target_footprint("p", t, {"p": _entry("p", 1000, "python")})
    ts = residency.target_footprint("p", t, {"p": _entry("p", 1000)})
    assert ts.gpu_bytes == 2 * 1000
    assert py.gpu_bytes == 2 * (1000 + gpu_costs.CUDA_CONTEXT.bytes)


def test_the_fixed_terms_come_from_the_h100_reading() -> None:
    assert gpu_costs.CUDA_CONTEXT.bytes == 543_162_368  # NVML 666,894,336 - reserved 123,731,968
    assert gpu_costs.BACKEND_COSTS["libtorch"].bytes == 176_160_768
    assert [c.name for c in gpu_costs.server_costs(["torchscript", "python"])] == [
        "cuda_context",
        "triton_cuda_pool",
        "libtorch",
    ]
    assert all(c.source for c in gpu_costs.server_costs(gpu_costs.in_process_formats()))


def test_a_reading_without_an_allocator_figure_leaves_the_manifest_figure() -> None:
    """ONNX Runtime's memory is invisible to torch's allocator: the GPU check writes null there."""
    from cdk_triton.config import gpu_readings

    report = {
        "kind": gpu_readings.KIND,
        "version": gpu_readings.VERSION,
        "devices": [
            {
                "name": "NVIDIA A10G",
                "compute_capability": "8.6",
                "models": {
                    "ort": {"format": "onnx", "peak_allocated_bytes": None, "process_bytes": 900_000_000},
                    "ts": {"format": "torchscript", "peak_allocated_bytes": 400_000_000},
                },
            }
        ],
    }
    readings = gpu_readings.readings_from_dict(report)
    assert gpu_readings.model_reading(readings, "ml.g5.xlarge", "ort") is None
    assert gpu_readings.model_reading(readings, "ml.g5.xlarge", "ts") == (
        400_000_000,
        "reading:NVIDIA A10G peak allocated",
    )
