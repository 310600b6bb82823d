"""The endpoint declaration: mode aliases and packaging."""

from __future__ import annotations

from cdk_triton.config.declaration import EndpointSpec
from tests.unit.config.declaration.decl import endpoint, parsed


def test_mode_aliases_and_default_packaging() -> None:
    e, errs = parsed(EndpointSpec.from_dict, endpoint(mode="sme"))
    assert errs == [] and e.mode == "SingleModel" and e.packaging == "directory"
    e, errs = parsed(EndpointSpec.from_dict, endpoint(mode="mme"))
    assert errs == [] and e.is_multi_model and e.packaging == "tar.gz"


def test_fails_mode_and_packaging() -> None:
    e, errs = parsed(EndpointSpec.from_dict, endpoint(mode="both", packaging="zip"), "endpoints[0]")
    assert [(x.code, x.path) for x in errs] == [
        ("UnknownEndpointMode", "endpoints[0].mode"),
        ("InvalidPackaging", "endpoints[0].packaging"),
    ]
    _, errs = parsed(EndpointSpec.from_dict, endpoint(mode="MultiModel", packaging="directory"), "e")
    assert [x.problem for x in errs] == ["is not possible for a multi-model endpoint"]


def test_fails_missing_fields() -> None:
    e, errs = parsed(EndpointSpec.from_dict, {"name": "ep"}, "e")
    assert e is None and [x.path for x in errs] == ["e.mode", "e.instance_types", "e.models"]
