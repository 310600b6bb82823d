"""The text example's factory: the example's tiny BERT-style encoder (build/example_models.py), smaller."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

_spec = importlib.util.spec_from_file_location(
    "example_models", Path(__file__).parents[2] / "example_models.py"
)
assert _spec is not None and _spec.loader is not None
_example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_example)


def bert_encoder(**kwargs: Any) -> Any:
    """``example_models.bert_encoder`` (random weights from the build's seed, nothing downloaded)."""
    return _example.bert_encoder(**kwargs)
