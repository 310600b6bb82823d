"""The example app and its hardened variant pass cdk-nag AwsSolutions, HIPAA, NIST 800-53 R4/R5, PCI DSS.

One synth per app variant with every pack as a validation plugin (module-scoped): each pack reports
success, and every finding it lists as suppressed carries one of the known reasons.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest

from tests.unit.constructs.scenarios import hardened_example
from tests.unit.constructs.support import ENV, EXAMPLE, REGISTRY, ROOT, load_module

PACKS = ("AwsSolutions", "HIPAA.Security", "NIST.800.53.R4", "NIST.800.53.R5", "PCI.DSS.321")


def _plugins(app: cdk.App, *, aws_solutions: bool) -> list[Any]:
    import cdk_nag

    packs = [
        cdk_nag.HIPAASecurityChecks(app),
        cdk_nag.NIST80053R4Checks(app),
        cdk_nag.NIST80053R5Checks(app),
        cdk_nag.PCIDSS321Checks(app),
    ]
    return [cdk_nag.AwsSolutionsChecks(app), *packs] if aws_solutions else packs


def _report(out: Path) -> dict[str, dict[str, Any]]:
    """pack -> its plugin report (the plugin name is the pack name)."""
    data = json.loads((out / "validation-report.json").read_text())
    for path in sorted(out.glob("*.template.json")):
        REGISTRY.add_file(path)  # linted with the session's templates
    return {p["pluginName"]: p for p in data["pluginReports"]}


def _app_module() -> Any:
    return load_module(ROOT / "app.py", "cdk_triton_example_app_nag")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, dict[str, Any]]]:
    """variant -> pack -> plugin report; ``app.synth()`` raises ValidationFailed on any finding left."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    example_dir = tmp_path_factory.mktemp("nag-example")
    app = cdk.App(
        outdir=str(example_dir), context={"manifest": str(EXAMPLE)}, builtin_cloud_formation_validation=False
    )
    _app_module().build_app(app=app)  # adds AwsSolutions itself (context nag: true)
    cdk.Validations.of(app).add_plugins(*_plugins(app, aws_solutions=False))
    app.synth()
    out["example"] = _report(example_dir)

    hardened_dir = tmp_path_factory.mktemp("nag-hardened")
    app = cdk.App(outdir=str(hardened_dir), builtin_cloud_formation_validation=False)
    hardened_example(cdk.Stack(app, "HardenedExample", env=ENV))
    cdk.Validations.of(app).add_plugins(*_plugins(app, aws_solutions=True))
    app.synth()
    out["hardened"] = _report(hardened_dir)
    return out


def _acknowledged(report: dict[str, dict[str, Any]]) -> dict[tuple[str, str], str]:
    """(rule without its IAM5 detail, construct path) -> reason, over every pack of one variant."""
    return {
        (v["ruleName"].split("[")[0], c["constructPath"]): v["reason"]
        for r in report.values()
        for v in r["suppressedViolations"]
        for c in v["violatingConstructs"]
    }


def _nvme_kms(stack: str, *endpoints: str) -> set[tuple[str, str]]:
    rule = "SageMakerEndpointConfigurationKMSKeyConfigured"
    return {(f"{pack}-{rule}", f"{stack}/{ep}/EndpointConfig") for pack in PACKS[1:] for ep in endpoints}


@pytest.mark.parametrize("variant", ["example", "hardened"])
@pytest.mark.parametrize("pack", PACKS)
def test_pack_passes(reports: dict[str, dict[str, dict[str, Any]]], variant: str, pack: str) -> None:
    report = reports[variant][pack]
    assert report["conclusion"] == "success", [v["ruleName"] for v in report["violations"]]
    assert report["violations"] == []


@pytest.mark.parametrize("variant", ["example", "hardened"])
def test_every_acknowledgment_is_reasoned(
    reports: dict[str, dict[str, dict[str, Any]]], variant: str
) -> None:
    acks = _acknowledged(reports[variant])
    assert acks
    for (rule, path), reason in acks.items():
        assert len(reason) >= 40, (rule, path, reason)  # a sentence, not a placeholder
    for (rule, _), reason in acks.items():
        if rule.endswith("KMSKeyConfigured"):
            assert "local NVMe storage" in reason and "rejects a KmsKeyId" in reason


def _verification(stack: str, *, keyed_log: bool) -> set[tuple[str, str]]:
    """The deploy verification's own acknowledgments (each with its reason in verification.py)."""
    from cdk_triton.constructs.verification import LAMBDA_RULE_PACKS

    handler = f"{stack}/Classifier/Verification/Handler/Resource"
    out = {(f"{pack}-{rule}", handler) for rule, packs in LAMBDA_RULE_PACKS.items() for pack in packs}
    out.add(("AwsSolutions-L1", handler))
    if not keyed_log:
        log = f"{stack}/Classifier/Verification/LogGroup/Resource"
        out |= {(f"{pack}-CloudWatchLogGroupEncrypted", log) for pack in PACKS[1:]}
    return out


def test_example_acknowledges_iam_wildcards_nvme_volume_keys_and_its_log_group(
    reports: dict[str, dict[str, dict[str, Any]]],
) -> None:
    acks = _acknowledged(reports["example"])
    others = {k for k in acks if k[0] != "AwsSolutions-IAM5"}
    log_group = "CdkTritonExample/Classifier/Model/TritonMetricsLogGroup"
    assert others == _nvme_kms("CdkTritonExample", "Classifier", "Multi") | {
        (f"{pack}-CloudWatchLogGroupEncrypted", log_group) for pack in PACKS[1:]
    } | _verification("CdkTritonExample", keyed_log=False)
    assert acks[("PCI.DSS.321-CloudWatchLogGroupEncrypted", log_group)] == _app_module().LOG_GROUP_REASON


def test_hardened_variant_acknowledges_only_iam_wildcards_and_the_nvme_volume_key(
    reports: dict[str, dict[str, dict[str, Any]]],
) -> None:
    """No alarm-action, log-group or volume-key finding is left on the EBS-only endpoint: only AwsSolutions
    IAM5 findings and the KMS rule on the local-NVMe g5 (AWS refuses a volume key there)."""
    others = {k for k in _acknowledged(reports["hardened"]) if k[0] != "AwsSolutions-IAM5"}
    assert others == _nvme_kms("HardenedExample", "Classifier") | _verification(
        "HardenedExample", keyed_log=True
    )
