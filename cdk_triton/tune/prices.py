"""The vendored on-demand price table (config/data/instance-prices.json): every value sourced, none confirmed.

Read through ``config.tables`` (one reader: ``cdk-triton capacity`` prices its fleet from the same table).
"""

from __future__ import annotations

from typing import Any

from cdk_triton.config import tables


def table() -> dict[str, Any]:
    return tables.price_table()


def on_demand(instance_type: str) -> float | None:
    """USD per hour for ``instance_type`` in the table's region, or None when it is not listed."""
    return tables.on_demand_price(instance_type)
