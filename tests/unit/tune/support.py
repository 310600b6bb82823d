"""A copy of the example's declaration (models.yaml, its factories, the python models) to tune and edit;
the ``cdk-triton tune`` command line."""

from __future__ import annotations

import shutil
from pathlib import Path

BUILD = Path(__file__).resolve().parents[3] / "build"


def example_copy(tmp: Path) -> Path:
    """The example's build/ declaration copied into ``tmp``; returns the models.yaml path."""
    for name in ("models.yaml", "example_models.py"):
        shutil.copy(BUILD / name, tmp / name)
    for folder in ("preprocess", "running_sum"):
        if (BUILD / folder).is_dir():
            shutil.copytree(BUILD / folder, tmp / folder)
    return tmp / "models.yaml"


def tune_argv(decl: Path, *options: str, model: str = "classifier_onnx") -> list[str]:
    """``cdk-triton tune`` of ``model`` in the declaration ``decl``, with ``options``."""
    return ["tune", "--config", str(decl), "--model", model, *options]
