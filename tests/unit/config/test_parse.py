"""The parse kit shared by the declaration (collects) and the manifest (raises the first)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from cdk_triton.config.parse import (
    Errors,
    check_keys,
    has_type,
    known_keys,
    one_of,
    optional,
    positive_ints,
    problem,
    required,
    str_map,
    typed,
)
from cdk_triton.errors import TritonValidationError


@dataclass
class _Thing:
    name: str
    count: int = 0
    base_dir: str = "."


def _fail(where: str, value: Any, problem: str, allowed: str) -> ValueError:
    return ValueError(f"{where}|{value!r}|{problem}|{allowed}")


def test_true_is_not_a_number() -> None:
    assert has_type(3, int) and has_type(2.5, (int, float))
    assert not has_type(True, int) and not has_type(True, (int, float))
    assert has_type(True, bool)
    assert has_type(True, (int, float), bool_rejected_for=(int,))  # the manifest reader's rule


def test_typed_collects_missing_and_wrong_types() -> None:
    errs = Errors("m.yaml")
    assert typed({}, "name", str, "models[0]", errs, required=True) is None
    assert typed({"count": "4"}, "count", int, "models[0]", errs, default=7) == 7
    assert typed({"atol": 1}, "atol", float, "", errs) == 1.0
    assert typed({"n": None}, "n", int, "", errs, default=2) == 2
    assert [str(e) for e in errs.items] == [
        "name None is required; allowed: a string; fix: add 'name' to the declaration [MissingField]"
        " at m.yaml: models[0].name",
        "count '4' has the wrong type (str); allowed: an integer; fix: write 'count' as an integer"
        " [InvalidType] at m.yaml: models[0].count",
    ]


def test_check_keys_names_the_closest_key_in_document_order() -> None:
    errs = Errors(None)
    check_keys({"nme": 1, "count": 2, "zzz": 3, "base_dir": "."}, _Thing, "t", errs)
    assert [(e.code, e.path, e.fix) for e in errs.items] == [
        ("UnknownKey", "t.nme", "did you mean 'name'?"),
        ("UnknownKey", "t.zzz", "remove it"),
        ("UnknownKey", "t.base_dir", "remove it"),
    ]
    assert errs.items[0].allowed == "count, name"


def test_one_of_and_str_map() -> None:
    errs = Errors(None)
    assert one_of(errs, "p", "data", "zero", ("zero", "random"), "InvalidWarmup", "a kind", "use zero")
    assert not one_of(errs, "p", "data", "x", ("zero", "random"), "InvalidWarmup", "a kind", "use zero")
    assert str_map({"a": "b"}, "p.m", errs) == {"a": "b"} and str_map(None, "p.m", errs) == {}
    assert str_map({"a": 1}, "p.m", errs) == {}
    assert [(e.code, e.path, e.prop) for e in errs.items] == [
        ("InvalidWarmup", "p.data", "data"),
        ("InvalidType", "p.m", "m"),
    ]


def test_extend_prefixes_the_source() -> None:
    errs = Errors("m.yaml")
    errs.extend([problem("X", "models[1]", "p", 1, "is bad", "good", "fix it")])
    assert errs.items[0].path == "m.yaml: models[1]"
    bare = Errors(None)
    bare.extend([problem("X", "models[1]", "p", 1, "is bad", "good", "fix it")])
    assert bare.items[0].path == "models[1]"


def test_required_optional_known_keys_raise_the_first_problem() -> None:
    assert required({"a": "x"}, "a", str, "$", _fail) == "x"
    assert optional({"a": None}, "a", str, "$", _fail) is None
    with pytest.raises(ValueError, match=r"^\$\.a\|None\|is missing\|str$"):
        required({}, "a", str, "$", _fail)
    with pytest.raises(ValueError, match=r"^w\.n\|True\|has the wrong type\|int$"):
        required({"n": True}, "n", int, "w", _fail)
    with pytest.raises(ValueError, match=r"^w\.b\|'b'\|is not a field\|a$"):
        known_keys({"c": 1, "b": 2, "a": 3}, {"a"}, "w", _fail, what="a field")


def test_problem_is_a_validation_error() -> None:
    e = problem("Code", "models[0]", "prop", 3, "is bad", "good", "fix")
    assert isinstance(e, TritonValidationError) and e.path == "models[0]"


def test_positive_ints() -> None:
    errs = Errors("m.yaml")
    assert positive_ints({"sizes": [4, 8]}, "sizes", "db", errs) == [4, 8]
    assert positive_ints({}, "sizes", "db", errs) == []
    assert positive_ints({"sizes": [4, 0, True]}, "sizes", "db", errs) == []
    assert [e.code for e in errs.items] == ["InvalidType"]
    assert "sizes [4, 0, True] is not a list of positive integers" in str(errs.items[0])
    assert str(errs.items[0]).endswith("at m.yaml: db.sizes")
