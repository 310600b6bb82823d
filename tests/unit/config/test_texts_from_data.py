"""The instance families an error text lists come from the table: a family added to
``instance-types.json`` appears in every such text (no hand-kept list drifts from the data)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from cdk_triton.config import instance_rules, placement, tables

NEW_FAMILY = "g9x"


@pytest.fixture
def new_family(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """``ml.g9x.xlarge`` added to the instance-type table (a copy of a single-GPU type's facts)."""
    real = tables.load_data

    def load(name: str) -> dict[str, Any]:
        data = real(name)
        if name == "instance-types.json":
            data = copy.deepcopy(data)
            types = data["instance_types"]
            types[f"ml.{NEW_FAMILY}.xlarge"] = dict(types["ml.g5.xlarge"])
            types[f"ml.{NEW_FAMILY}.12xlarge"] = {**types["ml.g5.12xlarge"]}
        return data

    monkeypatch.setattr(tables, "load_data", load)
    tables._instance_type_table.cache_clear()
    yield NEW_FAMILY
    monkeypatch.undo()
    tables._instance_type_table.cache_clear()


def test_the_families_are_the_tables() -> None:
    families = tables.gpu_families()
    assert {"g6e", "g7e", "p6-b200"} <= set(families)  # once missing from hand-written lists
    assert families.index("g4dn") < families.index("g5") < families.index("g6e") < families.index("p5en")
    assert "p2" not in tables.gpu_families(min_compute_capability="7.0")
    assert tables.gpu_type_examples(min_compute_capability="7.5") == ["ml.g4dn.xlarge", "ml.g5.xlarge"]


def test_a_family_added_to_the_table_appears_in_every_error_text(new_family: str) -> None:
    assert new_family in tables.gpu_families()
    arm = instance_rules.check_triton_runs_there("ml.c6g.xlarge")
    assert arm is not None and new_family in arm.allowed and "c6i" in arm.allowed
    low = instance_rules.check_compute_capability("ml.p2.xlarge", tables.DEFAULT_TRITON_VERSION)
    assert low is not None and new_family in low.allowed
    (cpu,) = placement.check_gpu_placement("ml.c5.xlarge", [("KIND_GPU", 1, ())], model="m")
    assert cpu.code == "GpuInstanceGroupOnCpuInstance" and new_family in cpu.allowed


def test_a_family_added_to_the_table_appears_in_the_pipeline_text(new_family: str) -> None:
    from cdk_triton.errors import TritonValidationError
    from cdk_triton.pipeline import gpu_targets

    declaration = {
        "triton_version": "24.09",
        "models": [{"name": "t", "format": "tensorrt"}],
        "endpoints": [
            {"name": "e", "mode": "SingleModel", "instance_types": ["ml.c5.xlarge"], "models": ["t"]}
        ],
    }
    with pytest.raises(TritonValidationError, match="NoGpuBuildPath") as caught:
        gpu_targets.gpu_build_targets(declaration)
    assert f"ml.{new_family}" in str(caught.value)


def test_the_build_names_multi_gpu_types_of_the_table() -> None:
    import types

    from cdk_triton.builder import portability

    pin = portability.DevicePin(device="cuda:0", node="aten::to", method="forward", where="")
    err = portability.pinned_error(types.SimpleNamespace(name="m", format="torchscript"), "gpu", [pin])  # type: ignore[arg-type]
    examples = tables.gpu_type_examples(multi_gpu=True, count=3)
    assert all(tables.instance_types()[t].gpu_count > 1 for t in examples)
    assert f"({', '.join(examples)})" in str(err)
