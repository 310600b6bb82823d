"""The construct side of the hosting-mode axis: every row of ``config.modes`` has its module in
``constructs/modes`` and its registered behaviour, no behaviour or module names an unknown row, scaling
reads the rows' dimensions, and the guardrails check asks the row."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from cdk_triton.config import modes
from cdk_triton.constructs import modes as mode_constructs
from cdk_triton.constructs import scaling
from cdk_triton.constructs.deployment import DeploymentGuardrails

ROOT = Path(__file__).resolve().parents[3]
CONFIG_DIR = ROOT / "cdk_triton" / "config" / "modes"
CONSTRUCTS_DIR = ROOT / "cdk_triton" / "constructs" / "modes"
NOT_A_MODE = {
    "__init__",
    "__main__",
    "registry",
    "table",
}  # the mode tables (config/modes/table.py, constructs/modes/table.py) and the old constructs path


def _modules(folder: Path) -> set[str]:
    return {p.stem for p in folder.glob("*.py")} - NOT_A_MODE


def _toy(**kw: object) -> modes.HostingMode:
    return replace(modes.MULTI_MODEL, name="ToyMode", abbreviation="TOY", aliases=("toy",), **kw)


def test_every_row_has_its_construct_module_and_behaviour() -> None:
    assert _modules(CONSTRUCTS_DIR) == _modules(CONFIG_DIR)
    assert list(mode_constructs.BEHAVIOURS) == list(modes.names())
    for name in modes.names():
        b = mode_constructs.behaviour(modes.get(name))
        assert b.name == name
        assert type(b).__module__ == f"cdk_triton.constructs.modes.{type(b).__module__.rsplit('.', 1)[1]}"


def test_a_row_without_a_construct_module_fails() -> None:
    with modes.registered(_toy()) as toy:
        assert list(mode_constructs.BEHAVIOURS) != list(modes.names())
        with pytest.raises(KeyError, match="no construct behaviour"):
            mode_constructs.behaviour(toy)


def test_a_construct_module_for_an_unknown_row_fails() -> None:
    class Orphan(mode_constructs.Common):
        row = _toy()

    with pytest.raises(ValueError, match="names no hosting mode"):
        mode_constructs.register(Orphan())
    assert "ToyMode" not in mode_constructs.BEHAVIOURS
    with pytest.raises(ValueError, match="already has"):
        mode_constructs.register(mode_constructs.MULTI_MODEL)


def test_a_new_mode_is_its_row_plus_its_behaviour() -> None:
    with modes.registered(_toy()) as toy:

        class Toy(mode_constructs.Common):
            row = toy

        mode_constructs.register(Toy())
        try:
            assert isinstance(mode_constructs.behaviour(toy), Toy)
        finally:
            mode_constructs.unregister("ToyMode")


def test_an_endpoint_of_unknown_mode_gets_the_common_behaviour() -> None:
    assert mode_constructs.of_endpoint(None, {}) is mode_constructs.UNKNOWN
    components = mode_constructs.of_endpoint(None, {"m": "ic-m"})
    assert components is mode_constructs.behaviour(modes.only(components=True))


def test_scaling_reads_the_rows_dimensions() -> None:
    assert scaling.variant_dimension() == modes.SINGLE_MODEL.scaling_dimension
    assert modes.INFERENCE_COMPONENTS.scaling_dimension == scaling.COPY_COUNT_DIMENSION
    with (
        modes.registered(_toy(scaling_dimension="sagemaker:variant:Toy")),
        pytest.raises(LookupError, match="not one dimension"),
    ):
        scaling.variant_dimension()


def test_the_guardrails_check_asks_the_row() -> None:
    rolling = DeploymentGuardrails.rolling(percent=50)
    for name in modes.names():
        assert mode_constructs.behaviour(modes.get(name)).guardrails_problems(rolling) == []
    refusal = modes.Refusal(code="ModeUnsupported", reason="takes no deployment guardrails")
    with modes.registered(_toy(guardrails=refusal)) as toy:

        class Toy(mode_constructs.Common):
            row = toy

        [problem] = Toy().guardrails_problems(rolling)
        assert problem.code == "ModeUnsupported" and problem.prop == "deployment"
        assert Toy().guardrails_problems(None) == []
