"""Test-only formats: what adding a Triton backend format takes (one row, one exporter, one stand-in).

``toy`` stores a ``tiny_models.Tiny`` module (``tanh(fc(x))``) as its weights in ``1/model.json``;
the build computes it with numpy for parity, and the local endpoint serves it with the python-based
backend in ``stand_in/`` under the backend name ``toy``.

``toygpu`` is the same artifact as a GPU-only format (``gpu_only``: the pipeline builds it on its GPU
job) that ``cdk-triton gpu-check`` runs on the device (``gpu_checkable``: the exporter's
``device_runner``): the proof that such a format is its row, its exporter and its stand-in.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from cdk_triton.config import formats

ROW = formats.Format(
    name="toy",
    kind=formats.EXPORTED,
    exporter="tests.toy_format.exporter",
    artifact="model.json",
    backend="toy",
    source_kinds=("factory",),
    release_fact="python",  # a python-based backend: the release's python runs it
    cache_tools=("numpy",),
    cpu_stand_in=str(Path(__file__).resolve().parent / "stand_in"),
)

GPU_ROW = replace(ROW, name="toygpu", gpu_only=True, gpu_checkable=True)
