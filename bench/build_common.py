"""Shared helpers of the build-stage benchmarks (bench/build_*.py)."""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> str:
    return (
        f"{platform.machine()} {os.cpu_count()} cores, Python {sys.version.split()[0]}, {platform.system()}"
    )


def make_repository(root: Path, size_mb: int, *, models: int = 2) -> Path:
    """A model repository of ``models`` model dirs whose weights total ``size_mb`` MB (float32 noise
    quantized like trained weights: compressible about as much as real checkpoints)."""
    rng = np.random.default_rng(0)
    per = size_mb * 1024 * 1024 // models
    for i in range(models):
        d = root / f"model_{i}" / "1"
        d.mkdir(parents=True, exist_ok=True)
        (root / f"model_{i}" / "config.pbtxt").write_text(
            f'name: "model_{i}"\nplatform: "onnxruntime_onnx"\n'
        )
        with (d / "model.onnx").open("wb") as fh:
            left = per
            while left > 0:
                n = min(left, 16 << 20)
                w = (rng.standard_normal(n // 4).astype(np.float32) * 0.02).round(4)
                fh.write(w.tobytes()[:n])
                left -= n
    return root


def timed(fn: Any) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def write_result(name: str, command: str, summary: list[dict[str, Any]], details: dict[str, Any]) -> Path:
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}.json"
    data = {"name": name, "command": command, "machine": machine(), "summary": summary, "details": details}
    path.write_text(json.dumps(data, indent=2) + "\n")
    print(json.dumps(data, indent=2))
    return path
