"""The container image of a Triton model: a SageMaker Triton release, or your own ECR image."""

from __future__ import annotations

import abc
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import aws_cdk as cdk
from constructs import Construct, IConstruct

from cdk_triton.config import tables
from cdk_triton.config.tables import DEFAULT_TRITON_VERSION, IMAGE_REPOSITORY
from cdk_triton.constructs._tokens import is_token, pseudo, stack_info
from cdk_triton.constructs.errors import catalogued, located
from cdk_triton.errors import TritonValidationError

if TYPE_CHECKING:
    from aws_cdk import aws_ecr as ecr


@dataclass(frozen=True, kw_only=True, slots=True)
class ImageConfig:
    """What a bound image gives the model.

    Attributes:
        image_uri: the full image URI (a token for env-agnostic stacks).
        repository_arn: the ECR repository the execution role may pull from.
        triton_version: the release (``24.09``) for SageMaker images, None for a custom image.
    """

    image_uri: str
    repository_arn: str
    triton_version: str | None


class TritonImage(abc.ABC):
    """The Triton container image: ``TritonImage.for_version("24.09")`` or ``from_ecr_repository``."""

    @staticmethod
    def for_version(version: str = DEFAULT_TRITON_VERSION) -> TritonImage:
        """The AWS-built ``sagemaker-tritonserver:<version>-py3`` image.

        In a stack with a concrete region the URI is resolved at synth time from the vendored
        account table (a region without the image is a synth error). In an env-agnostic stack it
        resolves through a CfnMapping, and a CloudFormation Rules assertion fails the deploy in a
        region without the image.

        Args:
            version: the Triton release ``YY.MM``. Default: ``DEFAULT_TRITON_VERSION`` (24.09).
        """
        return _SageMakerTritonImage(version)

    @staticmethod
    def from_ecr_repository(
        repository: ecr.IRepository, tag: str = "latest", *, triton_version: str | None = None
    ) -> TritonImage:
        """Your own Triton image in ECR; the execution role is granted pull on that repository.

        Args:
            repository: the ECR repository.
            tag: the image tag (or a ``sha256:...`` digest). Default: ``latest``.
            triton_version: the Triton release the image is built from (``YY.MM``): the synth checks
                of a release (NVIDIA's advisories among them) then apply to it; acknowledge what your
                image has fixed with ``acknowledged_advisories``. Default: unknown (not checked).
        """
        return _EcrImage(repository, tag, triton_version)

    @property
    @abc.abstractmethod
    def triton_version(self) -> str | None:
        """The Triton release of the image, None when unknown (a custom image)."""

    def validate(self) -> list[TritonValidationError]:
        """Problems of the image reference found without a scope (the model locates them)."""
        return []

    @abc.abstractmethod
    def bind(self, scope: Construct) -> ImageConfig:
        """Resolve the image for a model defined in ``scope``."""


class _SageMakerTritonImage(TritonImage):
    def __init__(self, version: str) -> None:
        self._version = version

    @property
    def triton_version(self) -> str | None:
        return self._version

    def bind(self, scope: Construct) -> ImageConfig:
        info = stack_info(scope)
        stack, region = info.stack, info.region
        try:
            tables.image_regions(self._version)
        except TritonValidationError as err:
            raise located(scope, err) from None
        if not is_token(region):
            try:
                uri = tables.image_uri(self._version, region)
                account = tables.image_account(self._version, region)
            except TritonValidationError as err:
                raise located(scope, err) from None
            repo_arn = f"arn:{pseudo().partition}:ecr:{region}:{account}:repository/{IMAGE_REPOSITORY}"
            return ImageConfig(image_uri=uri, repository_arn=repo_arn, triton_version=self._version)
        mapping = _region_mapping(stack, self._version)
        p = pseudo()
        account = mapping.find_in_map(p.region, "account")
        uri = f"{account}.dkr.ecr.{p.region}.{p.url_suffix}/{IMAGE_REPOSITORY}:{self._version}-py3"
        repo_arn = f"arn:{p.partition}:ecr:{p.region}:{account}:repository/{IMAGE_REPOSITORY}"
        return ImageConfig(image_uri=uri, repository_arn=repo_arn, triton_version=self._version)


def _region_mapping(stack: cdk.Stack, version: str) -> cdk.CfnMapping:
    """One mapping + rule per stack and version, shared by every model using that image."""
    key = version.replace(".", "")
    mapping_id = f"TritonImageAccounts{key}"
    existing = stack.node.try_find_child(mapping_id)
    if isinstance(existing, cdk.CfnMapping):
        return existing
    regions = tables.image_regions(version)
    mapping = cdk.CfnMapping(
        stack,
        mapping_id,
        mapping={region: {"account": account} for region, account in sorted(regions.items())},
    )
    cdk.CfnRule(
        stack,
        f"TritonImageRegion{key}",
        assertions=[
            cdk.CfnRuleAssertion(
                assert_=cdk.Fn.condition_contains(sorted(regions), cdk.Aws.REGION),
                assert_description=(
                    f"cdk-triton: sagemaker-tritonserver:{version}-py3 is not published in this region; "
                    f"deploy to one of: {', '.join(sorted(regions))}, or choose another Triton version"
                ),
            )
        ],
    )
    return mapping


_ECR_TAG = re.compile(r"^[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,127}$")
_ECR_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")


class _EcrImage(TritonImage):
    def __init__(self, repository: ecr.IRepository, tag: str, triton_version: str | None = None) -> None:
        self._repository = repository
        self._tag = tag
        self._version = triton_version

    @property
    def triton_version(self) -> str | None:
        return self._version

    def validate(self) -> list[TritonValidationError]:
        tag = self._tag
        if is_token(tag) or _ECR_TAG.fullmatch(tag) or _ECR_DIGEST.fullmatch(tag):
            return []
        return [
            catalogued(
                "InvalidImageTag",
                prop="tag",
                value=tag,
                problem="is neither an ECR image tag nor a digest",
                allowed="a tag of 1-128 of [a-zA-Z0-9_.-] starting with a letter, digit or '_', "
                "or 'sha256:' and 64 hex digits",
                fix="pass the tag you pushed (e.g. '24.09-custom') or the image digest",
            )
        ]

    def bind(self, scope: IConstruct) -> ImageConfig:
        uri = self._repository.repository_uri_for_tag_or_digest(self._tag)
        return ImageConfig(
            image_uri=uri, repository_arn=self._repository.repository_arn, triton_version=self._version
        )
