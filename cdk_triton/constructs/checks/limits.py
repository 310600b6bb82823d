"""A stack's template against CloudFormation's limits; the MME name map against Parameter Store's.

The limits and their sources live in ``config/data/cloudformation-limits.json``. Every check passes
at the limit and fails one over it (CloudFormation's limits are maxima). Each error names the split
to make: TargetModels behind more MMEs in more stacks, endpoints in another stack, a shorter name.

Two callers: ``TritonEndpoint`` checks its own TargetModel name map up front (exact: the SSM values
it writes), and ``constructs/template_limits.py`` checks the whole stack at synth from its final
construct tree (counts exact, size from the resolved properties: see that module).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cdk_triton.config import tables
from cdk_triton.constructs.errors import catalogued
from cdk_triton.errors import TritonValidationError

#: The share of the template limit a split aims at, so that the stacks it gives have room to grow.
SPLIT_TARGET = 0.8
#: Bytes a name map part adds to the template beyond its value (type, name, tier, description,
#: the ``aws:cdk:path`` metadata, indentation), measured on synthesized parts (``Part000``): ~330.
PART_OVERHEAD_BYTES = 400


def limit(name: str) -> int:
    """The value of one vendored limit (``template_s3_bytes``, ``resources``, ``ssm_standard_value_chars``...)."""
    return tables.cloudformation_limits()[name].value


def source(name: str) -> str:
    return tables.cloudformation_limits()[name].source


@dataclass(frozen=True, kw_only=True, slots=True)
class Contributor:
    """Something in a stack that takes a large share of its template (an MME name map, a spec)."""

    path: str
    bytes: int
    target_models: int = 0  # an MME name map: how many TargetModels it holds


@dataclass(frozen=True, kw_only=True, slots=True)
class TemplateFigures:
    """What one stack's template declares, as the limits count it."""

    stack: str
    template_bytes: int
    resources: int
    outputs: int = 0
    parameters: int = 0
    mappings: int = 0
    contributors: tuple[Contributor, ...] = ()


def split_of(target_models: int, map_bytes: int, other_bytes: int = 0) -> tuple[int, int]:
    """(stacks, TargetModels per stack) so that each stack's share of a name map of ``map_bytes``
    plus ``other_bytes`` fits ``SPLIT_TARGET`` of the template limit."""
    room = max(int(limit("template_s3_bytes") * SPLIT_TARGET) - other_bytes, 1)
    per_model = max(map_bytes / max(target_models, 1), 1.0)
    per_stack = max(int(room // per_model), 1)
    return max(math.ceil(target_models / per_stack), 2), per_stack


def _size_fix(f: TemplateFigures) -> tuple[str, str]:
    """(allowed, fix) for a template over the size limit: the split its biggest contributor needs."""
    cap = limit("template_s3_bytes")
    maps = [c for c in f.contributors if c.target_models]
    if maps:
        top = max(maps, key=lambda c: c.bytes)
        stacks, per_stack = split_of(top.target_models, top.bytes, f.template_bytes - top.bytes)
        return (
            f"at most {cap:,} bytes; the TargetModel name map of {top.path} takes {top.bytes:,} bytes "
            f"for {top.target_models:,} TargetModels",
            f"put the MME's TargetModels behind {stacks} endpoints, each in its own stack, of at most "
            f"{per_stack:,} TargetModels (one models.yaml endpoint per share), or move the other "
            "endpoints of this stack into another stack",
        )
    biggest = ", ".join(f"{c.path} ({c.bytes:,} bytes)" for c in f.contributors[:3])
    return (
        f"at most {cap:,} bytes" + (f"; the largest parts: {biggest}" if biggest else ""),
        f"move endpoints into another stack until each template is under {int(cap * SPLIT_TARGET):,} bytes",
    )


def _over(name: str, count: int, stack: str) -> dict[str, str]:
    return {
        "prop": "stack",
        "value": f"{stack}: {count} {name}",
        "problem": f"exceeds CloudFormation's limit of {limit(name)} {name} per template",
        "allowed": f"at most {limit(name)} {name}",
        "fix": f"move endpoints into another stack (each TritonEndpoint adds its own {name})",
    }


def check_template_limits(f: TemplateFigures) -> list[TritonValidationError]:
    """Template size (S3 template URL), resources, outputs, parameters and mappings of one stack."""
    errs: list[TritonValidationError] = []
    if f.template_bytes > limit("template_s3_bytes"):
        allowed, fix = _size_fix(f)
        errs.append(
            catalogued(
                "TemplateTooLarge",
                prop="stack",
                value=f"{f.stack}: {f.template_bytes:,} bytes",
                problem="is over CloudFormation's template size limit for a template in S3 (cdk deploy "
                "and CDK Pipelines upload every template to S3)",
                allowed=allowed,
                fix=fix,
            )
        )
    if f.resources > limit("resources"):
        errs.append(
            catalogued(
                "StackResourceLimit",
                prop="stack",
                value=f"{f.stack}: {f.resources} resources",
                problem=f"exceeds CloudFormation's limit of {limit('resources')} resources per stack",
                allowed=f"at most {limit('resources')} resources",
                fix="move endpoints (or their monitoring) into another stack; an MME's name map takes one "
                "resource per 4 KB part",
            )
        )
    if f.outputs > limit("outputs"):
        errs.append(catalogued("TooManyOutputs", **_over("outputs", f.outputs, f.stack)))
    if f.parameters > limit("parameters"):
        errs.append(catalogued("TooManyParameters", **_over("parameters", f.parameters, f.stack)))
    if f.mappings > limit("mappings"):
        errs.append(catalogued("TooManyMappings", **_over("mappings", f.mappings, f.stack)))
    return errs


def check_name_map_parts(
    parts: Sequence[str], entries: Mapping[str, str], *, prop: str = "artifacts"
) -> list[TritonValidationError]:
    """Each SSM part of an MME's name map against the standard tier's value size.

    A part over 4,096 characters holds a single entry too long to split (the map is cut between
    entries): the logical name must be shorter, or the part needs the advanced tier (8,192).
    """
    std, adv = limit("ssm_standard_value_chars"), limit("ssm_advanced_value_chars")
    errs: list[TritonValidationError] = []
    for i, text in enumerate(parts):
        if len(text) <= std:
            continue
        names = sorted(json.loads(text))
        tier = (
            "the advanced tier (8,192 characters, charged per parameter-month) would hold it"
            if len(text) <= adv
            else "it does not fit the advanced tier's 8,192 characters either"
        )
        errs.append(
            catalogued(
                "TargetModelMapEntryTooLong",
                prop=prop,
                value=f"part {i:03d}: {names[0][:80]}... ({len(text):,} characters)",
                problem=f"is one name map entry longer than a standard SSM parameter holds; {tier}",
                allowed=f"an entry (logical name and TargetModel, as JSON) of at most {std:,} characters",
                fix=f"shorten the model's name in models.yaml to under {std - len(entries[names[0]]) - 10:,} "
                "characters and rebuild",
            )
        )
    return errs


def name_map_bytes(parts: Sequence[str]) -> int:
    """What an MME's name map parts add to the template (values as JSON strings + per-part overhead)."""
    return sum(len(json.dumps(p)) + PART_OVERHEAD_BYTES for p in parts)
