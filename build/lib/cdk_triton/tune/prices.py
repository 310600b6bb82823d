"""The vendored on-demand price table (config/data/instance-prices.json): every value sourced, none confirmed."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any


@cache
def table() -> dict[str, Any]:
    return json.loads(
        resources.files("cdk_triton.config").joinpath("data/instance-prices.json").read_text("utf-8")
    )


def on_demand(instance_type: str) -> float | None:
    """USD per hour for ``instance_type`` in the table's region, or None when it is not listed."""
    entry = table()["prices"].get(instance_type)
    return float(entry["usd_per_hour"]) if entry else None
