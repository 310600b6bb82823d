"""``cdk-triton capacity`` of an endpoint with instance_pools: one row per pool in priority order."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from cdk_triton.cli import main
from cdk_triton.config import tables
from tests.unit.constructs.support import MIB, load_example, with_components

POOLS = ["ml.g5.xlarge", "ml.g6.xlarge"]  # the example's classifier_pools (build/models.yaml)


def _manifest(tmp_path: Path, *, classifier_bytes: int = 300 * MIB) -> Path:
    data: dict[str, Any] = load_example()
    with_components(data)  # every model's memory recorded; an InferenceComponents entry "components"
    data["models"]["classifier"]["memory_bytes"] = classifier_bytes
    pooled = copy.deepcopy(data["endpoints"]["classifier"])
    pooled.update(name="classifier_pools", instance_types=POOLS)
    pooled["instance_pools"] = {"instance_types": POOLS, "provision_timeout_s": 900}
    data["endpoints"]["classifier_pools"] = pooled
    data["endpoints"]["components"]["instance_types"] = ["ml.g5.12xlarge", "ml.g5.xlarge"]
    data["endpoints"]["components"]["instance_pools"] = {"instance_types": ["ml.g5.12xlarge", "ml.g5.xlarge"]}
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(data))
    return path


def _run(path: Path, endpoint: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    rc = main(["capacity", "--manifest", str(path), "--no-measure", "--endpoint", endpoint, *extra])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_single_model_pools_in_priority_order_with_cost_delta(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _manifest(tmp_path)
    rc, out, _ = _run(path, "classifier_pools", capsys, "--json")
    assert rc == 0
    doc = json.loads(out)
    assert [p["instance_type"] for p in doc["pools"]] == POOLS and doc["provision_timeout_s"] == 900
    first, second = doc["pools"]
    assert first["priority"] == 1 and first["fits"] and second["fits"]
    assert first["gpu_count"] == 1 and first["gpu_memory_gib"] == 24
    p1, p2 = (tables.on_demand_price(t) for t in POOLS)
    assert first["price_per_hour"] == p1 and first["delta_per_hour"] == 0
    assert (
        second["delta_per_hour"] == pytest.approx(p2 - p1) if p1 and p2 else second["delta_per_hour"] is None
    )
    assert first["copies_per_instance"] is None  # not a components endpoint
    rc, text, _ = _run(path, "classifier_pools", capsys)
    assert rc == 0 and "2 instance pools, highest priority first" in text and "ml.g6.xlarge" in text


def test_a_repository_too_big_for_one_pool_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _manifest(tmp_path, classifier_bytes=30 * 1024**3)  # beyond a 24 GiB GPU
    rc, out, _ = _run(path, "classifier_pools", capsys)
    assert rc == 0 and "NO: classifier_pools" in out


def test_components_pools_report_copies_per_instance(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, _ = _run(_manifest(tmp_path), "components", capsys, "--json")
    assert rc == 0
    four, one = json.loads(out)["pools"]
    assert four["copies_per_instance"] == {"classifier": 4, "resnet_ts": 4}  # 1 GPU each, 4 GPUs
    assert one["copies_per_instance"] == {"classifier": 1, "resnet_ts": 1}
    assert four["fits"] and one["fits"]


def test_an_endpoint_without_pools_and_nothing_on_demand_is_a_coded_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _, err = _run(_manifest(tmp_path), "classifier", capsys)
    assert rc == 2 and "[CapacityEndpoint]" in err and "without instance_pools" in err
    assert "classifier_pools" in err  # named among what can be sized
