"""The whole stack against CloudFormation's template limits, at synth, from its final construct tree.

``TritonEndpoint`` registers one ``StackLimits`` validation per stack (``stack_limits(stack)``). CDK
runs validations after every aspect and before it writes any template, so the tree is final:

- resources, outputs, parameters and mappings are counted exactly (every ``CfnResource``,
  ``CfnOutput``, ``CfnParameter`` and ``CfnMapping`` under the stack, nested stacks' too: a
  conservative count);
- the template size is the JSON CDK writes (one-space indentation, UTF-8) of the stack's resources
  with their resolved properties, types and ``aws:cdk:path`` metadata, and its outputs: within 2 %
  of the written template for the fleet stacks the tests synthesize (CDK keeps its own renderer
  internal, so this is a re-rendering, not the file itself: ``DependsOn``, conditions and raw
  overrides are left out; logical ids are estimated from the paths).

A finding fails synth through CDK's validation report ("Validation failed ... [TemplateTooLarge]"),
with the same coded text as a ``TritonValidationError``; the endpoint's own name map is also checked
up front (``checks.limits``), which raises ``TritonValidationError`` itself.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

import aws_cdk as cdk
import jsii
from aws_cdk import aws_sagemaker as sagemaker
from constructs import Construct, IValidation, Node

from cdk_triton.config import advisories
from cdk_triton.constructs._tokens import stack_info
from cdk_triton.constructs.checks.headroom import CFN_RESOURCE_LIMIT, check_headroom
from cdk_triton.constructs.checks.limits import (
    Contributor,
    TemplateFigures,
    check_name_map_parts,
    check_template_limits,
    limit,
    name_map_bytes,
)
from cdk_triton.errors import TritonValidationError, raise_at

#: The id of the marker construct that holds a stack's validation where the stack's Python object
#: refuses attributes (no resource: no template change).
MARKER_ID = "CdkTritonTemplateLimits"


@jsii.implements(IValidation)
class StackLimits:
    """The validation of one stack: figures from the final tree, then ``check_template_limits``."""

    def __init__(self, stack: cdk.Stack) -> None:
        self._stack = stack
        self._node = stack_info(stack).node  # read once: each ``stack.node`` is a jsii round trip
        self._path: str | None = None
        self.contributors: list[Contributor] = []

    @property
    def path(self) -> str:
        """The stack's construct path (read through jsii once)."""
        if self._path is None:
            self._path = self._node.path
        return self._path

    def register(self) -> None:
        """Run at synth (``node.add_validation``: after every aspect, before any template is written)."""
        self._node.add_validation(self)

    def add_contributor(self, contributor: Contributor) -> None:
        """Name something large (an MME name map) so that a size error can say what to split."""
        self.contributors.append(contributor)

    def figures(self, *, size: bool = True) -> TemplateFigures:
        """The stack's figures; ``size=False``: counts only (the template size left 0, no resolve)."""
        resources: list[cdk.CfnResource] = []
        outputs: list[cdk.CfnOutput] = []
        parameters = mappings = 0
        for c in self._node.find_all():
            bases = type(c).__mro__  # not isinstance: see is_cfn_resource
            if cdk.CfnResource in bases:
                resources.append(cast(cdk.CfnResource, c))
            elif cdk.CfnOutput in bases:
                outputs.append(cast(cdk.CfnOutput, c))
            elif cdk.CfnParameter in bases:
                parameters += 1
            elif cdk.CfnMapping in bases:
                mappings += 1
        return TemplateFigures(
            stack=self.path,
            template_bytes=rendered_size(self._stack, resources, outputs) if size else 0,
            resources=len(resources),
            outputs=len(outputs),
            parameters=parameters,
            mappings=mappings,
            contributors=tuple(sorted(self.contributors, key=lambda c: -c.bytes)),
        )

    def validate(self) -> list[str]:
        """Counts always; the template's size only when a cheap bound says it could matter."""
        counts = self.figures(size=False)
        render = size_could_matter(counts)
        figures = self.figures() if render else counts
        return [str(e.at(self.path)) for e in check_template_limits(figures)]


#: Bytes a resource takes in a template on average, generously: the example's and the pipeline's
#: stacks average 1.1-2.6 KB per resource (metadata and outputs included; the largest resource, a
#: dashboard, about 12 KB); a fleet's bytes are its name maps', counted exactly.
RESOURCE_BYTES_BOUND = 4096


def size_could_matter(counts: TemplateFigures) -> bool:
    """Whether the re-rendering (``rendered_size``: two jsii calls per resource and a resolve, about a
    third of a small stack's synth) is needed: the name maps' exact bytes plus ``RESOURCE_BYTES_BOUND``
    per resource reach half the S3 template limit. Below that a stack passes the limit only with
    resources averaging over twice the bound (over 8 KB each, 3x the largest average measured)."""
    known = sum(c.bytes for c in counts.contributors)
    return known + counts.resources * RESOURCE_BYTES_BOUND >= limit("template_s3_bytes") // 2


def rendered_size(stack: cdk.Stack, resources: list[cdk.CfnResource], outputs: list[cdk.CfnOutput]) -> int:
    """Bytes of the stack's resources and outputs rendered as CDK writes a template.

    Two jsii calls per resource (``to_string``: path and type; the properties) and one resolve; the
    logical id is the path's letters and digits plus CDK's 8-character hash (its exact rule drops
    ``Default`` / ``Resource`` components: a few bytes each, on the safe side)."""
    described = [r.to_string() for r in resources]  # "Stack/Path/Resource [AWS::Type]"
    raw: dict[str, Any] = {
        "properties": [r._cfn_properties for r in resources],
        "outputs": [{"Value": o.value, "Description": o.description} for o in outputs],
    }
    resolved = stack.resolve(raw)
    # the models' acknowledged advisories (config.advisories: the only Metadata the constructs add)
    extra = [
        r.get_metadata(advisories.METADATA_KEY) if isinstance(r, sagemaker.CfnModel) else None
        for r in resources
    ]
    body: dict[str, Any] = {}
    for text, props, more in zip(described, resolved["properties"], extra, strict=True):
        path, _, kind = text.rpartition(" [")
        logical = "".join(ch for ch in path.partition("/")[2] if ch.isalnum())[:247] + "0" * 8
        body[logical] = {
            "Type": kind.rstrip("]"),
            **({"Properties": props} if props else {}),
            "Metadata": {"aws:cdk:path": path, **({advisories.METADATA_KEY: more} if more else {})},
        }
    template = {"Resources": body, "Outputs": {f"Output{i}": o for i, o in enumerate(resolved["outputs"])}}
    return len(json.dumps(template, indent=1, ensure_ascii=False).encode())


#: the attribute that holds a stack's validation on the stack's Python object (or, where that object
#: refuses attributes, on the marker construct)
_LIMITS = "_cdk_triton_limits"


def stack_limits(stack: cdk.Stack) -> StackLimits:
    """The stack's validation, registered on first use (one per stack). The stack's Python object keeps it
    (jsii hands out one Python object per stack), so later endpoints ask jsii nothing; a stack whose
    object refuses attributes keeps it on a marker construct (``MARKER_ID``, no resource) instead."""
    cached: StackLimits | None = getattr(stack, _LIMITS, None)
    if cached is not None:
        return cached
    validation = StackLimits(stack)
    try:
        setattr(stack, _LIMITS, validation)
    except AttributeError:  # a proxy that refuses attributes: the marker construct holds it
        node = stack_info(stack).node
        marker = node.try_find_child(MARKER_ID)
        if marker is not None:
            found: StackLimits = getattr(marker, _LIMITS)
            return found
        marker = Construct(stack, MARKER_ID)
        setattr(marker, _LIMITS, validation)
    validation.register()
    return validation


def check_name_map(
    stack: cdk.Stack, *, path: str, values: list[str], entries: dict[str, str]
) -> list[TritonValidationError]:
    """An MME's name map alone, exactly (the SSM values it writes): each part's size, then the map's
    bytes and parts against the template limits; it is also recorded as the stack's contributor, so
    that a size error at synth names the split."""
    errs = check_name_map_parts(values, entries)
    size = name_map_bytes(values)
    contributor = Contributor(path=path, bytes=size, target_models=len(entries))
    limits = stack_limits(stack)
    figures = TemplateFigures(
        stack=limits.path, template_bytes=size, resources=len(values), contributors=(contributor,)
    )
    limits.add_contributor(contributor)
    return errs + check_template_limits(figures)


# ---------------------------------------------------------------------------- resource headroom


@dataclass(frozen=True, kw_only=True, slots=True)
class ResourceHeadroom:
    """How many CloudFormation resources a stack holds against the limit."""

    stack: str
    resources: int
    limit: int = CFN_RESOURCE_LIMIT

    @property
    def remaining(self) -> int:
        return self.limit - self.resources

    @property
    def used_fraction(self) -> float:
        return self.resources / self.limit


def is_cfn_resource(construct: object) -> bool:
    """``isinstance(construct, cdk.CfnResource)`` read from the class's MRO. The same answer for CDK's
    classes (none registers virtual subclasses), but ``isinstance`` goes through ``ABCMeta``, which walks
    all of CfnResource's 255 subclasses once per other construct class it meets (0.8 ms each)."""
    return cdk.CfnResource in type(construct).__mro__


def count_resources(stack: cdk.Stack, node: Node | None = None) -> int:
    """The CloudFormation resources below ``node`` (default: the whole stack)."""
    return sum(1 for c in (node or stack.node).find_all() if is_cfn_resource(c))


def resource_headroom(stack: cdk.Stack, *, annotate: bool = False) -> ResourceHeadroom:
    """Count the CloudFormation resources of ``stack`` (optionally as an info annotation).

    Resources of nested stacks below ``stack`` are counted too (a conservative estimate).
    """
    count = count_resources(stack)
    head = ResourceHeadroom(stack=stack.node.path, resources=count)
    if annotate:
        cdk.Annotations.of(stack).add_info(
            f"cdk-triton: {count} of {head.limit} CloudFormation resources used ({head.remaining} left)"
        )
    return head


def check_endpoint_headroom(endpoint: Construct, stack: cdk.Stack) -> None:
    """After an endpoint is defined: the stack's outputs, parameters and mappings so far against the
    template limits, and its resources against the per-stack limit (an error over it, naming the
    endpoint's share; a ``cdk-triton:ResourceHeadroom`` warning near it). All again at synth."""
    counts = stack_limits(stack).figures(size=False)
    raise_at(endpoint, [e for e in check_template_limits(counts) if e.code != "StackResourceLimit"])
    resources = counts.resources  # the same walk: every CfnResource of the stack
    mine = (
        sum(1 for c in endpoint.node.find_all() if is_cfn_resource(c))
        if resources > CFN_RESOURCE_LIMIT
        else 0
    )
    # the id only appears in the over-the-limit error: no jsii read below the limit
    endpoint_id = endpoint.node.id if resources > CFN_RESOURCE_LIMIT else ""
    errs, warn = check_headroom(resources, endpoint_resources=mine, endpoint_id=endpoint_id)
    raise_at(endpoint, errs)
    if warn:
        cdk.Annotations.of(stack).add_warning_v2(
            "cdk-triton:ResourceHeadroom",
            f"{resources} of {CFN_RESOURCE_LIMIT} CloudFormation resources used after {endpoint.node.path}; "
            "put further endpoints in another stack",
        )
