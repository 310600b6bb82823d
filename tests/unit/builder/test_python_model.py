"""Python models run outside Triton with a stand-in triton_python_backend_utils."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def test_python_model_runs_outside_triton(tmp_path: Path) -> None:
    from cdk_triton.builder.python_model import PythonModelRunner

    root = Path(__file__).resolve().parents[3] / "build" / "preprocess" / "model.py"
    cfg = {"output": [{"name": "PIXELS", "data_type": "TYPE_FP32", "dims": ["3", "32", "32"]}]}
    img = np.full((2, 32, 32, 3), 255, dtype=np.uint8)
    out = PythonModelRunner(root, cfg, name="preprocess")({"IMAGE": img})["PIXELS"]
    assert out.shape == (2, 3, 32, 32) and out.dtype == np.float32
    np.testing.assert_allclose(out[0, 0, 0, 0], (1 - 0.4914) / 0.2470, rtol=1e-5)
    assert not list(root.parent.glob("__pycache__"))
