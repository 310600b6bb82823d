"""Instance pools on an inference-components endpoint (``TritonComponentsEndpoint(instance_pools=...)``):
the variant's ``InstancePools``, each component's one ``Specification`` checked against every pool and
derived for the smallest, the instance bounds on the pool that needs the most, the manifest's pools."""

from __future__ import annotations

from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Annotations, Match

from cdk_triton.builder import components as build_components
from cdk_triton.config import instance_pools, tables
from cdk_triton.config.manifest import Manifest
from cdk_triton.constructs import ModelArtifacts, TritonComponentsEndpoint
from cdk_triton.errors import TritonValidationError
from tests.unit.constructs.support import manifest_with, new_stack, only, resources, template, with_components

SMALL, LARGE = "ml.g5.xlarge", "ml.g5.2xlarge"  # 1 GPU each; 16 and 32 GiB host memory
SMALL_MB = tables.instance_type_info(SMALL).host_memory_gib * 1024  # type: ignore[union-attr]


def _manifest(pools: dict[str, Any] | None = None, memory_mb: int | None = None) -> Manifest:
    def mutate(data: dict[str, Any]) -> None:
        with_components(data)
        ic = data["endpoints"]["components"]
        ic["instance_types"] = [SMALL, LARGE, "ml.g5.12xlarge"]
        if pools is not None:
            ic["instance_pools"] = pools
        if memory_mb is not None:
            ic["components"]["resnet_ts"]["min_memory_mb"] = memory_mb

    return manifest_with(mutate)


def _endpoint(manifest: Manifest | None = None, stack: cdk.Stack | None = None, **kw: Any) -> Any:
    return TritonComponentsEndpoint(
        stack or new_stack(),
        "Components",
        artifacts=ModelArtifacts.from_manifest(manifest or _manifest(), "components"),
        **kw,
    )


def _codes(err: TritonValidationError) -> list[str]:
    return [e.code for e in getattr(err, "errors", [err])]


def test_pools_on_the_components_variant_with_managed_scaling() -> None:
    stack = new_stack()
    ep = _endpoint(
        stack=stack, instance_pools=[LARGE, SMALL], instance_provision_timeout=cdk.Duration.minutes(10)
    )
    tpl = template(stack)
    variant = only(tpl, "AWS::SageMaker::EndpointConfig")["Properties"]["ProductionVariants"][0]
    assert "InstanceType" not in variant and "ModelName" not in variant
    assert variant["InstancePools"] == [
        {"InstanceType": LARGE, "Priority": 1},
        {"InstanceType": SMALL, "Priority": 2},
    ]  # no ModelNameOverride: the variant has no model; each component names its own
    assert variant["VariantInstanceProvisionTimeoutInSeconds"] == 600
    assert variant["ManagedInstanceScaling"]["Status"] == "ENABLED"
    assert ep.instance_type == LARGE
    for c in resources(tpl, "AWS::SageMaker::InferenceComponent").values():
        spec = c["Properties"]["Specification"]  # one Specification, applied on every pool
        assert "Specifications" not in c["Properties"]
        assert spec["ComputeResourceRequirements"]["NumberOfAcceleratorDevicesRequired"] == 1


def test_a_component_must_fit_every_pool_and_the_error_names_the_pool() -> None:
    manifest = _manifest(memory_mb=SMALL_MB + 1)  # fits the 2xlarge, not the xlarge
    _endpoint(manifest, instance_type=LARGE)  # one type: fits
    with pytest.raises(TritonValidationError) as info:
        _endpoint(manifest, instance_pools=[LARGE, SMALL])
    assert _codes(info.value) == ["ComponentDoesNotFit"]
    text = str(info.value)
    assert f"instance pool 2 ({SMALL})" in text and "components.resnet_ts.min_memory_mb" in text
    assert "Components" in text


def test_the_build_checks_every_pool_of_the_manifest() -> None:
    manifest = _manifest({"instance_types": [LARGE, SMALL]}, memory_mb=SMALL_MB + 1)
    entry = manifest.endpoints["components"]
    found = build_components.fit_problems([entry], manifest.models)
    assert [p.code for p in found] == ["ComponentDoesNotFit"] and SMALL in str(found[0])
    larger_only = _manifest({"instance_types": [LARGE]}, memory_mb=SMALL_MB + 1).endpoints["components"]
    assert build_components.fit_problems([larger_only], manifest.models) == []


def test_the_instance_bounds_hold_every_copy_on_the_pool_needing_most() -> None:
    """4 GPUs hold 4 one-GPU copies per instance, 1 GPU one: the derived max is the 1-GPU pool's."""
    four = _endpoint(instance_type="ml.g5.12xlarge").max_instances
    one = _endpoint(instance_type=SMALL).max_instances
    assert four < one
    assert _endpoint(instance_pools=["ml.g5.12xlarge", SMALL]).max_instances == one
    assert instance_pools.smallest(["ml.g5.12xlarge", SMALL]) == SMALL
    with pytest.raises(TritonValidationError) as info:  # a given max checked on every pool
        _endpoint(instance_pools=["ml.g5.12xlarge", SMALL], max_instances=four)
    assert "CopiesExceedInstances" in _codes(info.value) and SMALL in str(info.value)


def test_the_manifest_pools_are_the_default_and_exclusive_with_instance_type() -> None:
    manifest = _manifest({"instance_types": [SMALL, LARGE], "provision_timeout_s": 900})
    stack = new_stack()
    _endpoint(manifest, stack=stack)
    variant = only(template(stack), "AWS::SageMaker::EndpointConfig")["Properties"]["ProductionVariants"][0]
    assert [p["InstanceType"] for p in variant["InstancePools"]] == [SMALL, LARGE]
    assert variant["VariantInstanceProvisionTimeoutInSeconds"] == 900
    with pytest.raises(TritonValidationError) as info:
        _endpoint(instance_type=SMALL, instance_pools=[LARGE])
    assert _codes(info.value) == ["InstanceTypeOrPools"]


def _dashboard_metrics(stack: cdk.Stack) -> list[list[Any]]:
    import json

    body = only(template(stack), "AWS::CloudWatch::Dashboard")["Properties"]["DashboardBody"]
    text = body if isinstance(body, str) else json.dumps(body)  # plain JSON without tokens
    widgets = json.loads(text)["widgets"]
    return [mt for w in widgets for mt in w.get("properties", {}).get("metrics", []) if len(mt) > 3]


@pytest.mark.parametrize("mode", ["SingleModel", "InferenceComponents"])
def test_the_dashboard_graphs_each_pool_by_the_instance_type_dimension(mode: str) -> None:
    from cdk_triton.constructs import TritonDashboard, TritonEndpoint
    from tests.unit.constructs.support import EXAMPLE

    stack = new_stack()
    pools = [SMALL, "ml.g6.xlarge"] if mode == "SingleModel" else [LARGE, SMALL]
    if mode == "SingleModel":
        ep = TritonEndpoint(
            stack, "Ep", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"), instance_pools=pools
        )
    else:
        ep = _endpoint(stack=stack, instance_pools=pools)
    TritonDashboard(stack, "Dash", endpoints=[ep])
    metrics = _dashboard_metrics(stack)
    for it in pools:  # (EndpointName, VariantName, InstanceType) per pool
        assert any(
            mt[1] == "Invocations"
            and mt[2:4] == ["EndpointName", ep.endpoint_name]
            and mt[-3:-1] == ["InstanceType", it]
            for mt in metrics
        ), it
    per_component = [mt for mt in metrics if mt[2] == "InferenceComponentName" and "InstanceType" in mt]
    assert bool(per_component) == (mode == "InferenceComponents")
    if per_component:
        assert {mt[5] for mt in per_component} == set(pools)


def test_a_copy_whose_gpu_models_outgrow_a_pool_s_gpu_is_warned_naming_that_pool() -> None:
    """resnet_ts at 18 GiB (weights plus activations, its manifest memory_bytes) fits one A10G (24 GB) and
    not one T4 (16 GB): a copy may land on either pool, so the T4 pool is said, the A10G one is not."""
    a10g, t4 = "ml.g5.2xlarge", "ml.g4dn.2xlarge"  # 32 GiB host memory each

    def mutate(data: dict[str, Any]) -> None:
        with_components(data)
        data["endpoints"]["components"]["instance_types"] = [a10g, t4]
        data["models"]["resnet_ts"]["memory_bytes"] = 18 * 1024**3

    stack = new_stack()
    _endpoint(manifest_with(mutate), stack=stack, instance_pools=[a10g, t4])
    said = [
        str(w.entry.data)
        for w in Annotations.from_stack(stack).find_warning(
            "*", Match.string_like_regexp("GpuMemoryOversubscribed")
        )
    ]
    assert len(said) == 1
    assert f"instance pool 2 ({t4})" in said[0] and "resnet_ts" in said[0] and "T4" in said[0]
