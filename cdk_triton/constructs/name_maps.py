"""The published name maps of an endpoint: logical name -> TargetModel (MME) or inference component name.

Each map is JSON in SSM standard-tier parameters under one path (``<path>/000``, ``<path>/001``..., at
most 4 KB each; clients read them all with ``GetParametersByPath(Path=<path>)`` and merge the objects),
with a ``ParameterPath`` output and, when the whole map is short, a ``Map`` output.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

import aws_cdk as cdk
from aws_cdk import aws_ssm as ssm
from constructs import Construct

from cdk_triton.constructs.template_limits import check_name_map
from cdk_triton.errors import raise_at

#: SSM standard-tier parameter value limit (characters).
SSM_STANDARD_LIMIT = 4096
#: The largest CfnOutput value a name map is published in directly.
OUTPUT_MAP_LIMIT = 1024


def chunk_map(mapping: Mapping[str, str], limit: int) -> list[dict[str, str]]:
    """``mapping`` split, in key order, into objects whose compact JSON is at most ``limit`` characters."""
    chunks: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for key, value in sorted(mapping.items()):
        trial = {**current, key: value}
        if current and len(json.dumps(trial, separators=(",", ":"))) > limit:
            chunks.append(current)
            current = {key: value}
        else:
            current = trial
    if current:
        chunks.append(current)
    return chunks


def publish_name_map(
    scope: Construct,
    *,
    base: str,
    mapping: Mapping[str, str],
    part_description: str,
    path_description: str,
    map_description: str,
    check: Callable[[list[str]], None] | None = None,
) -> list[ssm.CfnParameter]:
    """The SSM parameters ``Part000``... (``part_description`` + `` (part i/n)``) and the outputs
    ``ParameterPath`` and ``Map`` under ``scope``. ``check`` sees the parameter values before any is
    defined (it raises to refuse them)."""
    chunks = chunk_map(mapping, SSM_STANDARD_LIMIT)
    values = [json.dumps(chunk, separators=(",", ":"), sort_keys=True) for chunk in chunks]
    if check is not None:
        check(values)
    parameters = [
        ssm.CfnParameter(
            scope,
            f"Part{i:03d}",
            type="String",
            name=f"{base}/{i:03d}",
            value=value,
            tier="Standard",
            description=f"{part_description} (part {i + 1}/{len(chunks)})",
        )
        for i, value in enumerate(values)
    ]
    cdk.CfnOutput(scope, "ParameterPath", value=base, description=path_description)
    text = json.dumps(dict(mapping), separators=(",", ":"), sort_keys=True)
    if len(text) <= OUTPUT_MAP_LIMIT:
        cdk.CfnOutput(scope, "Map", value=text, description=map_description)
    return parameters


def target_model_parameter_path(endpoint_name: str) -> str:
    """The SSM path of an MME's logical name -> TargetModel map."""
    return f"/cdk-triton/{endpoint_name}/target-models"


def publish_target_models(
    scope: Construct, *, stack: cdk.Stack, endpoint_name: str, mapping: dict[str, str]
) -> list[ssm.CfnParameter]:
    """An MME's logical name -> TargetModel map under ``scope``'s child ``TargetModels``: SSM parameters
    under :func:`target_model_parameter_path` and outputs (:func:`publish_name_map`). The map alone is
    checked first, exactly (its SSM values; ``template_limits.check_name_map``, errors located at
    ``scope``); the whole stack again at synth."""

    def check(values: list[str]) -> None:
        raise_at(scope, check_name_map(stack, path=scope.node.path, values=values, entries=mapping))

    return publish_name_map(
        Construct(scope, "TargetModels"),
        base=target_model_parameter_path(endpoint_name),
        mapping=mapping,
        part_description=f"cdk-triton: TargetModel map of endpoint {endpoint_name}",
        path_description="SSM path of the logical model name -> TargetModel map (GetParametersByPath)",
        map_description="logical model name -> TargetModel",
        check=check,
    )
