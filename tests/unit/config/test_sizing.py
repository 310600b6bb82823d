"""The instance facts every host limit reads, and the sizing arithmetic (config/sizing.py, placement)."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from cdk_triton.config import sizing, tables
from cdk_triton.config.placement import memory_warnings
from cdk_triton.config.sizing import GB, MB, GiB

HOST_FIELDS = ("vcpus", "host_memory_gib", "default_volume_gb", "max_volume_gb")


def test_every_instance_type_has_host_facts() -> None:
    raw = json.loads(
        resources.files("cdk_triton.config").joinpath("data", "instance-types.json").read_text("utf-8")
    )
    for name, facts in raw["instance_types"].items():
        missing = [f for f in HOST_FIELDS if not isinstance(facts.get(f), int) or facts[f] <= 0]
        assert not missing, f"{name} lacks {missing}"
        if facts["local_nvme_storage"]:  # the instance store is the volume, fixed at its size
            assert facts["default_volume_gb"] == facts["max_volume_gb"] >= 100, name
        else:  # EBS: SageMaker's default 30 GB, VolumeSizeInGB up to 512
            assert (facts["default_volume_gb"], facts["max_volume_gb"]) == (30, 512), name
    host = raw["host_facts"]
    assert host["date_read"] == "2026-11-26" and all(host["sources"].values())
    assert tables.instance_type_info("ml.g5.xlarge").host_memory_gib == 16  # type: ignore[union-attr]
    assert tables.instance_type_info("ml.p3.2xlarge").max_volume_gb == 512  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("nbytes", "seconds", "over"),
    [
        (0, 60, False),  # the floor: 60 s
        (1, 61, False),  # any byte rounds up to a second
        ((3600 - 60) * 50 * MB, 3600, False),  # exactly the maximum
        ((3600 - 60) * 50 * MB + 1, 3600, True),  # clamped, and said so
        (10**15, 3600, True),
    ],
)
def test_download_seconds_edges(nbytes: int, seconds: int, over: bool) -> None:
    assert sizing.startup_seconds(nbytes, sizing.DOWNLOAD_BYTES_PER_S) == seconds
    assert sizing.over_maximum(nbytes, sizing.DOWNLOAD_BYTES_PER_S) is over


def test_timeouts_emitted_only_above_600_s() -> None:
    at_600 = (600 - 60) * sizing.DOWNLOAD_BYTES_PER_S
    assert sizing.model_data_download_timeout(at_600) is None  # SageMaker's default is kept
    assert sizing.model_data_download_timeout(at_600 + 1) == 601
    assert sizing.model_data_download_timeout(None) is None
    load_600 = (600 - 60) * sizing.LOAD_BYTES_PER_S
    assert sizing.container_startup_health_check_timeout(load_600) is None
    assert sizing.container_startup_health_check_timeout(load_600 + 1) == 601
    assert sizing.container_startup_health_check_timeout(10**14) == 3600


def test_volume_need_counts_the_unpacked_copy_of_a_tar_gz() -> None:
    assert sizing.volume_need_bytes(artifact_bytes=10, unpacked_bytes=25, packaging="tar.gz") == 35
    assert sizing.volume_need_bytes(artifact_bytes=10, unpacked_bytes=25, packaging="directory") == 25
    assert sizing.sized_volume_gb(30 * GiB) == 36  # 20 % headroom
    assert sizing.sized_volume_gb(1) == 1


def _config(*dims: list[int], batch: int = 8, dtype: str = "TYPE_FP32") -> dict[str, object]:
    return {
        "max_batch_size": batch,
        "input": [{"name": "x", "data_type": dtype, "dims": [str(d) for d in dims[0]]}],
        "output": [{"name": "y", "data_type": "TYPE_FP32", "dims": [str(d) for d in dims[1]]}],
    }


def test_model_memory_falls_back_on_weights_plus_the_largest_batch() -> None:
    """Without an activation peak (no eager module: a given file, python, ensemble) the stated rule:
    weight files + inputs and outputs at the largest batch, labelled files+io."""
    cfg = _config([3, 32, 32], [10])
    assert sizing.io_bytes(cfg) == ((3 * 32 * 32 + 10) * 4 * 8, True)
    assert sizing.model_memory("onnx", 1000, cfg) == (1000 + (3 * 32 * 32 + 10) * 32, sizing.FILES_IO)
    assert sizing.model_memory("tensorrt", 1000, cfg)[1] == "files+io"
    dynamic = _config([-1, 16], [10], batch=0)  # -1 counted as 1, batch 0 as 1
    assert sizing.model_memory("onnx", 1000, dynamic) == (1000 + (16 + 10) * 4, "files+io")
    assert sizing.model_memory("python", 50, cfg) == (50 + (3 * 32 * 32 + 10) * 32, "files+io")
    assert sizing.model_memory("ensemble", 700, cfg) == ((3 * 32 * 32 + 10) * 32, "files+io")
    assert sizing.model_memory("onnx", None, cfg) == (None, "files+io")
    assert sizing.io_bytes(_config([4], [1], batch=1, dtype="TYPE_FP16"))[0] == 4 * 2 + 4


def test_model_memory_is_weights_plus_the_activation_peak_where_the_build_counted_it() -> None:
    """The activation peak already holds the inputs and outputs (they are alive while the model runs):
    it replaces the I/O term, and the label names its method."""
    cfg = _config([3, 32, 32], [10])
    fake = {"peak_bytes": 5_000_000, "method": "fake-tensor"}
    assert sizing.model_memory("torchscript", 1000, cfg, fake) == (5_001_000, sizing.ACTIVATIONS)
    cpu = {"peak_bytes": 7, "method": "cpu-run"}
    assert sizing.model_memory("onnx", 1000, cfg, cpu) == (1007, sizing.ACTIVATIONS_CPU)
    # a format whose bytes are not weight files keeps the stated rule even when given a peak
    assert sizing.model_memory("ensemble", 700, cfg, fake)[1] == sizing.FILES_IO
    assert set(sizing.MEMORY_SOURCES) >= {sizing.ACTIVATIONS, sizing.ACTIVATIONS_CPU, sizing.FILES_IO}


def test_recorded_model_bytes_is_memory_else_files_else_unknown() -> None:
    """The one author of "memory_bytes, else size_bytes" (capacity, the checks, the components' floor)."""
    from types import SimpleNamespace

    def m(memory: int | None, size: int | None, source: str | None = None) -> SimpleNamespace:
        return SimpleNamespace(memory_bytes=memory, size_bytes=size, memory_source=source, config={})

    assert sizing.recorded_model_bytes(m(10, 99, "activations/fake-tensor")) == (
        10,
        "activations/fake-tensor",
    )
    assert sizing.recorded_model_bytes(m(0, 99, "files+io")) == (0, "files+io")  # 0 is a figure, not unknown
    assert sizing.recorded_model_bytes(m(None, 99)) == (99, sizing.FILES)
    assert sizing.recorded_model_bytes(m(None, None)) == (None, None)
    assert sizing.recorded_model_bytes(None) == (None, None)
    assert sizing.component_model_sizes([m(None, 99)]) == [(99, 1)]


GPU = [("KIND_GPU", 1, [])]


def test_gpu_memory_is_summed_over_the_whole_repository() -> None:
    each = 10 * GiB  # each fits one 24 GiB A10G, the three together do not
    models = {n: (GPU, each) for n in ("a", "b", "c")}
    [(wid, msg)] = memory_warnings("ml.g5.12xlarge", models)
    assert wid == "cdk-triton:GpuMemoryOversubscribed" and "need about 30.0 GiB" in msg
    assert memory_warnings("ml.g5.12xlarge", {"a": (GPU, each), "b": (GPU, each)}) == []
    # pinned to different GPUs, they fit
    spread = {n: ([("KIND_GPU", 1, [i])], each) for i, n in enumerate(("a", "b", "c"))}
    assert memory_warnings("ml.g5.12xlarge", spread) == []
    [(_, mme)] = memory_warnings("ml.g5.12xlarge", models, multi_model=True)
    assert "unloads the least used" in mme
    assert memory_warnings("ml.c5.xlarge", models) == []  # no facts for CPU types
    assert memory_warnings("ml.g5.xlarge", {"a": (GPU, None)}) == []  # size unknown


def test_host_memory_counts_cpu_instances_and_the_server() -> None:
    cpu4 = [("KIND_CPU", 4, [])]
    # ml.g5.xlarge: 16 GiB host; 2 GiB Triton + 4 x 4 GiB on the CPU = 18 GiB
    [(wid, msg)] = memory_warnings("ml.g5.xlarge", {"a": (cpu4, 4 * GiB)})
    assert wid == "cdk-triton:HostMemoryOversubscribed" and "18.0 GiB" in msg and "16 GiB" in msg
    assert memory_warnings("ml.g5.4xlarge", {"a": (cpu4, 4 * GiB)}) == []  # 64 GiB
    assert memory_warnings("ml.g5.xlarge", {"a": (GPU, 14 * GiB)}) == []  # 16 GiB exactly: fits
    ids = [w for w, _ in memory_warnings("ml.g5.xlarge", {"a": (GPU, 15 * GiB), "b": (cpu4, 1)})]
    assert ids == ["cdk-triton:HostMemoryOversubscribed"]
    assert GiB > GB
