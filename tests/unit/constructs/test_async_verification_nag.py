"""An asynchronous endpoint with its deploy verification, dashboard and alarms: the verification invokes
asynchronously with exactly the grants that needs, and the template passes cfn-lint and the five cdk-nag
packs (AwsSolutions, HIPAA.Security, NIST.800.53.R4/R5, PCI.DSS.321), every acknowledgment reasoned.

One synth for the module (every pack a validation plugin; ``app.synth()`` raises on any finding left).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest

from cdk_triton.config import layout
from cdk_triton.constructs import ModelArtifacts, TritonAlarms, TritonDashboard, TritonEndpoint
from cdk_triton.constructs.async_inference import AsyncInferenceOptions
from tests.acknowledgments import CONTEXT
from tests.unit.constructs.support import ENV, EXAMPLE, REGISTRY, cfn_lint
from tests.unit.constructs.test_nag_packs import PACKS, _acknowledged, _plugins

STACK = "AsyncExample"
NAME = "async-classifier"


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("async-nag")
    app = cdk.App(outdir=str(out), builtin_cloud_formation_validation=False, context=dict(CONTEXT))
    stack = cdk.Stack(app, STACK, env=ENV)
    ep = TritonEndpoint(
        stack,
        "Classifier",
        artifacts=ModelArtifacts.from_manifest(str(EXAMPLE), "classifier"),
        instance_type="ml.g5.xlarge",
        endpoint_name=NAME,
        async_inference=AsyncInferenceOptions(max_capacity=2, invocation_timeout=cdk.Duration.minutes(5)),
    )
    TritonDashboard(stack, "Dashboard", endpoints=[ep])
    TritonAlarms(stack, "Alarms", endpoint=ep, create_topic=True)
    ep.add_verification()
    cdk.Validations.of(app).add_plugins(*_plugins(app, aws_solutions=True))
    app.synth()
    path = out / f"{STACK}.template.json"
    REGISTRY.add_file(path)  # also linted with the session's templates
    return out, json.loads(path.read_text())


def _reports(out: Path) -> dict[str, dict[str, Any]]:
    data = json.loads((out / "validation-report.json").read_text())
    return {p["pluginName"]: p for p in data["pluginReports"]}


def _of_type(tpl: dict[str, Any], kind: str) -> dict[str, Any]:
    return {k: r for k, r in tpl["Resources"].items() if r["Type"] == kind}


def test_the_verification_invokes_asynchronously_with_exactly_its_grants(
    synth: tuple[Path, dict[str, Any]],
) -> None:
    _, tpl = synth
    [props] = [r["Properties"] for r in _of_type(tpl, "Custom::TritonVerification").values()]
    base = "s3://example-artifacts-123456789012/cdk-triton/"
    assert props["Async"] == "true" and props["InvocationTimeoutSeconds"] == "300"
    assert props["AsyncInputPrefix"] == base + layout.async_input_key(NAME)
    assert props["AsyncOutputPrefix"] == base + layout.async_output_key(NAME)
    assert props["AsyncFailurePrefix"] == base + layout.async_failure_key(NAME)
    [policy] = [
        p["Properties"]["PolicyDocument"]["Statement"]
        for k, p in _of_type(tpl, "AWS::IAM::ManagedPolicy").items()
        if k.startswith("ClassifierVerificationPolicy")
    ]
    by_sid = {s["Sid"]: s for s in policy}
    actions = sorted(
        a for s in policy for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
    )
    assert "sagemaker:InvokeEndpoint" not in actions  # an async endpoint refuses it
    assert by_sid["InvokeEndpointAsync"]["Action"] == "sagemaker:InvokeEndpointAsync"
    assert by_sid["PutAsyncInput"]["Action"] == "s3:PutObject"
    assert json.dumps(by_sid["PutAsyncInput"]["Resource"]).count(f"async/{NAME}/input/*") == 1
    read = json.dumps(by_sid["ReadAsyncResults"]["Resource"])
    assert f"async/{NAME}/output/*" in read and f"async/{NAME}/failure/*" in read and "input" not in read
    key = by_sid["DecryptAsyncResults"]
    assert key["Action"] == "kms:Decrypt" and key["Resource"]["Fn::GetAtt"][0].startswith(
        "ClassifierAsyncKey"
    )
    config = next(iter(_of_type(tpl, "AWS::SageMaker::EndpointConfig").values()))["Properties"]
    assert config["AsyncInferenceConfig"]["OutputConfig"]["KmsKeyId"] == key["Resource"]


@pytest.mark.parametrize("pack", PACKS)
def test_every_pack_passes_the_async_template(synth: tuple[Path, dict[str, Any]], pack: str) -> None:
    report = _reports(synth[0])[pack]
    assert report["conclusion"] == "success", [v["ruleName"] for v in report["violations"]]
    assert report["violations"] == []


def test_acknowledgments_are_the_known_ones_and_reasoned(synth: tuple[Path, dict[str, Any]]) -> None:
    acks = _acknowledged(_reports(synth[0]))
    for (rule, path), reason in acks.items():
        assert len(reason) >= 40, (rule, path, reason)
    handler = f"{STACK}/Classifier/Verification/Handler/Resource"
    others = {(rule, path) for rule, path in acks if rule != "AwsSolutions-IAM5" and path != handler}
    assert others == {
        (f"{pack}-{rule}", f"{STACK}/Classifier/{where}")
        for pack in PACKS[1:]
        for rule, where in (
            ("SageMakerEndpointConfigurationKMSKeyConfigured", "EndpointConfig"),
            ("CloudWatchLogGroupEncrypted", "Verification/LogGroup/Resource"),
        )
    }
    iam5 = {path for rule, path in acks if rule == "AwsSolutions-IAM5"}
    assert iam5 == {f"{STACK}/Classifier/Model/ExecutionPolicy", f"{STACK}/Classifier/Verification/Policy"}


def test_cfn_lint_accepts_the_async_template(synth: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    clean, output = cfn_lint({}, [synth[0] / f"{STACK}.template.json"], tmp_path)
    assert clean, output
