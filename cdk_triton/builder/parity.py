"""Parity: the exported artifact, run on CPU, must agree with the eager model on the sample input."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cdk_triton.builder.samples import tolerance, triton_dtype
from cdk_triton.config.declaration import ModelSpec
from cdk_triton.errors import BuildError

if TYPE_CHECKING:
    import numpy as np


def compare(
    spec: ModelSpec, expected: dict[str, np.ndarray], actual: dict[str, np.ndarray], *, what: str
) -> float:
    """Raise BuildError(ParityMismatch) naming the largest difference; return the max abs difference."""
    worst = 0.0
    for t in spec.outputs:
        if t.name not in actual:
            raise BuildError(
                f"model '{spec.name}': {what} produced no output '{t.name}'", code="ParityMismatch"
            )
        import numpy as np

        e, a = np.asarray(expected[t.name]), np.asarray(actual[t.name])
        if e.shape != a.shape:
            raise BuildError(
                f"model '{spec.name}': {what} output '{t.name}' has shape {list(a.shape)}, the eager model "
                f"{list(e.shape)}",
                code="ShapeMismatch",
            )
        atol, rtol = tolerance(spec, t.dtype if t.dtype else triton_dtype(e.dtype))
        ef, af = e.astype(np.float64), a.astype(np.float64)
        diff = np.abs(ef - af)
        bound = atol + rtol * np.abs(ef)
        max_diff = float(diff.max()) if diff.size else 0.0
        worst = max(worst, max_diff)
        if diff.size and bool((diff > bound).any()):
            idx = np.unravel_index(int(np.argmax(diff - bound)), diff.shape)
            raise BuildError(
                f"model '{spec.name}': {what} output '{t.name}' differs from the eager model: largest difference "
                f"{max_diff:.3g} at index {list(map(int, idx))} (expected {ef[idx]:.6g}, got {af[idx]:.6g}); "
                f"tolerance atol={atol:g} rtol={rtol:g} (override with sample.atol / sample.rtol)",
                code="ParityMismatch",
            )
    return worst


def check_deterministic(spec: ModelSpec, first: dict[str, np.ndarray], second: dict[str, np.ndarray]) -> None:
    """The eager model must give the same output twice (dropout in train mode, random ops...)."""
    for k in first:
        import numpy as np

        if not np.array_equal(first[k], second[k], equal_nan=True):
            diff = float(np.max(np.abs(first[k].astype(np.float64) - second[k].astype(np.float64))))
            raise BuildError(
                f"model '{spec.name}': output '{k}' differs between two runs on the same input (largest "
                f"difference {diff:.3g}); the factory must return a model in eval mode without random ops",
                code="NonDeterministicOutput",
            )
