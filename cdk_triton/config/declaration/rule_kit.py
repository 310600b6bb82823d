"""The kit of the declaration's cross-reference rules: what a rule reads and returns, and two helpers.

``rules`` and ``graph_rules`` import it (so ``rules`` runs ``graph_rules``' functions without an
import circle).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from cdk_triton.config.declaration.endpoint import EndpointSpec
from cdk_triton.config.declaration.model import ModelSpec
from cdk_triton.config.parse import closest, problem
from cdk_triton.errors import TritonValidationError


class DeclarationView(Protocol):
    """What the rules read of a ``build.BuildSpec`` (a protocol, so ``build`` may import the rules)."""

    @property
    def triton_version(self) -> str: ...
    @property
    def models(self) -> tuple[ModelSpec, ...]: ...
    @property
    def endpoints(self) -> tuple[EndpointSpec, ...]: ...
    @property
    def base_dir(self) -> str: ...
    @property
    def model_names(self) -> list[str]: ...
    def closure(self, name: str) -> list[str]: ...
    def resolve_path(self, relative: str) -> Path: ...


Problems = list[TritonValidationError]
ModelRule = Callable[[DeclarationView, int, ModelSpec], Problems]
EndpointRule = Callable[[DeclarationView, int, EndpointSpec], Problems]
Rule = Callable[[DeclarationView], Problems]


def models_by_name(spec: DeclarationView) -> dict[str, ModelSpec]:
    """The declared models by name."""
    return {m.name: m for m in spec.models}


def unknown_model(path: str, prop: str, name: str, by_name: dict[str, ModelSpec]) -> TritonValidationError:
    """``UnknownModelReference``: ``name`` (a ``prop`` at ``path``) is no declared model; names the closest."""
    close = closest(name, by_name)
    return problem(
        "UnknownModelReference",
        path,
        prop,
        name,
        "is not a declared model",
        ", ".join(by_name),
        f"did you mean '{close}'?" if close else "declare the model",
    )
