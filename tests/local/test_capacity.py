"""``cdk-triton capacity`` with a measured cold load: a TargetModel loaded into the real local Triton."""

from __future__ import annotations

import json

import pytest

from cdk_triton.capacity import estimate
from cdk_triton.cli import main

pytestmark = pytest.mark.triton


def test_capacity_measures_a_cold_load_in_the_local_server(built, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["capacity", "--manifest", str(built[1]), "--endpoint", "multi", "--json", "--measure-count", "1"]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    measured = [m for m in doc["models"] if m["miss_source"] == estimate.MISS_MEASURED]
    assert len(measured) == 1, doc["notes"]
    largest = max(doc["models"], key=lambda m: (m["archive_bytes"], m["name"]))
    assert measured[0]["archive_bytes"] == largest["archive_bytes"]  # the largest archive is measured first
    assert 0 < measured[0]["miss_s"] < 60
    assert not any(n.startswith("cold loads not measured") for n in doc["notes"])
