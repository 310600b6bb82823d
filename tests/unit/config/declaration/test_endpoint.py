"""The endpoint declaration: mode aliases and packaging."""

from __future__ import annotations

from cdk_triton.config.declaration import EndpointSpec
from tests.unit.config.declaration.decl import endpoint, parsed


def test_mode_aliases_and_default_packaging() -> None:
    e, errs = parsed(EndpointSpec.from_dict, endpoint(mode="sme"))
    assert errs == [] and e.mode == "SingleModel" and e.packaging == "directory"
    e, errs = parsed(EndpointSpec.from_dict, endpoint(mode="mme"))
    assert errs == [] and e.hosting_mode.loads_on_demand and e.packaging == "tar.gz"


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


def test_inference_ami_version_is_read_and_checked_against_release_and_families() -> None:
    from cdk_triton.config.declaration import BuildSpec
    from tests.unit.config.declaration.decl import document, model, problems

    gpu2 = "al2-ami-sagemaker-inference-gpu-2"
    spec = BuildSpec.from_dict(document([model()], [endpoint(inference_ami_version=gpu2)]))
    assert spec.endpoints[0].inference_ami_version == gpu2
    bad = document(
        [model()], [endpoint(instance_types=["ml.g5.xlarge", "ml.g6e.xlarge"], inference_ami_version="x")]
    )
    assert [(e.code, e.path) for e in problems(bad)] == [
        ("UnknownInferenceAmiVersion", "endpoints[0].inference_ami_version")
    ]
    wrong_family = document(
        [model()], [endpoint(instance_types=["ml.g6e.xlarge"], inference_ami_version=gpu2)]
    )
    assert [e.code for e in problems(wrong_family)] == ["InferenceAmiNotForInstance"]
