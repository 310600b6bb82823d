"""The model package group of an endpoint: the SageMaker Model Registry's versions of its builds.

``cdk-triton register`` adds a version (a model package) per build; a reviewer approves it there. The
group's resource policy lets the stage accounts read the versions (``DescribeModelPackageGroup``,
``DescribeModelPackage``, ``ListModelPackages``, the actions and resource shape of SageMaker's
"Cross-account discoverability" page, read 2026-11-26) and, for the accounts that write verification
results back, ``UpdateModelPackage`` on the versions. The ARNs keep the name's case
(``model-package-group/<name>``, ``model-package/<name>/<version>``: IAM denied a lower-cased
``model-package/<name>/*`` for a group with capitals, aws-samples/ml-edge-getting-started issue 18).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import aws_cdk as cdk
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct

from cdk_triton.config.arns import account_id_problems
from cdk_triton.config.registry import check_model_package_group_name
from cdk_triton.constructs._tokens import is_token
from cdk_triton.constructs.errors import located
from cdk_triton.errors import TritonValidationError, raise_all

#: What a stage account may do with the versions it reads.
READ_ACTIONS = (
    "sagemaker:DescribeModelPackage",
    "sagemaker:DescribeModelPackageGroup",
    "sagemaker:ListModelPackages",
)
#: What an account that writes verification results back may do (status, metadata).
WRITE_ACTIONS = ("sagemaker:UpdateModelPackage",)
#: What the build step needs to register a build (``cdk-triton register``).
REGISTER_ACTIONS = ("sagemaker:CreateModelPackage",)


class ITritonModelPackageGroup(Protocol):
    """A model package group, defined here (``TritonModelPackageGroup``) or imported by name or ARN."""

    @property
    def model_package_group_name(self) -> str: ...

    @property
    def model_package_group_arn(self) -> str: ...

    @property
    def model_package_arn_pattern(self) -> str: ...

    def grant(self, grantee: iam.IGrantable, *actions: str) -> iam.Grant: ...

    def grant_read(self, grantee: iam.IGrantable) -> iam.Grant: ...

    def grant_register(self, grantee: iam.IGrantable) -> iam.Grant: ...

    def grant_write_results(self, grantee: iam.IGrantable) -> iam.Grant: ...


class _ModelPackageGroupBase(Construct):
    """Grants on a group by name; subclasses set ``model_package_group_name``."""

    model_package_group_name: str

    @property
    def model_package_group_arn(self) -> str:
        """The group's ARN."""
        return cdk.Stack.of(self).format_arn(
            service="sagemaker", resource="model-package-group", resource_name=self.model_package_group_name
        )

    @property
    def model_package_arn_pattern(self) -> str:
        """Every version of the group: ``arn:...:model-package/<name>/*``."""
        return cdk.Stack.of(self).format_arn(
            service="sagemaker", resource="model-package", resource_name=f"{self.model_package_group_name}/*"
        )

    def grant(self, grantee: iam.IGrantable, *actions: str) -> iam.Grant:
        """Allow ``grantee`` the SageMaker ``actions`` on the group and its versions."""
        return iam.Grant.add_to_principal(
            grantee=grantee,
            actions=list(actions),
            resource_arns=[self.model_package_group_arn, self.model_package_arn_pattern],
        )

    def grant_read(self, grantee: iam.IGrantable) -> iam.Grant:
        """Allow ``grantee`` to read the group and its versions (a promotion finding the approved build)."""
        return self.grant(grantee, *READ_ACTIONS)

    def grant_register(self, grantee: iam.IGrantable) -> iam.Grant:
        """Allow ``grantee`` to register builds (``cdk-triton register``: read, then CreateModelPackage).

        The evidence upload needs ``s3:PutObject`` on the evidence location too: grant it on the bucket.
        """
        return self.grant(grantee, *READ_ACTIONS, *REGISTER_ACTIONS)

    def grant_write_results(self, grantee: iam.IGrantable) -> iam.Grant:
        """Allow ``grantee`` to write results back to a version (UpdateModelPackage: metadata, status)."""
        return self.grant(grantee, *READ_ACTIONS, *WRITE_ACTIONS)


class ImportedTritonModelPackageGroup(_ModelPackageGroupBase):
    """A group defined elsewhere, by name (``from_model_package_group_name`` / ``_arn``)."""

    def __init__(self, scope: Construct, construct_id: str, name: str) -> None:
        super().__init__(scope, construct_id)
        self.model_package_group_name = name


class TritonModelPackageGroup(_ModelPackageGroupBase):
    """Defines a SageMaker model package group (the registry of one endpoint's builds) and its policy.

    Example::

        group = TritonModelPackageGroup(
            stack, "Registry", model_package_group_name="resnet-sme",
            read_accounts=["111111111111", "222222222222"], write_accounts=["111111111111"])
        group.grant_register(build_role)
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        model_package_group_name: str | None = None,
        description: str | None = None,
        read_accounts: Sequence[str] = (),
        write_accounts: Sequence[str] = (),
        removal_policy: cdk.RemovalPolicy = cdk.RemovalPolicy.RETAIN,
    ) -> None:
        """
        Args:
            model_package_group_name: the group's name, the ``--group`` of ``cdk-triton register``
                (1-63 of [a-zA-Z0-9-]). Default: a unique name from the construct path.
            description: the group's description. Default: none.
            read_accounts: the stage accounts that read the versions (12-digit ids). Default: none
                (no resource policy unless ``write_accounts`` is set).
            write_accounts: the accounts that write verification results back (UpdateModelPackage); they
                read too. Default: none.
            removal_policy: what happens to the group (and its versions' registry) when the stack drops
                it. Default: RETAIN, the approvals are an audit trail.
        """
        super().__init__(scope, construct_id)
        name = model_package_group_name or cdk.Names.unique_resource_name(self, max_length=63, separator="-")
        raise_all(self._check(model_package_group_name, read_accounts, write_accounts))
        self.model_package_group_name = name
        self.read_accounts = sorted(set(read_accounts) | set(write_accounts))
        self.write_accounts = sorted(set(write_accounts))
        self.resource = sagemaker.CfnModelPackageGroup(
            self,
            "Resource",
            model_package_group_name=name,
            model_package_group_description=description,
            model_package_group_policy=self._policy() if self.read_accounts else None,
        )
        self.resource.apply_removal_policy(removal_policy)

    @staticmethod
    def from_model_package_group_name(
        scope: Construct, construct_id: str, name: str
    ) -> ITritonModelPackageGroup:
        """A group of this account and region, by name (for grants in another stack)."""
        if not is_token(name) and (bad := check_model_package_group_name(name)):
            raise bad.at(f"{scope.node.path}/{construct_id}")
        return ImportedTritonModelPackageGroup(scope, construct_id, name)

    @staticmethod
    def from_model_package_group_arn(
        scope: Construct, construct_id: str, arn: str
    ) -> ITritonModelPackageGroup:
        """A group by ARN (``arn:<partition>:sagemaker:<region>:<account>:model-package-group/<name>``)."""
        name = cdk.Arn.split(arn, cdk.ArnFormat.SLASH_RESOURCE_NAME).resource_name or ""
        return TritonModelPackageGroup.from_model_package_group_name(scope, construct_id, name)

    def _check(
        self, name: str | None, read_accounts: Sequence[str], write_accounts: Sequence[str]
    ) -> list[TritonValidationError]:
        errs: list[TritonValidationError] = []
        if name is not None and not is_token(name) and (bad := check_model_package_group_name(name)):
            errs.append(located(self, bad))
        for prop, accounts in (("read_accounts", read_accounts), ("write_accounts", write_accounts)):
            errs += account_id_problems(prop, list(accounts), path=self.node.path, skip=is_token)
        return errs

    def _policy(self) -> dict[str, Any]:
        def principal(accounts: list[str]) -> dict[str, Any]:
            return {"AWS": [f"arn:{cdk.Aws.PARTITION}:iam::{a}:root" for a in accounts]}

        statements: list[dict[str, Any]] = [
            {
                "Sid": "StageAccountsRead",
                "Effect": "Allow",
                "Principal": principal(self.read_accounts),
                "Action": list(READ_ACTIONS),
                "Resource": [self.model_package_group_arn, self.model_package_arn_pattern],
            }
        ]
        if self.write_accounts:
            statements.append(
                {
                    "Sid": "StageAccountsWriteResults",
                    "Effect": "Allow",
                    "Principal": principal(self.write_accounts),
                    "Action": list(WRITE_ACTIONS),
                    "Resource": [self.model_package_arn_pattern],
                }
            )
        return {"Version": "2012-10-17", "Statement": statements}
