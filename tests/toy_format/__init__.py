"""A test-only format: what adding a Triton backend format takes (one row, one exporter, one stand-in).

``toy`` stores a ``tiny_models.Tiny`` module (``tanh(fc(x))``) as its weights in ``1/model.json``;
the build computes it with numpy for parity, and the local endpoint serves it with the python-based
backend in ``stand_in/`` under the backend name ``toy``.
"""

from __future__ import annotations

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
