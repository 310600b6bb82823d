"""Synth against NVIDIA's advisories of the image's release (``config.advisories``): whatever chose it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_ecr as ecr
from aws_cdk import aws_s3 as s3
from aws_cdk.assertions import Annotations, Match

from cdk_triton.config import default_release
from cdk_triton.config.tables import DEFAULT_TRITON_VERSION
from cdk_triton.constructs import ModelArtifacts, TritonImage, TritonModel
from cdk_triton.errors import TritonValidationError
from tests.acknowledgments import CRITICAL
from tests.unit.constructs.support import ENV, EXAMPLE, only, template

REASON = "accepted for this test: the endpoint is private and short-lived"


def _bare_stack(**context: Any) -> cdk.Stack:
    """A stack without the suite's acknowledgment: the check as a user meets it."""
    return cdk.Stack(cdk.App(builtin_cloud_formation_validation=False, context=context), "Bare", env=ENV)


#: The context that refuses the library's acknowledgment of the default release (config.default_release).
STRICT = {default_release.CONTEXT_KEY: False}


def _model(stack: cdk.Stack, **props: Any) -> TritonModel:
    bucket = s3.Bucket.from_bucket_name(stack, "B", "models-123456789012")
    return TritonModel(
        stack, "M", artifacts=ModelArtifacts.from_bucket(bucket, "repo/v1/", default_model="m"), **props
    )


@pytest.mark.parametrize(
    "image",
    [
        None,  # the default release
        lambda stack: TritonImage.for_version("24.09"),
        lambda stack: TritonImage.from_ecr_repository(
            ecr.Repository.from_repository_name(stack, "R", "mine"), "v1", triton_version="24.09"
        ),
    ],
    ids=["default", "for_version", "custom_image_with_release"],
)
def test_fails_synth_of_release_with_critical_advisory_when_the_library_acknowledgment_is_refused(
    image: Any,
) -> None:
    stack = _bare_stack(**STRICT)
    props = {} if image is None else {"image": image(stack)}
    with pytest.raises(TritonValidationError, match=r"\[CriticalAdvisory\] at Bare/M") as info:
        _model(stack, **props)
    text = str(info.value)
    assert "CVE-2025-23310" in text and "fixed in 25.07; on SageMaker from 25.09" in text
    assert "Triton 26.05, the first SageMaker Triton image in us-east-1 with every fix" in text
    assert "acknowledged_advisories=" in text


@pytest.mark.parametrize(
    "image",
    [None, lambda stack: TritonImage.for_version(DEFAULT_TRITON_VERSION)],
    ids=["default", "explicit"],
)
def test_default_release_passes_on_the_library_acknowledgment_recorded_with_its_author(image: Any) -> None:
    stack = _bare_stack()
    _model(stack, **({} if image is None else {"image": image(stack)}))
    rows = only(template(stack), "AWS::SageMaker::Model")["Metadata"]["cdk_triton"]["acknowledged_advisories"]
    assert sorted(r["id"] for r in rows) == sorted(default_release.acknowledged_cves())
    assert all(r["by"] == default_release.BY and r["reason"] == default_release.reason() for r in rows)
    Annotations.from_stack(stack).has_warning(
        "/Bare/M",
        Match.string_like_regexp(
            r"default release \(held back on 2026-11-27\): 5 critical advisories are acknowledged by the library, "
            r"not by you \(CVE list: `cdk-triton advisories --release 24.09`\).*LibraryAcknowledgedAdvisories"
        ),
    )


def test_a_user_acknowledgment_wins_over_the_library_one() -> None:
    stack = _bare_stack()
    _model(stack, acknowledged_advisories={"CVE-2025-23310": REASON})
    rows = only(template(stack), "AWS::SageMaker::Model")["Metadata"]["cdk_triton"]["acknowledged_advisories"]
    mine = next(r for r in rows if r["id"] == "CVE-2025-23310")
    assert mine["reason"] == REASON and "by" not in mine
    assert (
        sum(1 for r in rows if r.get("by") == default_release.BY)
        == len(default_release.acknowledged_cves()) - 1
    )


def test_the_library_acknowledges_the_default_release_only() -> None:
    with pytest.raises(TritonValidationError, match=r"\[CriticalAdvisory\]"):
        _model(_bare_stack(), image=TritonImage.for_version("24.05"))


def test_fails_a_library_acknowledgments_context_that_is_not_a_boolean() -> None:
    with pytest.raises(TritonValidationError, match=r"cdk-triton:library_acknowledgments.*\[InvalidType\]"):
        _model(_bare_stack(**{default_release.CONTEXT_KEY: "no"}))


def test_acknowledged_release_records_the_reasons_in_the_template_metadata() -> None:
    stack = _bare_stack()
    _model(
        stack,
        image=TritonImage.for_version("24.09"),
        acknowledged_advisories={**CRITICAL, "CVE-2025-23310": REASON},
    )
    model = only(template(stack), "AWS::SageMaker::Model")
    rows = model["Metadata"]["cdk_triton"]["acknowledged_advisories"]
    assert {r["id"] for r in rows} == set(CRITICAL)
    assert next(r for r in rows if r["id"] == "CVE-2025-23310") == {
        "id": "CVE-2025-23310",
        "reason": REASON,
        "cvss": 9.8,
        "triton_version": "24.09",
        "fixed_in": "25.07",
    }
    Annotations.from_stack(stack).has_warning(
        "/Bare/M", Match.string_like_regexp(r"24.09 has 21 high-severity.*--release 24.09.*HighAdvisory")
    )


def test_manifest_acknowledgments_reach_the_template() -> None:
    stack = _bare_stack()
    TritonModel(stack, "M", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"))
    rows = only(template(stack), "AWS::SageMaker::Model")["Metadata"]["cdk_triton"]["acknowledged_advisories"]
    assert {r["id"] for r in rows} == set(CRITICAL) and all("cdk-triton example" in r["reason"] for r in rows)


def test_a_manifest_that_refuses_the_library_acknowledgment_fails_synth_of_the_default_release(
    tmp_path: Path,
) -> None:
    data = json.loads(Path(EXAMPLE).read_text())
    data.pop("acknowledged_advisories", None)
    data[default_release.KEY] = False
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps(data))
    with pytest.raises(TritonValidationError, match=r"\[CriticalAdvisory\]"):
        TritonModel(_bare_stack(), "M", artifacts=ModelArtifacts.from_manifest(str(manifest), "classifier"))


def test_release_without_critical_advisory_warns_of_the_high_one() -> None:
    stack = _bare_stack()
    _model(stack, image=TritonImage.for_version("26.05"))
    tpl = template(stack)
    assert (
        "Metadata" not in only(tpl, "AWS::SageMaker::Model")
        or "cdk_triton" not in only(tpl, "AWS::SageMaker::Model")["Metadata"]
    )
    Annotations.from_stack(stack).has_warning(
        "/Bare/M",
        Match.string_like_regexp(
            r"26.05 has 1 high-severity.*no SageMaker image fixes all yet.*HighAdvisory"
        ),
    )


def test_custom_image_without_release_is_not_checked() -> None:
    stack = _bare_stack()
    _model(
        stack, image=TritonImage.from_ecr_repository(ecr.Repository.from_repository_name(stack, "R", "mine"))
    )


@pytest.mark.parametrize(
    ("acks", "code"),
    [({"CVE-2025-2331": "typo"}, "UnknownAdvisory"), ({"CVE-2025-23310": " "}, "AdvisoryReasonMissing")],
)
def test_fails_malformed_acknowledgment(acks: dict[str, str], code: str) -> None:
    stack = _bare_stack()
    with pytest.raises(TritonValidationError, match=rf"\[{code}\]"):
        _model(stack, image=TritonImage.for_version("26.05"), acknowledged_advisories=acks)
