"""lambda/verify on an InferenceComponents endpoint: each check invoked with its InferenceComponentName,
a component at zero copies skipped and reported, a wrong answer failing (botocore Stubber clients)."""

from __future__ import annotations

import io
import json
import time
from typing import Any

import boto3
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber

from tests.unit.handlers.verify_module import load

V = load()
EXPECTED = {"outputs": [{"name": "Y", "datatype": "FP32", "shape": [1, 2], "data": [1.0, 2.0]}]}
SAMPLE = (b'{"inputs": []}', EXPECTED)


def _client(service: str) -> Any:
    return boto3.client(service, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")


def _spec(**over: Any) -> Any:
    props: dict[str, Any] = {
        "EndpointName": "ics",
        "Routing": "component",
        "Checks": [{"Model": "classifier", "Request": "s3://b/r.json", "Response": "s3://b/p.json"}],
        "Components": {"classifier": "app-ics-classifier"},
    }
    props.update(over)
    return V.parse_spec(props)


def _body(doc: dict[str, Any]) -> StreamingBody:
    data = json.dumps(doc).encode()
    return StreamingBody(io.BytesIO(data), len(data))


def _describe(stub: Stubber, copies: int) -> None:
    stub.add_response(
        "describe_inference_component",
        {
            "InferenceComponentName": "app-ics-classifier",
            "InferenceComponentArn": "arn:aws:sagemaker:us-east-1:123456789012:inference-component/app-ics-classifier",
            "EndpointName": "ics",
            "EndpointArn": "arn:aws:sagemaker:us-east-1:123456789012:endpoint/ics",
            "CreationTime": 0,
            "LastModifiedTime": 0,
            "RuntimeConfig": {"DesiredCopyCount": copies, "CurrentCopyCount": copies},
        },
        {"InferenceComponentName": "app-ics-classifier"},
    )


def _run(copies: int, answer: dict[str, Any] | None) -> Any:
    runtime, sagemaker = _client("sagemaker-runtime"), _client("sagemaker")
    with Stubber(runtime) as rt, Stubber(sagemaker) as sm:
        _describe(sm, copies)
        if answer is not None:
            rt.add_response(
                "invoke_endpoint",
                {"Body": _body(answer), "ContentType": "application/json"},
                {
                    "EndpointName": "ics",
                    "InferenceComponentName": "app-ics-classifier",
                    "Body": SAMPLE[0],
                    "ContentType": "application/json",
                    "Accept": "application/json",
                },
            )
        spec = _spec()
        out = V.verify_components(
            runtime,
            None,
            spec,
            {"classifier": SAMPLE},
            time.monotonic() + 5,
            lambda s: None,
            lambda m: None,
            sagemaker,
        )
        rt.assert_no_pending_responses()
    return out


def test_a_component_is_invoked_with_its_inference_component_name() -> None:
    (o,) = _run(1, EXPECTED)
    assert (o.ok, o.component, o.skipped, o.detail) == (
        True,
        "app-ics-classifier",
        False,
        "answered as recorded",
    )


def test_a_wrong_component_fails_the_verification() -> None:
    wrong = {"outputs": [{"name": "Y", "datatype": "FP32", "shape": [1, 2], "data": [1.0, 9.0]}]}
    (o,) = _run(2, wrong)
    report = V.Report("ics", [o])
    assert not report.ok and "InferenceComponent app-ics-classifier" in report.summary()
    assert "max abs difference 7" in o.detail


def test_a_component_at_zero_copies_is_skipped_and_reported_not_invoked() -> None:
    (o,) = _run(0, None)  # no invoke_endpoint response stubbed: an invocation would fail the test
    assert (o.ok, o.skipped, o.attempts) == (True, True, 0)
    report = V.Report("ics", [o])
    assert report.ok and "1 skipped" in report.summary() and "scaled in to 0 copies" in report.summary()
    assert report.to_dict()["Models"][0]["Skipped"] is True


def test_a_model_without_a_component_name_fails() -> None:
    spec = _spec(Components={"other": "x"})
    (o,) = V.verify_components(None, None, spec, {"classifier": SAMPLE}, 0.0, None, None, sagemaker=object())
    assert not o.ok and "no inference component for classifier" in o.detail


@pytest.mark.parametrize(
    ("over", "needle"),
    [
        ({"Components": {}}, "needs Components or ComponentNameParameterPath"),
        ({"Components": "not json"}, "Components: a mapping"),
        ({"Routing": "components"}, "'component'"),
    ],
)
def test_fails_a_bad_components_spec(over: dict[str, Any], needle: str) -> None:
    with pytest.raises(ValueError, match="invalid verification spec") as err:
        _spec(**over)
    assert needle in str(err.value)


def test_components_may_come_as_cloudformation_text_or_an_ssm_path() -> None:
    spec = _spec(Components=json.dumps({"classifier": "c1"}))
    assert spec.components == (("classifier", "c1"),)
    spec = _spec(Components=None, ComponentNameParameterPath="/cdk-triton/ics/components")
    assert spec.component_name_parameter_path == "/cdk-triton/ics/components"
