"""The build context's records: a cached record reads back into the same JSON."""

from __future__ import annotations

import json

from cdk_triton.builder.context import ModelRecord


def test_cached_records_round_trip(tiny_build) -> None:  # type: ignore[no-untyped-def]
    _, tmp = tiny_build
    records = sorted((tmp / "out" / "cache" / "models").glob("*.json"))
    assert len(records) == 3
    for path in records:
        data = json.loads(path.read_text("utf-8"))
        rec = ModelRecord.from_dict(data)
        assert rec.to_dict() == data
        assert rec.exported.parity_max_abs_diff is not None and rec.exported.plans is None
        assert "plans" not in rec.to_dict() and "steps" not in rec.to_dict()
