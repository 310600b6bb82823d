"""One rule set for a declaration (issue 30): every declaration-level rule synth applies to an
InferenceComponents endpoint (``config.declaration.component_rules.SYNTH_RULES``) is raised by the build
first, while it reads ``models.yaml``, before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdk_triton.builder import run_build
from cdk_triton.config.declaration.component_rules import SYNTH_RULES
from cdk_triton.errors import TritonValidationError
from tests.unit.builder.helpers import python_model, write_decl

MODELS = python_model() + python_model("pre_2")


def _ic(body: str, *, mode: str = "components", models: str = "[pre, pre_2]", name: str = "ics") -> str:
    return f"""
  - name: {name}
    mode: {mode}
    instance_types: [ml.g5.xlarge]
    models: {models}
{body}"""


#: code -> an endpoint of models.yaml that breaks that rule alone (ml.g5.xlarge: 1 GPU, 4 vCPUs, 16 GiB)
CASES: dict[str, str] = {
    "InvalidCopyCount": _ic("    components:\n      pre: {copies: 3, max_copies: 2}"),
    "InvalidComputeRequirement": _ic("    components:\n      pre: {memory_mb: 64}"),
    "InvalidStartupTimeout": _ic("    components:\n      pre: {startup_timeout_s: 5}"),
    # min_instances 0 while pre_2 keeps a copy (the first case)
    "InvalidInstanceScaling": _ic("    min_instances: 0\n    components:\n      pre: {min_copies: 0}"),
    # two copies of one GPU each on 1-GPU instances: 3 instances, max_instances 1 (the second case)
    "CopiesExceedInstances": _ic("    max_instances: 1\n    components:\n      pre: {copies: 2}"),
    "ComponentDoesNotFit": _ic("    components:\n      pre: {accelerators: 2}"),
    "ComponentNameCollision": _ic("", models="[pre_2, pre.2]"),
    # a stateful model: the same reading of models.yaml in tests/unit/config/test_components.py
    # (test_fails_a_stateful_model_in_a_component_that_may_run_several_copies)
    "SequenceBatchingInstances": "",
    "NotAComponentsEndpoint": _ic("    min_instances: 1", mode="MultiModel"),
    "UnknownComponentModel": _ic("    components:\n      pree: {copies: 1}"),
}


def test_every_synth_rule_has_a_case() -> None:
    assert set(CASES) == set(SYNTH_RULES)


@pytest.mark.parametrize("code", sorted(c for c, body in CASES.items() if body))
def test_the_build_raises_each_synth_rule_before_writing(code: str, tmp_path: Path) -> None:
    models = MODELS + (python_model("pre.2") if "pre.2" in CASES[code] else "")
    decl = write_decl(tmp_path / "src", models, endpoints=CASES[code])
    with pytest.raises(TritonValidationError) as err:
        run_build(decl, out_dir=tmp_path / "out", progress=False)
    assert code in {err.value.code, *(e.code for e in getattr(err.value, "errors", []) or [])}, str(err.value)
    assert "endpoints[0]" in str(err.value)  # the YAML location
    assert not (tmp_path / "out").exists()  # raised before anything is written


def test_what_synth_accepts_the_build_accepts(tmp_path: Path) -> None:
    """The same endpoint within the bounds builds (the build's memory floor never refuses more than synth)."""
    ok = _ic("    max_instances: 3\n    components:\n      pre: {copies: 2}")
    decl = write_decl(tmp_path / "src", MODELS, endpoints=ok)
    run_build(decl, out_dir=tmp_path / "out", progress=False)
