"""What the dashboard, alarms and scaling read of an endpoint is on its protocol: no ``getattr`` guesses."""

from __future__ import annotations

import ast
import importlib
import re
import sys
from pathlib import Path

import pytest

from cdk_triton.constructs import EndpointAttributes, ModelArtifacts, TritonEndpoint
from cdk_triton.constructs.endpoint_base import ITritonEndpoint
from tests.unit.constructs.support import EXAMPLE, new_stack

CONSTRUCTS = Path(__file__).resolve().parents[3] / "cdk_triton" / "constructs"


def _guesses(path: Path) -> list[str]:
    """``getattr(x, "name", default)`` with a literal name: a guess at a member a protocol should have."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) == 3
            and isinstance(node.args[1], ast.Constant)
        ):
            found.append(f"{path.relative_to(CONSTRUCTS)}:{node.lineno} {ast.unparse(node)}")
    return found


def test_no_getattr_guesses_in_constructs() -> None:
    found = [g for path in sorted(CONSTRUCTS.rglob("*.py")) for g in _guesses(path)]
    assert found == []


def test_an_imported_endpoint_answers_the_protocol_with_none_known() -> None:
    ep = TritonEndpoint.from_endpoint_attributes(
        new_stack(), "Imported", EndpointAttributes(endpoint_name="elsewhere", variant_name="AllTraffic")
    )
    assert isinstance(ep, ITritonEndpoint)
    assert (ep.instance_pools, ep.async_options, ep.rollback_alarm) == ((), None, None)


def test_a_defined_endpoint_answers_with_its_pools_and_async_options() -> None:
    ep = TritonEndpoint(
        new_stack(),
        "Ep",
        artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"),
        instance_pools=["ml.g5.xlarge", "ml.g6.xlarge"],
    )
    assert isinstance(ep, ITritonEndpoint)
    assert ep.instance_pools == ("ml.g5.xlarge", "ml.g6.xlarge")
    assert ep.async_options is None and ep.target_model_parameter_path is None


@pytest.mark.parametrize(
    ("old", "new", "name"),
    [
        ("cdk_triton.constructs.component", "cdk_triton.constructs.inference_component", "ComponentOptions"),
        (
            "cdk_triton.constructs.components",
            "cdk_triton.constructs.components_endpoint",
            "TritonComponentsEndpoint",
        ),
        ("cdk_triton.constructs.modes.registry", "cdk_triton.constructs.modes.table", "behaviour"),
    ],
)
def test_an_old_module_path_warns_and_gives_the_same_objects(old: str, new: str, name: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=rf"{re.escape(old)} is deprecated .* use {re.escape(new)}"):
        module = importlib.import_module(old)
    assert getattr(module, name) is getattr(importlib.import_module(new), name)
