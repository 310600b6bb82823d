"""The variant's hosting: one frozen value per endpoint, decided once, that the constructs assemble resources from."""

from __future__ import annotations

import dataclasses
from unittest import mock

import aws_cdk as cdk
import pytest

from cdk_triton.config.manifest import Manifest
from cdk_triton.constructs import ModelArtifacts, TritonComponentsEndpoint, TritonEndpoint, TritonModel
from cdk_triton.constructs import variant_hosting as hp
from cdk_triton.constructs.shadow import ShadowVariant
from tests.unit.constructs.support import EXAMPLE, manifest_with, new_stack, only, template, with_components


def test_the_hosting_holds_what_the_variant_is_built_from() -> None:
    stack = new_stack()
    ep = TritonEndpoint(
        stack,
        "Ep",
        artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"),
        container_startup_health_check_timeout=cdk.Duration.minutes(10),
    )
    hosting = ep.variant_hosting
    with pytest.raises(dataclasses.FrozenInstanceError):
        hosting.async_options = None  # type: ignore[misc]
    variant = only(template(stack), "AWS::SageMaker::EndpointConfig")["Properties"]["ProductionVariants"][0]
    assert hosting.variant.production_variant["instanceType"] == variant["InstanceType"] == "ml.g5.xlarge"
    assert hosting.variant_facts.container_startup_health_check_timeout_seconds == 600
    assert variant["ContainerStartupHealthCheckTimeoutInSeconds"] == 600
    assert hosting.instances.gpu_count == ep.gpu_count == 1
    assert hosting.async_options is None and ep.async_options is None
    assert hosting.shadow is None and hosting.all_errors == []


def test_the_shadow_is_decided_from_the_production_variant_s_facts() -> None:
    stack = new_stack()
    live = TritonModel(stack, "Live", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"))
    candidate = TritonModel(stack, "Candidate", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"))
    ep = TritonEndpoint(
        stack,
        "Ep",
        model=live,
        instance_type="ml.g5.xlarge",
        shadow=ShadowVariant(model=candidate, sampling_percentage=25),
    )
    assert ep.variant_hosting.shadow is not None
    assert ep.variant_hosting.shadow.host == ep.variant_hosting.variant.host
    assert ep.variant_hosting.shadow.production_variant["initialVariantWeight"] == 0.25


def test_the_manifest_entry_is_read_once_per_artifacts() -> None:
    manifest = manifest_with()
    artifacts = ModelArtifacts.from_manifest(manifest, "classifier")
    with mock.patch.object(Manifest, "endpoint", autospec=True, side_effect=Manifest.endpoint) as endpoint:
        TritonEndpoint(new_stack(), "Ep", artifacts=artifacts)  # declared host, then bind: one read
    assert [c.args[1] for c in endpoint.call_args_list].count("classifier") == 1


def test_both_endpoint_constructs_choose_instances_with_one_function() -> None:
    calls: list[dict[str, object]] = []
    real = hp.choose_instances

    def spy(*args: object, **kw: object) -> hp.InstanceChoice:
        calls.append(kw)
        return real(*args, **kw)  # type: ignore[arg-type]

    stack = new_stack()
    with (
        mock.patch("cdk_triton.constructs.endpoint.choose_instances", spy),
        mock.patch("cdk_triton.constructs.components_endpoint.choose_instances", spy),
    ):
        TritonEndpoint(stack, "Sme", artifacts=ModelArtifacts.from_manifest(EXAMPLE, "classifier"))
        TritonComponentsEndpoint(
            stack,
            "Components",
            artifacts=ModelArtifacts.from_manifest(manifest_with(with_components), "components"),
        )
    assert [c["instance_type"] for c in calls] == [None, None]
    configs = template(stack).find_resources("AWS::SageMaker::EndpointConfig").values()
    assert sorted(c["Properties"]["ProductionVariants"][0]["InstanceType"] for c in configs) == [
        "ml.g5.xlarge",
        "ml.g5.xlarge",
    ]


def test_declared_pools_win_over_the_declared_instance_type() -> None:
    def pooled(data: dict[str, object]) -> None:
        entry = data["endpoints"]["classifier"]  # type: ignore[index]
        entry["instance_types"] = ["ml.g5.xlarge", "ml.g6.xlarge"]
        entry["instance_pools"] = {
            "instance_types": ["ml.g5.xlarge", "ml.g6.xlarge"],
            "provision_timeout_s": 600,
        }

    choice = hp.choose_instances(
        ModelArtifacts.from_manifest(manifest_with(pooled), "classifier"),
        instance_type=None,
        instance_pools=None,
        provision_timeout=None,
        instance_count=1,
    )
    assert choice.instance_pools == ("ml.g5.xlarge", "ml.g6.xlarge")
    assert choice.instance_type == "ml.g5.xlarge" and choice.provision_timeout_seconds == 600
    assert choice.errors == () and not choice.instance_type_given


def test_the_prop_wins_over_the_declaration() -> None:
    choice = hp.choose_instances(
        ModelArtifacts.from_manifest(EXAMPLE, "classifier"),
        instance_type="ml.g6.2xlarge",
        instance_pools=None,
        provision_timeout=None,
        instance_count=2,
    )
    assert (choice.instance_type, choice.instance_pools, choice.instance_count) == ("ml.g6.2xlarge", (), 2)
    assert choice.instance_info is not None and choice.instance_info.gpu_count == 1
