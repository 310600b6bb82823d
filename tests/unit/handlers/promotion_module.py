"""Load lambda/promotion/index.py as a module (lambda/ is no package: it ships as a Lambda asset)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

HANDLER = Path(__file__).resolve().parents[3] / "lambda" / "promotion" / "index.py"


def load() -> ModuleType:
    name = "cdk_triton_lambda_promotion"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, HANDLER)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
