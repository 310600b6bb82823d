"""What this machine can run: the capabilities the ``gpu`` and ``tensorrt`` markers skip by
(``tests/conftest.py``), also read by tests whose expectation depends on them."""

from __future__ import annotations

import shutil
from functools import cache


@cache
def has_cuda() -> bool:
    """A CUDA GPU torch can use (no driver: torch is not even imported)."""
    if shutil.which("nvidia-smi") is None:
        return False
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:
        return False


@cache
def has_tensorrt() -> bool:
    """The tensorrt package is importable (found without importing it)."""
    import importlib.util

    try:
        return importlib.util.find_spec("tensorrt") is not None
    except (ImportError, ValueError):
        return False


def skip_reasons(markers: set[str], *, cuda: bool, tensorrt: bool) -> list[str]:
    """Why a test with these markers cannot run here: ``gpu`` needs CUDA, ``tensorrt`` needs CUDA and
    the tensorrt package (capabilities, not the mere presence of a GPU)."""
    out = []
    if markers & {"gpu", "tensorrt"} and not cuda:
        out.append("needs a CUDA GPU (gpu marker); none on this machine")
    if "tensorrt" in markers and not tensorrt:
        out.append("needs the tensorrt package (tensorrt marker); not installed here")
    return out
