"""The host driver recorded in plan.json (the plan's metadata)."""

from __future__ import annotations

from pathlib import Path

from cdk_triton.builder.export.tensorrt import host_driver_version, plan_metadata


def test_host_driver_is_read_from_the_kernel_module_and_recorded(tmp_path: Path) -> None:
    proc = tmp_path / "version"
    proc.write_text(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  470.256.02  Thu May  2 14:37:44 UTC 2024\n"
    )
    assert host_driver_version(str(proc)) == "470.256.02"
    proc.write_text("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.82.07  Release Build\n")
    assert host_driver_version(str(proc)) == "580.82.07"
    assert host_driver_version(str(tmp_path / "absent")) is None
    meta = plan_metadata(
        tensorrt_version="10.4.0",
        compute_capability=(8, 6),
        gpu_name="A10G",
        precision="fp16",
        profile_list=[],
        host_driver="470.256.02",
    )
    assert meta["host_driver"] == "470.256.02"
    assert "host_driver" not in plan_metadata(
        tensorrt_version="10.4.0",
        compute_capability=(8, 6),
        gpu_name="A10G",
        precision="fp16",
        profile_list=[],
    )
