"""The model registry contract: the group name rule (botocore's pattern) and the metadata limits."""

from __future__ import annotations

import pytest

from cdk_triton.config import registry


@pytest.mark.parametrize("name", ["a", "classifier-sme", "A1--b2", "x" * 63])
def test_accepts_the_names_sagemaker_accepts(name: str) -> None:
    assert registry.check_model_package_group_name(name) is None


@pytest.mark.parametrize("name", ["", "-a", "a-", "a_b", "a.b", "x" * 64, "a b"])
def test_refuses_the_names_sagemaker_refuses(name: str) -> None:
    err = registry.check_model_package_group_name(name, prop="--group")
    assert err is not None and err.code == "InvalidModelPackageGroupName" and err.prop == "--group"


def test_metadata_text_limits() -> None:
    assert registry.metadata_text_problem("s3://bucket/registry/ep/x.json", 256) is None
    assert registry.metadata_text_problem("", 256) == "is empty"
    assert registry.metadata_text_problem("x" * 129, 128) == "has 129 characters, more than 128"
    assert registry.metadata_text_problem("a;b", 256) is not None
    assert all(
        k.startswith(registry.METADATA_PREFIX) for k in (registry.MANIFEST_SHA256_KEY, registry.EVIDENCE_KEY)
    )
