"""The residency rule: usable memory, first-fit packing over GPU and host, the lower bound."""

from __future__ import annotations

from cdk_triton.config import residency
from cdk_triton.config.residency import Footprint, Usable

U = Usable(instance_type="t", gpu_bytes=100, host_bytes=50, gpu_count=1)


def fp(name: str, gpu: int, host: int = 0) -> Footprint:
    return Footprint(name=name, gpu_bytes=gpu, host_bytes=host, source=residency.MEASURED)


def test_first_fit_decreasing_fills_gpu_and_host_alike() -> None:
    items = [fp("a", 60), fp("b", 40), fp("c", 30, 40), fp("d", 10, 20)]
    packing = residency.pack(residency.by_size(items), U)
    assert packing.instances == [["a", "b"], ["c"], ["d"]]  # d's host bytes no longer fit beside c
    assert residency.instances_to_hold_all(items, U) == 3 and residency.lower_bound(items, U) == 2


def test_an_item_bigger_than_an_instance_is_unplaced_and_a_bound_keeps_the_first_instances() -> None:
    packing = residency.pack([fp("big", 101), fp("x", 50), fp("y", 60)], U, max_instances=1)
    assert packing.unplaced == ["big", "y"] and packing.instances == [["x"]]
    assert residency.instances_to_hold_all([fp("big", 101)], U) is None
    assert residency.instances_to_hold_all([], U) == 0


def test_unknown_instance_types_have_no_usable_memory() -> None:
    assert residency.usable_memory("ml.m5.xlarge") is None
    p4d = residency.usable_memory("ml.p4d.24xlarge")
    assert p4d is not None and p4d.gpu_count == 8 and p4d.gpu_bytes > 0
