"""The pure artifact checks: TargetModel maps, model names, and trust in a manifest after reading."""

from __future__ import annotations

import dataclasses

import aws_cdk as cdk
import pytest

from cdk_triton.config.manifest import read_manifest
from cdk_triton.constructs import ModelArtifacts, TritonEndpoint
from cdk_triton.constructs.checks.artifacts import (
    TARGET_MODEL_MAX,
    check_manifest_entry,
    check_model_names,
    check_target_models,
)
from cdk_triton.errors import TritonValidationError, TritonValidationErrors
from tests.unit.constructs.support import EXAMPLE, TENSORRT, big_mme_manifest, manifest_with, new_stack


@pytest.mark.parametrize(("path", "key"), [(EXAMPLE, "classifier"), (EXAMPLE, "multi"), (TENSORRT, "trt")])
def test_the_fixture_manifests_are_trusted(path: object, key: str) -> None:
    assert check_manifest_entry(read_manifest(str(path)), key) == []


def test_a_placeholder_bucket_of_an_offline_example_is_not_refused() -> None:
    """build/models.yaml names s3://cdk-triton-example-artifacts-ACCOUNT/: an S3 URI, not a deployable bucket."""

    def placeholder(d: dict) -> None:
        for t in d["endpoints"]["multi"]["target_models"].values():
            t["s3_uri"] = t["s3_uri"].replace("example-artifacts-123456789012", "example-artifacts-ACCOUNT")
        mme = d["endpoints"]["multi"]
        mme["s3_prefix"] = mme["s3_prefix"].replace(
            "example-artifacts-123456789012", "example-artifacts-ACCOUNT"
        )

    assert check_manifest_entry(manifest_with(placeholder), "multi") == []


def test_a_1000_model_manifest_is_trusted() -> None:
    assert check_manifest_entry(big_mme_manifest(1000), "multi") == []


def test_target_model_length_boundary_and_tokens() -> None:
    ok = "m" * (TARGET_MODEL_MAX - len("-0a1b2c3d4e5f.tar.gz")) + "-0a1b2c3d4e5f.tar.gz"
    assert len(ok) == TARGET_MODEL_MAX
    assert check_target_models({"m": ok}, multi_model=True) == []
    [err] = check_target_models({"m": "x" + ok}, multi_model=True)
    assert err.code == "InvalidTargetModel" and "1025 characters" in str(err.value)
    token = cdk.Token.as_string(cdk.Aws.ACCOUNT_ID)
    assert check_target_models({"m": token}, multi_model=True) == []
    assert check_target_models(None, multi_model=True) == []  # unknown map: nothing to check
    assert check_target_models({}, multi_model=False) == []  # SME: no map


@pytest.mark.parametrize("value", ["", " a.tar.gz", "/a.tar.gz", "a.zip", "a\n.tar.gz"])
def test_target_models_sagemaker_refuses(value: str) -> None:
    [err] = check_target_models({"m": value}, multi_model=True)
    assert err.code == "InvalidTargetModel"


def test_model_names() -> None:
    assert check_model_names("ensemble_v1.2", ["a-b", "C"]) == []
    assert [e.prop for e in check_model_names("", ["ok", ".hidden", "a/b"])] == [
        "default_model",
        "models",
        "models",
    ]


def test_the_three_deploy_failures_of_the_issue_are_refused_at_synth() -> None:
    """Case-only TargetModel names, an MME with zero models, a TargetModel over SageMaker's limit."""
    from aws_cdk import aws_s3 as s3

    for targets, code in (
        ({"a": "resnet-0a1b2c3d4e5f.tar.gz", "b": "RESNET-0a1b2c3d4e5f.tar.gz"}, "TargetModelCaseCollision"),
        ({}, "MmeWithoutModels"),
        ({"a": "a" * 1100 + ".tar.gz"}, "InvalidTargetModel"),
    ):
        stack = new_stack()
        bucket = s3.Bucket.from_bucket_name(stack, "B", "models-123456789012")
        with pytest.raises(TritonValidationError) as info:
            TritonEndpoint(
                stack,
                "Ep",
                artifacts=ModelArtifacts.from_bucket(bucket, "mme/", multi_model=True, target_models=targets),
                instance_type="ml.g5.xlarge",
            )
        assert info.value.code == code
        ep = stack.node.find_child("Ep")
        assert ep.node.try_find_child("Resource") is None and ep.node.try_find_child("EndpointConfig") is None


def test_an_edited_manifest_is_refused_with_every_broken_entry_named() -> None:
    def edit(d: dict) -> None:
        mme = d["endpoints"]["multi"]
        mme["target_models"]["resnet_ts"]["sha256"] = "f" * 64  # the name still says ca978112ca1b
        mme["target_models"]["classifier"]["models"].append("ghost")
        mme["target_models"]["classifier"]["s3_uri"] = "https://example.com/x.tar.gz"

    stack = new_stack()
    with pytest.raises(TritonValidationErrors) as info:
        TritonEndpoint(
            stack,
            "Ep",
            artifacts=ModelArtifacts.from_manifest(manifest_with(edit), "multi"),
            instance_type="ml.g5.xlarge",
        )
    found = {(e.code, e.prop) for e in info.value.errors}
    assert found == {
        ("ManifestHashMismatch", "manifest endpoints.multi.target_models.resnet_ts.target_model"),
        ("ManifestBrokenReference", "manifest endpoints.multi.target_models.classifier.models"),
        ("ManifestUriNotS3", "manifest endpoints.multi.target_models.classifier.s3_uri"),
    }
    assert all(e.path == "TestStack/Ep/Model" for e in info.value.errors)
    assert stack.node.find_child("Ep").node.find_child("Model").node.try_find_child("Resource") is None


def test_a_manifest_object_built_in_code_is_checked_too() -> None:
    m = manifest_with()
    entry = dataclasses.replace(m.endpoints["classifier"], default_model="ghost")
    broken = dataclasses.replace(m, endpoints={**m.endpoints, "classifier": entry})
    codes = [e.code for e in check_manifest_entry(broken, "classifier")]
    assert codes == ["ManifestBrokenReference", "ManifestBrokenReference"]  # not in models, not in manifest
