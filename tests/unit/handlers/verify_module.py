"""Load a handler of lambda/ as a module (lambda/ is no package: each handler ships as a Lambda asset)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

LAMBDA_DIR = Path(__file__).resolve().parents[3] / "lambda"


def load_lambda(handler: str) -> ModuleType:
    """``lambda/<handler>/index.py``, loaded once per test session."""
    name = f"cdk_triton_lambda_{handler}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, LAMBDA_DIR / handler / "index.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load() -> ModuleType:
    """lambda/verify/index.py."""
    return load_lambda("verify")
