"""`serve` of a fleet-sized MME, in a bounded form (200 TargetModels; bench/serve_fleet.py runs 5,000):
the start reads one archive per distinct python file, not every archive, and any TargetModel loads
on its first request."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.serve_fleet import write_fleet
from cdk_triton.config.manifest import Manifest, read_manifest
from cdk_triton.local.endpoint import LocalEndpoint
from cdk_triton.local.overlay import CpuOverlay
from cdk_triton.local.repository import auto_complete_archives

N = 200


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Manifest:
    return read_manifest(write_fleet(tmp_path_factory.mktemp("fleet"), N))


def test_the_start_reads_one_archive_per_distinct_python_file(fleet: Manifest, tmp_path: Path) -> None:
    entry = fleet.endpoints["fleet"]
    [one] = auto_complete_archives(fleet, entry)  # 200 TargetModels, one model.py
    assert one.is_file()
    # a model whose files are not recorded is read whole
    bare = {**fleet.models, "m00007": dataclasses.replace(fleet.models["m00007"], files={})}
    assert len(auto_complete_archives(dataclasses.replace(fleet, models=bare), entry)) == 2


@pytest.fixture(scope="module")
def served(fleet: Manifest) -> Iterator[LocalEndpoint]:
    with LocalEndpoint(fleet, "fleet", overlay=CpuOverlay(instance_count=1)) as ep:
        yield ep


@pytest.mark.triton
def test_any_target_model_of_the_fleet_answers_on_its_first_request(served: LocalEndpoint) -> None:
    body = json.dumps(
        {"inputs": [{"name": "RAW", "shape": [1, 4], "datatype": "UINT8", "data": [1, 2, 3, 4]}]}
    )
    for name in ("m00000", "m00199"):
        status, _, reply = served.invoke(body.encode(), "application/json", target_model=name)
        assert status == 200, reply[:300]
        assert json.loads(reply)["outputs"][0]["data"] == [2.0, 4.0, 6.0, 8.0]
    assert served.models is not None and len(served.models.loaded()) == 2  # nothing else was loaded
