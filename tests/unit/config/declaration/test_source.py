"""Model sources: exactly one kind; a factory is module:callable with a seed."""

from __future__ import annotations

from cdk_triton.config.declaration import ModelSource
from tests.unit.config.declaration.decl import parsed


def test_reads_each_kind() -> None:
    src, errs = parsed(ModelSource.from_dict, {"factory": "pkg.mod:make", "seed": 1, "kwargs": {"w": 2}})
    assert errs == [] and src.kind == "factory" and src.path is None
    assert src.to_dict() == {"factory": "pkg.mod:make", "kwargs": {"w": 2}, "seed": 1}
    src, errs = parsed(ModelSource.from_dict, {"onnx": "m.onnx"})
    assert errs == [] and src.kind == "onnx" and src.path == "m.onnx"


def test_fails_zero_or_two_kinds() -> None:
    for d in ({}, {"onnx": "a", "python": "b"}):
        src, errs = parsed(ModelSource.from_dict, d, "models[0].source")
        assert src is None and [(e.code, e.path) for e in errs] == [("InvalidSource", "models[0].source")]


def test_fails_bad_factory_reference_then_missing_seed() -> None:
    _, errs = parsed(ModelSource.from_dict, {"factory": "mod.make"}, "s")
    assert [(e.code, e.path) for e in errs] == [
        ("InvalidFactoryReference", "s.factory"),
        ("MissingSeed", "s.seed"),
    ]


def test_fails_factory_options_without_a_factory() -> None:
    _, errs = parsed(ModelSource.from_dict, {"onnx": "m.onnx", "seed": 0}, "s")
    assert [e.problem for e in errs] == ["has factory options without a factory"]
