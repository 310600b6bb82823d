"""Build-stage test helpers: a tiny declaration writer."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
EXAMPLE = ROOT / "build" / "models.yaml"

TINY_MODEL = """
  - name: {name}
    format: {format}
    source: {{factory: tiny_models:{factory}, seed: 0}}
    inputs: [{{name: x, dtype: FP32, shape: [4]}}]
    outputs: [{{name: y, dtype: FP32, shape: [3]}}]
    max_batch_size: 4
"""


def write_decl(
    tmp: Path, body: str, *, endpoints: str | None = None, location: str = "s3://test-bucket/prefix/"
) -> Path:
    """A models.yaml in ``tmp`` (next to a copy of tiny_models.py and the example preprocess model)."""
    tmp.mkdir(parents=True, exist_ok=True)
    shutil.copy(HERE / "tiny_models.py", tmp / "tiny_models.py")
    if not (tmp / "preprocess").exists():
        shutil.copytree(ROOT / "build" / "preprocess", tmp / "preprocess")
    text = f"triton_version: '24.09'\nartifact_location: {location}\nmodels:\n{textwrap.dedent(body).strip(chr(10))}\n"
    if endpoints:
        text += f"endpoints:\n{textwrap.dedent(endpoints).strip(chr(10))}\n"
    path = tmp / "models.yaml"
    path.write_text(text)
    return path


def tiny(name: str = "tiny", format: str = "onnx", factory: str = "tiny") -> str:
    return TINY_MODEL.format(name=name, format=format, factory=factory)
