"""The model declaration: fields, batching, PyTorch parameters, and the checks of one model."""

from __future__ import annotations

from cdk_triton.config.declaration import BuildSpec, ModelSpec, OnnxOptions, SampleSpec
from tests.unit.config.declaration.decl import codes, document, ensemble, model, parsed


def test_reads_a_model_with_defaults() -> None:
    m, errs = parsed(ModelSpec.from_dict, model(), "models[0]")
    assert errs == [] and m.name == "tiny" and m.max_batch_size == 4
    assert m.onnx == OnnxOptions() and m.sample == SampleSpec() and not m.is_ensemble


def test_fails_name_and_format() -> None:
    m, errs = parsed(ModelSpec.from_dict, model("-bad", format="onnxx"), "models[0]")
    assert m is None
    assert [(e.code, e.path, e.fix) for e in errs] == [
        ("InvalidModelName", "models[0].name", "rename the model"),
        ("UnknownFormat", "models[0].format", "use onnx"),
    ]


def test_fails_batching() -> None:
    _, errs = parsed(ModelSpec.from_dict, model(max_batch_size=-1), "m")
    assert [e.code for e in errs] == ["InvalidMaxBatchSize"]
    _, errs = parsed(ModelSpec.from_dict, model(max_batch_size=0, dynamic_batching=True), "m")
    assert [(e.code, e.path) for e in errs] == [("InvalidMaxBatchSize", "m.dynamic_batching")]
    _, errs = parsed(ModelSpec.from_dict, model(dynamic_batching={"preferred_batch_sizes": [8]}), "m")
    assert [(e.code, e.path) for e in errs] == [
        ("PreferredBatchTooLarge", "m.dynamic_batching.preferred_batch_sizes")
    ]


def test_pytorch_parameters_are_strings_for_torchscript_only() -> None:
    params = {"INFERENCE_MODE": True, "INTER_OP_THREAD_COUNT": 2}
    m, errs = parsed(ModelSpec.from_dict, model(format="torchscript", pytorch_parameters=params), "m")
    assert errs == [] and m.pytorch_parameters == {"INFERENCE_MODE": "true", "INTER_OP_THREAD_COUNT": "2"}
    bad = {"ENABLE_NVFUSER": "true", "INFERENCE_MOD": "true"}
    _, errs = parsed(ModelSpec.from_dict, model(pytorch_parameters=bad), "m")
    # ENABLE_NVFUSER is a known name (read up to 23.11): the release rule judges it, not the parse
    assert [(e.code, e.fix) for e in errs] == [
        ("UnknownPyTorchParameter", "did you mean 'INFERENCE_MODE'?"),
        ("InvalidOption", "remove them"),
    ]


def test_checks_source_against_format() -> None:
    _, errs = parsed(ModelSpec.from_dict, model(format="python"), "m")
    assert [(e.code, e.allowed) for e in errs] == [("SourceFormatMismatch", "python")]
    _, errs = parsed(ModelSpec.from_dict, model(source=None, steps=[{"model": "a"}]), "m")
    assert [(e.code, e.path) for e in errs] == [("InvalidOption", "m.steps"), ("MissingField", "m.source")]


def test_checks_an_ensemble_has_steps_and_no_source() -> None:
    _, errs = parsed(ModelSpec.from_dict, ensemble(steps=[], source={"onnx": "a.onnx"}), "m")
    assert [(e.code, e.path) for e in errs] == [
        ("SourceFormatMismatch", "m.source"),
        ("MissingField", "m.steps"),
    ]


def test_checks_tensors_declared_unique_and_typed() -> None:
    _, errs = parsed(ModelSpec.from_dict, model(inputs=[], outputs=None), "m")
    assert [(e.code, e.path, e.fix) for e in errs] == [
        ("MissingField", "m.inputs", "declare every input with name, dtype and shape"),
        ("MissingField", "m.outputs", "declare every output with name, dtype and shape"),
    ]
    x = {"name": "x", "dtype": "STRING", "shape": [1]}
    _, errs = parsed(ModelSpec.from_dict, model(inputs=[x, x]), "m")
    assert [(e.code, e.path) for e in errs] == [
        ("UnknownDtype", "m.inputs[0].dtype"),
        ("DuplicateTensorName", "m.inputs[1].name"),
        ("UnknownDtype", "m.inputs[1].dtype"),
    ]


def test_tensorrt_needs_a_shape_range_for_dynamic_inputs_and_dynamic_batching_warns() -> None:
    dyn = [{"name": "x", "dtype": "FP32", "shape": [-1]}]
    assert codes(document([model(format="tensorrt", inputs=dyn)])) == ["MissingShapeRange"]
    ranged = [{**dyn[0], "shape_range": {"min": [1], "opt": [4], "max": [8]}}]
    spec = BuildSpec.from_dict(document([model(format="tensorrt", inputs=ranged, dynamic_batching=True)]))
    (w,) = spec.models[0].warnings()
    assert "Triton batches only requests of equal shape" in w and spec.models[0].has_dynamic_axes
    assert BuildSpec.from_dict(document([model()])).models[0].warnings() == []
