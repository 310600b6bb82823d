"""The whole declaration: release, artifact location, models, endpoints; every problem raised once."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from cdk_triton.config.declaration import BuildSpec
from cdk_triton.config.manifest import ArtifactLocation
from cdk_triton.errors import TritonValidationError
from tests.unit.config.declaration.decl import (
    codes,
    document,
    endpoint,
    ensemble,
    model,
    problems,
    tiny_model_spec,
)


def test_parses_a_declaration_one_to_one(tmp_path: Path) -> None:
    spec = BuildSpec.from_dict(document([model(), ensemble()], [endpoint(models=["ens"])]), base_dir=tmp_path)
    by_hand = tiny_model_spec()
    assert spec.models[0] == by_hand and spec.model_names == ["tiny", "ens"]
    assert spec.closure("ens") == ["ens", "tiny"] and spec.base_dir == str(tmp_path.resolve())
    assert spec.artifact_location == ArtifactLocation(bucket="bucket", prefix="prefix/")
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.models[0].name = "x"  # type: ignore[misc]


def test_fails_a_document_that_is_not_a_mapping() -> None:
    assert [(e.code, e.path) for e in problems([1], source="m.yaml")] == [("InvalidType", "m.yaml: $")]


def test_fails_release_and_location_with_the_source() -> None:
    errs = problems(document([model()], triton_version="1.0", artifact_location="s3://"), source="m.yaml")
    assert [(e.code, e.path) for e in errs] == [
        ("UnknownTritonRelease", "m.yaml: triton_version"),
        ("InvalidS3Uri", "m.yaml: artifact_location"),
    ]
    assert codes(document([model()], artifact_location=None)) == ["MissingField"]
    assert codes(document([model()], artifact_location=3)) == ["InvalidType"]
    assert codes(document([model()], kms_key_arn=3)) == ["InvalidType"]


KEY = "arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"


def test_artifact_location_override_and_kms_key() -> None:
    spec = BuildSpec.from_dict(document([model()], kms_key_arn=KEY), artifact_location="s3://other/p")
    assert spec.artifact_location == ArtifactLocation(bucket="other", prefix="p", kms_key_arn=KEY)


def test_collects_parse_problems_before_cross_reference_problems() -> None:
    errs = problems(document([model("a", inputs=[{"name": "x", "dtype": "FP33", "shape": [4]}]), model("a")]))
    assert [(e.code, e.path) for e in errs] == [
        ("UnknownDtype", "models[0].inputs[0].dtype"),
        ("DuplicateModelName", "models[1].name"),
    ]
    assert isinstance(errs[0], TritonValidationError)
