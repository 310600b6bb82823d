"""Load lambda/promotion/index.py as a module (through the one loader of verify_module)."""

from __future__ import annotations

from types import ModuleType

from tests.unit.handlers.verify_module import load_lambda


def load() -> ModuleType:
    """lambda/promotion/index.py."""
    return load_lambda("promotion")
