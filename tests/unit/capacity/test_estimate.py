"""The capacity report's arithmetic on hand-made manifests: residency, hit ratios, miss cost, price, advice."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdk_triton.capacity import estimate, recommend
from cdk_triton.capacity.traffic import no_traffic, read_traffic, traffic_from_mapping
from cdk_triton.config import gpu_costs, residency, sizing
from cdk_triton.config.manifest import Manifest
from cdk_triton.errors import TritonValidationError
from tests.unit.capacity.support import INSTANCE, USABLE, U, mme, model, sized


def _report(m: Manifest, traffic: dict | None = None, **options: object) -> estimate.CapacityReport:
    entry = m.endpoint("multi")
    names = sorted(entry.target_models)
    t = traffic_from_mapping(traffic, names) if traffic is not None else no_traffic(names)
    return estimate.build_report(m, entry, t, estimate.Options(instance_type=INSTANCE, **options))  # type: ignore[arg-type]


def test_usable_memory_sets_aside_the_runtime_and_a_fragmentation_share() -> None:
    """The fixed terms (gpu_costs: the server's CUDA context, Triton's CUDA pool, each in-process
    backend's workspaces; H100 readings), then the 10 % allocator share."""
    fixed = (
        gpu_costs.CUDA_CONTEXT.bytes
        + gpu_costs.TRITON_CUDA_POOL.bytes
        + 3 * gpu_costs.BACKEND_COSTS["libtorch"].bytes
    )
    every = residency.usable_memory(INSTANCE)  # default: every in-process backend
    assert every is not None and every.gpu_bytes == int((24 * sizing.GiB - fixed) * 0.9)
    onnx_only = residency.usable_memory(INSTANCE, ["onnx"])
    assert onnx_only is not None and onnx_only.gpu_bytes == int(
        (24 * sizing.GiB - fixed + 2 * gpu_costs.BACKEND_COSTS["libtorch"].bytes) * 0.9
    )
    assert USABLE.host_bytes == 16 * sizing.GiB - sizing.SERVER_HOST_BYTES


def test_all_warm_and_hit_ratio_by_instances() -> None:
    r = _report(
        sized(a=0.4, b=0.4, c=0.4, d=0.4),
        {"share": {"a": 0.7, "b": 0.1, "c": 0.1, "d": 0.1}},
        price_per_hour=2.0,
        target_hit_ratio=0.8,
    )
    assert r.all_warm_instances == 2 and r.lower_bound_instances == 2
    assert r.resident_per_instance == [2, 2] and r.most_on_one_instance == 2
    assert [(p.instances, p.resident, p.hit_ratio) for p in r.curve] == [(1, 2, 0.8), (2, 4, 1.0)]
    assert r.instances_for_target == 1 and r.cost(1) == 2.0 and r.cost(r.all_warm_instances) == 4.0
    assert estimate.instances_for_hit(r, 0.95) == 2
    # the mean added wait of one instance: c and d miss, each 10 % of requests, at the estimated load
    miss = 1000 / sizing.DOWNLOAD_BYTES_PER_S + int(0.4 * U) / sizing.LOAD_BYTES_PER_S
    assert r.curve[0].miss_wait_s == pytest.approx(0.2 * miss, rel=1e-4)
    assert all(m.miss_source == estimate.MISS_ESTIMATE for m in r.models)


def test_the_most_requested_models_are_kept_first() -> None:
    r = _report(sized(big=0.9, s1=0.1, s2=0.1), {"rps": {"s1": 30, "s2": 10}}, target_hit_ratio=1.0)
    assert r.curve[0].hit_ratio == 1.0 and r.curve[0].resident == 2  # s1 and s2 share the first instance
    assert r.instances_for_target == 1 and r.all_warm_instances == 2
    assert r.unlisted == ["big"] and r.total_rps == 40


def test_a_model_bigger_than_an_instance_fits_nowhere() -> None:
    r = _report(sized(huge=1.2, a=0.5), {"share": {"huge": 0.5, "a": 0.5}}, target_hit_ratio=0.9)
    assert r.too_big == ["huge"] and r.all_warm_instances is None
    assert [p.hit_ratio for p in r.curve] == [0.5] and r.instances_for_target is None
    huge = next(m for m in r.models if m.name == "huge")
    assert not huge.fits and huge.placement == recommend.NEITHER
    assert any("fit(s) no ml.g5.xlarge" in n for n in r.notes)
    assert any("cannot be reached" in n for n in r.notes)


@pytest.mark.parametrize("traffic", [None, {"rps": {"a": 0, "b": 0}}])
def test_zero_traffic_leaves_hit_ratios_undefined(traffic: dict | None) -> None:
    r = _report(sized(a=0.6, b=0.6), traffic)
    assert r.all_warm_instances == 2 and r.instances_for_target is None
    assert [p.hit_ratio for p in r.curve] == [None, None]
    assert all(m.placement == recommend.MME for m in r.models)
    assert any("hit ratios are undefined" in n for n in r.notes)


def test_shares_and_rps_in_the_same_proportion_give_the_same_report() -> None:
    m = sized(a=0.6, b=0.6, c=0.6)  # one per instance
    by_share = _report(m, {"share": {"a": 6, "b": 3, "c": 1}})
    by_rps = _report(m, {"rps": {"a": 60, "b": 30, "c": 10}})
    assert by_share.curve == by_rps.curve and by_share.curve[0].hit_ratio == pytest.approx(0.6)
    assert [x.share for x in by_share.models] == [0.6, 0.3, 0.1]
    assert [x.rps for x in by_rps.models] == [60, 30, 10] and [x.rps for x in by_share.models] == [None] * 3


def test_a_v1_manifest_without_memory_falls_back_on_files_then_archive() -> None:
    m = mme(
        {"with_files": model("with_files", memory=None, size=5000), "bare": model("bare", memory=None)},
        archive=700,
        version=1,
    )
    r = _report(m)
    rows = {x.name: x for x in r.models}
    assert (rows["with_files"].memory_source, rows["with_files"].gpu_bytes) == (residency.FILES, 5000)
    assert (rows["bare"].memory_source, rows["bare"].gpu_bytes) == (residency.ARCHIVE, 700)


def test_instance_groups_multiply_and_kind_cpu_counts_on_the_host() -> None:
    groups = [{"kind": "KIND_GPU", "count": 2}, {"kind": "KIND_CPU", "count": 3}]
    m = mme({"g": model("g", memory=100, groups=groups)})
    (row,) = _report(m).models
    assert (row.gpu_bytes, row.host_bytes) == (200, 300)


def test_recommendation_hot_large_and_long_tail_when_the_mme_outgrows_one_instance() -> None:
    m = sized(
        hot=0.05, large=0.6, tail=0.05, idle=0.05, filler=0.5
    )  # 1.25 instances: no single one holds all
    r = _report(m, {"rps": {"hot": 90, "large": 1, "tail": 9}})
    rows = {x.name: x for x in r.models}
    assert (rows["hot"].placement, rows["hot"].copies) == (recommend.COMPONENT, 1)
    assert rows["large"].placement == recommend.COMPONENT and rows["large"].why.startswith("large")
    assert rows["tail"].placement == recommend.MME and rows["tail"].why.startswith("long tail")
    assert rows["idle"].placement == recommend.MME and rows["idle"].why == "not requested"
    assert (r.all_warm_instances, r.rest_warm_instances) == (2, 1)  # without hot and large, one instance
    busy = {x.name: x for x in _report(m, {"rps": {"hot": 90, "tail": 9}}, rps_per_copy=40).models}
    assert (busy["hot"].placement, busy["hot"].copies) == (recommend.COMPONENT, 3)
    assert busy["hot"].why == "busy: 90 rps / 40 per copy"


def test_hot_models_stay_on_an_mme_that_keeps_every_model_warm_on_one_instance() -> None:
    rows = {x.name: x for x in _report(sized(hot=0.1, tail=0.1), {"rps": {"hot": 90, "tail": 10}}).models}
    assert rows["hot"].placement == recommend.MME and "every model fits one instance" in rows["hot"].why
    with_copies = _report(sized(hot=0.1, tail=0.1), {"rps": {"hot": 90, "tail": 10}}, rps_per_copy=50)
    assert [(x.name, x.placement, x.copies) for x in with_copies.models][0] == ("hot", recommend.COMPONENT, 2)


def test_price_comes_from_the_vendored_table_unless_overridden() -> None:
    r = _report(sized(a=0.1))
    assert r.price_per_hour == 1.41 and "vendored" in r.price_source
    r = _report(sized(a=0.1), price_per_hour=3.5)
    assert r.price_per_hour == 3.5 and r.price_source == "--price-per-hour"


def test_measured_cold_loads_replace_the_estimate() -> None:
    m = sized(a=0.3, b=0.3)
    entry = m.endpoint("multi")
    t = no_traffic(["a", "b"])
    r = estimate.build_report(m, entry, t, estimate.Options(instance_type=INSTANCE), measured_s={"a": 0.25})
    rows = {x.name: x for x in r.models}
    assert (rows["a"].miss_s, rows["a"].miss_source) == (0.25, estimate.MISS_MEASURED)
    assert rows["b"].miss_source == estimate.MISS_ESTIMATE


@pytest.mark.parametrize(
    ("doc", "code"),
    [
        ({"rps": {"nope": 1}}, "UnknownTrafficModel"),
        ({"rps": {"a": -1}}, "InvalidTraffic"),
        ({"rps": {"a": True}}, "InvalidTraffic"),
        ({"rps": {"a": 1}, "share": {"a": 1}}, "InvalidTraffic"),
        ({"requests": {"a": 1}}, "InvalidTraffic"),
        ([1, 2], "InvalidTraffic"),
    ],
)
def test_fails_a_traffic_document_of_the_wrong_shape(doc: object, code: str) -> None:
    with pytest.raises(TritonValidationError) as info:
        traffic_from_mapping(doc, ["a"])
    assert info.value.code == code


def test_traffic_reads_yaml_and_json_and_hashed_names(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text("share:\n  a-0123456789ab.tar.gz: 3\n  b: 1\n")
    t = read_traffic(tmp_path / "t.yaml", ["a", "b"], {"a-0123456789ab.tar.gz": "a"})
    assert t.shares == {"a": 0.75, "b": 0.25} and t.kind == "share"
    (tmp_path / "t.json").write_text('{"rps": {"a": 2}}')
    assert read_traffic(tmp_path / "t.json", ["a", "b"]).unlisted == ["b"]
    (tmp_path / "bad.yaml").write_text("rps: [unclosed\n")
    with pytest.raises(TritonValidationError, match="not valid YAML"):
        read_traffic(tmp_path / "bad.yaml", ["a"])


def test_fails_an_endpoint_that_loads_nothing_on_demand() -> None:
    from tests.unit.constructs.support import manifest_with

    m = manifest_with()
    with pytest.raises(TritonValidationError) as info:
        estimate.endpoint_entry(m, "classifier")
    assert info.value.code == "CapacityEndpoint" and "SingleModel" in info.value.problem
    assert estimate.endpoint_entry(m, None).name == "multi"
    with pytest.raises(TritonValidationError) as info:
        estimate.usable_for("ml.m5.xlarge")
    assert info.value.code == "CapacityInstanceType"


def test_a_gpu_reading_for_the_instance_types_gpu_sizes_the_model_and_the_report_says_so() -> None:
    """--gpu-readings: a model read on the instance type's GPU takes its peak allocated bytes from the
    report (the H100 fixture, renamed to this manifest's model); the others keep the manifest's."""
    import json
    from pathlib import Path

    from cdk_triton.config.gpu_readings import readings_from_dict

    data = json.loads((Path(__file__).resolve().parents[2] / "fixtures/gpu-readings/h100.json").read_text())
    models = data["devices"][0]["models"]
    models["a"] = models.pop("resnet50_ts")
    readings = readings_from_dict(data, source="h100.json")
    m = sized(a=0.4, b=0.4)
    on_g5 = _report(m, gpu_readings=readings)  # an A10G: no reading applies
    assert {r.name: r.memory_source for r in on_g5.models} == {"a": "measured", "b": "measured"}
    assert any("has no reading for the GPU of ml.g5.xlarge" in n for n in on_g5.notes)
    entry = m.endpoint("multi")
    names = sorted(entry.target_models)
    p5 = estimate.build_report(
        m, entry, no_traffic(names), estimate.Options(instance_type="ml.p5.48xlarge", gpu_readings=readings)
    )
    rows = {r.name: r for r in p5.models}
    assert rows["a"].gpu_bytes == 465_152_000 and rows["a"].memory_source.startswith("reading:NVIDIA H100")
    assert rows["b"].memory_source == "measured"
    assert any("reading of NVIDIA H100 80GB HBM3" in n and "1 of 2" in n for n in p5.notes)
