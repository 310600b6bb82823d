"""TritonModelPackageGroup: the group, its resource policy for the stage accounts, grants, imports; the
templates pass the five cdk-nag packs here and cfn-lint in the session's run (tests/unit/constructs/conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker

from cdk_triton.config.registry import GROUP_NAME_PATTERN
from cdk_triton.constructs import TritonModelPackageGroup
from cdk_triton.errors import TritonValidationError
from tests.unit.constructs.support import ENV, REGISTRY, new_stack, only, template

GROUP_ARN = "arn:aws:sagemaker:us-east-1:123456789012:model-package-group/resnet-sme"
VERSIONS = "arn:aws:sagemaker:us-east-1:123456789012:model-package/resnet-sme/*"


def _root(account: str) -> dict[str, Any]:
    return {"Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, f":iam::{account}:root"]]}


def _arn(resource: str) -> dict[str, Any]:
    return {
        "Fn::Join": ["", ["arn:", {"Ref": "AWS::Partition"}, f":sagemaker:us-east-1:123456789012:{resource}"]]
    }


def test_defines_the_group_and_a_policy_for_readers_and_result_writers() -> None:
    stack = new_stack()
    group = TritonModelPackageGroup(
        stack,
        "Registry",
        model_package_group_name="Resnet-SME",
        description="builds of the resnet endpoint",
        read_accounts=["222222222222", "111111111111"],
        write_accounts=["111111111111"],
    )
    resource = only(template(stack), "AWS::SageMaker::ModelPackageGroup")
    assert resource["DeletionPolicy"] == "Retain"
    props = resource["Properties"]
    assert props["ModelPackageGroupName"] == "Resnet-SME"
    assert props["ModelPackageGroupDescription"] == "builds of the resnet endpoint"
    # the ARNs keep the name's case
    group_arn, versions = _arn("model-package-group/Resnet-SME"), _arn("model-package/Resnet-SME/*")
    assert props["ModelPackageGroupPolicy"] == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "StageAccountsRead",
                "Effect": "Allow",
                "Principal": {"AWS": [_root("111111111111"), _root("222222222222")]},
                "Action": [
                    "sagemaker:DescribeModelPackage",
                    "sagemaker:DescribeModelPackageGroup",
                    "sagemaker:ListModelPackages",
                ],
                "Resource": [group_arn, versions],
            },
            {
                "Sid": "StageAccountsWriteResults",
                "Effect": "Allow",
                "Principal": {"AWS": [_root("111111111111")]},
                "Action": ["sagemaker:UpdateModelPackage"],
                "Resource": [versions],
            },
        ],
    }
    assert group.model_package_group_name == "Resnet-SME"


def test_without_stage_accounts_there_is_no_policy_and_the_default_name_is_valid() -> None:
    stack = new_stack()
    group = TritonModelPackageGroup(stack, "Registry")
    props = only(template(stack), "AWS::SageMaker::ModelPackageGroup")["Properties"]
    assert "ModelPackageGroupPolicy" not in props
    assert props["ModelPackageGroupName"] == group.model_package_group_name
    assert GROUP_NAME_PATTERN.fullmatch(group.model_package_group_name)


def _statements(stack: cdk.Stack) -> list[dict[str, Any]]:
    policies = template(stack, collect=False).find_resources("AWS::IAM::Policy")
    return [s for p in policies.values() for s in p["Properties"]["PolicyDocument"]["Statement"]]


@pytest.mark.parametrize(
    ("grant", "actions"),
    [
        ("grant_read", ["DescribeModelPackage", "DescribeModelPackageGroup", "ListModelPackages"]),
        (
            "grant_register",
            ["DescribeModelPackage", "DescribeModelPackageGroup", "ListModelPackages", "CreateModelPackage"],
        ),
        (
            "grant_write_results",
            ["DescribeModelPackage", "DescribeModelPackageGroup", "ListModelPackages", "UpdateModelPackage"],
        ),
    ],
)
def test_grants_name_the_group_and_its_versions_only(grant: str, actions: list[str]) -> None:
    stack = new_stack()
    role = iam.Role(stack, "Role", assumed_by=iam.ServicePrincipal("codebuild.amazonaws.com"))
    group = TritonModelPackageGroup(stack, "Registry", model_package_group_name="resnet-sme")
    imported = TritonModelPackageGroup.from_model_package_group_arn(stack, "Imported", GROUP_ARN)
    getattr(group, grant)(role)
    getattr(imported, grant)(role)
    for statement in _statements(stack):
        assert statement["Action"] == [f"sagemaker:{a}" for a in actions]
        assert statement["Resource"] in (
            [_arn("model-package-group/resnet-sme"), _arn("model-package/resnet-sme/*")],
            [GROUP_ARN, VERSIONS],
        )


def test_an_imported_group_by_name_grants_on_its_arns() -> None:
    stack = new_stack()
    imported = TritonModelPackageGroup.from_model_package_group_name(stack, "Imported", "resnet-sme")
    assert imported.model_package_group_name == "resnet-sme"
    assert stack.resolve(imported.model_package_group_arn) == _arn("model-package-group/resnet-sme")


def test_fails_to_import_a_bad_name() -> None:
    stack = new_stack()
    with pytest.raises(TritonValidationError) as info:
        TritonModelPackageGroup.from_model_package_group_name(stack, "Imported", "resnet_sme")
    assert info.value.code == "InvalidModelPackageGroupName" and info.value.path == "TestStack/Imported"


def test_fails_with_every_problem_at_once() -> None:
    stack = new_stack()
    with pytest.raises(TritonValidationError) as info:
        TritonModelPackageGroup(
            stack, "Registry", model_package_group_name="-x", read_accounts=["1"], write_accounts=["abc"]
        )
    assert getattr(info.value, "codes", None) == [
        "InvalidModelPackageGroupName",
        "InvalidAccountId",
        "InvalidAccountId",
    ]
    assert not [c for c in stack.node.find_all() if isinstance(c, sagemaker.CfnModelPackageGroup)]


def test_the_template_passes_cfn_lint_and_the_five_nag_packs(tmp_path: Path) -> None:
    import cdk_nag

    app = cdk.App(outdir=str(tmp_path), builtin_cloud_formation_validation=False)
    stack = cdk.Stack(app, "Registry", env=ENV)
    TritonModelPackageGroup(
        stack,
        "Group",
        model_package_group_name="resnet-sme",
        read_accounts=["111111111111"],
        write_accounts=["222222222222"],
    )
    TritonModelPackageGroup(stack, "Plain")
    packs = [
        cdk_nag.AwsSolutionsChecks(app),
        cdk_nag.HIPAASecurityChecks(app),
        cdk_nag.NIST80053R4Checks(app),
        cdk_nag.NIST80053R5Checks(app),
        cdk_nag.PCIDSS321Checks(app),
    ]
    cdk.Validations.of(app).add_plugins(*packs)
    app.synth()  # raises on any finding
    report = tmp_path / "validation-report.json"
    if report.exists():
        data = json.loads(report.read_text())
        assert [v for p in data["pluginReports"] for v in p["violations"]] == []
    REGISTRY.add_file(tmp_path / "Registry.template.json")  # cfn-lint: the session's run over every template
