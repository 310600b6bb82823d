"""Business logic scripting: a python model calling another model through ``pb_utils.InferenceRequest``
is packaged with its callee, its calls are checked against its ``calls`` and the callee's tensors, and its
sample and parity run through the callee (the eager reference, then the built artifact)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cdk_triton.errors import BuildError, TritonValidationError
from tests.unit.builder.helpers import write_decl

CALLEE_PY = """\
import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return [
            pb_utils.InferenceResponse(
                [pb_utils.Tensor("y", (pb_utils.get_input_tensor_by_name(r, "x").as_numpy() * 2).astype(np.float32))]
            )
            for r in requests
        ]
"""

CALLER_PY = """\
import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        # the callee is loaded at start (the manifest's load_models: one --load-model per callee)
        out = []
        for r in requests:
            x = pb_utils.get_input_tensor_by_name(r, "x").as_numpy()
            call = pb_utils.InferenceRequest(
                model_name="{callee}", requested_output_names=["{output}"], inputs=[pb_utils.Tensor("{input}", x)]
            )
            resp = call.exec()
            if resp.has_error():
                raise pb_utils.TritonModelException(resp.error().message())
            y = pb_utils.get_output_tensor_by_name(resp, "{output}").as_numpy()
            out.append(pb_utils.InferenceResponse([pb_utils.Tensor("z", (y + 1).astype(np.float32))]))
        return out
"""

MODELS = """
  - name: double
    format: python
    source: {{python: callee}}
    inputs: [{{name: x, dtype: FP32, shape: [4]}}]
    outputs: [{{name: y, dtype: FP32, shape: [4]}}]
    max_batch_size: 4
{callee_extra}  - name: pipe
    format: python
    source: {{python: caller}}
    calls: {calls}
    inputs: [{{name: x, dtype: FP32, shape: [4]}}]
    outputs: [{{name: z, dtype: FP32, shape: [4]}}]
    max_batch_size: 4
{end_extra}"""

ENDPOINTS = """
  - name: {name}
    mode: {mode}
    instance_types: [ml.c5.xlarge]
    models: [pipe]
"""


def decl(
    tmp: Path,
    *,
    calls: str = "[double]",
    mode: str = "SingleModel",
    extra: str = "",
    at_end: bool = False,
    **code: str,
) -> Path:
    """The callee ``double`` (y = 2x) and the caller ``pipe`` (z = double(x) + 1) on one endpoint; ``extra``
    YAML lines go into the callee's entry (or after the caller, ``at_end``)."""
    for folder, text in (("callee", CALLEE_PY), ("caller", CALLER_PY)):
        (tmp / folder).mkdir(parents=True, exist_ok=True)
        (tmp / folder / "model.py").write_text(
            text.format(**{"callee": "double", "input": "x", "output": "y", **code})
        )
    models = MODELS.format(
        calls=calls, callee_extra="" if at_end else extra, end_extra=extra if at_end else ""
    )
    return write_decl(tmp, models, endpoints=ENDPOINTS.format(name="bls", mode=mode))


def _build(path: Path, out: Path) -> None:
    from cdk_triton.builder.steps import run_build

    run_build(path, out_dir=out, progress=False)


def test_caller_is_packaged_with_its_callee_and_checked_through_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _build(decl(tmp_path), out)
    repo = out / "sme" / "bls" / "repository"
    assert sorted(p.name for p in repo.iterdir() if p.is_dir()) == ["double", "pipe"]
    # `serve`'s --load-model=pipe does not load what pipe calls: the manifest names it for the container
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["endpoints"]["bls"]["load_models"] == ["double"]
    record = json.loads(next((out / "cache" / "models").glob("pipe-*.json")).read_text())
    sent = record["sample"]["request"]["inputs"][0]["data"]
    got = record["sample"]["response"]["outputs"][0]["data"]
    assert got == pytest.approx([2 * v + 1 for v in sent])  # through the callee's reference
    assert record["parity_max_abs_diff"] == 0.0  # and again through its built artifact


@pytest.mark.parametrize(
    ("code", "error"),
    [
        ({"callee": "other"}, "BlsUndeclaredCall"),
        ({"input": "X"}, "BlsTensorMismatch"),
        ({"output": "Y"}, "BlsTensorMismatch"),
    ],
)
def test_fails_when_a_call_disagrees_with_the_declaration(
    tmp_path: Path, code: dict[str, str], error: str
) -> None:
    with pytest.raises(BuildError) as e:
        _build(decl(tmp_path, **code), tmp_path / "out")
    assert e.value.code == error and "model.py:" in str(e.value)
    assert not list((tmp_path / "out" / "cache" / "models").glob("pipe-*"))


@pytest.mark.parametrize("mode", ["MultiModel", "InferenceComponents"])
def test_fails_on_endpoints_that_load_each_model_on_its_own(tmp_path: Path, mode: str) -> None:
    from cdk_triton.builder.declarations import load_declaration

    with pytest.raises(TritonValidationError) as e:
        load_declaration(decl(tmp_path, mode=mode))
    text = str(e.value)
    assert "[BusinessLogicOnPerModelArchives] at" in text and "endpoints[0].models[0]" in text
    assert "https://docs.aws.amazon.com/sagemaker/" in text and "read 2026-11-27" in text


@pytest.mark.parametrize(
    ("calls", "code", "where"),
    [
        ("[dubble]", "UnknownModelReference", "models[1].calls[0]"),
        ("[pipe]", "CallCycle", "models[1].calls[0]"),
    ],
)
def test_declaration_refuses_bad_calls(tmp_path: Path, calls: str, code: str, where: str) -> None:
    from cdk_triton.builder.declarations import load_declaration

    with pytest.raises(TritonValidationError) as e:
        load_declaration(decl(tmp_path, calls=calls))
    assert f"[{code}] at" in str(e.value) and where in str(e.value)


def test_declaration_refuses_a_cycle_of_calls(tmp_path: Path) -> None:
    from cdk_triton.builder.declarations import load_declaration

    with pytest.raises(TritonValidationError) as e:
        load_declaration(decl(tmp_path, extra="    calls: [pipe]\n"))
    assert "[CallCycle]" in str(e.value) and "double -> pipe -> double" in str(e.value)


def test_calls_only_on_python_models(tmp_path: Path) -> None:
    from cdk_triton.builder.declarations import load_declaration

    ensemble = """\
  - name: ens
    format: ensemble
    calls: [double]
    inputs: [{name: x, dtype: FP32, shape: [4]}]
    outputs: [{name: y, dtype: FP32, shape: [4]}]
    max_batch_size: 4
    steps: [{model: double, input_map: {x: x}, output_map: {y: y}}]
"""
    with pytest.raises(TritonValidationError) as e:
        load_declaration(decl(tmp_path, extra=ensemble, at_end=True))
    assert "[InvalidOption]" in str(e.value) and "models[2].calls" in str(e.value)
