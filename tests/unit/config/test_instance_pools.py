"""instance_pools: in models.yaml: parsed with coded errors at its YAML location, refused through the
rows, carried by the manifest, and read back as the construct's default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cdk_triton.config import modes
from cdk_triton.config.declaration.endpoint import EndpointSpec
from cdk_triton.config.instance_pools import PoolValues
from cdk_triton.config.manifest import ManifestError, _endpoint_entry
from cdk_triton.config.parse import Errors
from cdk_triton.config.serialize import json_ready
from tests.unit.config.manifest_support import fail, sme_entry

TYPES = ["ml.g5.xlarge", "ml.g6.xlarge"]


def _spec(mode: str, block: object, types: list[str] = TYPES) -> tuple[EndpointSpec | None, list[str]]:
    errs = Errors("models.yaml")
    d = {"name": "a", "mode": mode, "instance_types": types, "models": ["m"], "instance_pools": block}
    return EndpointSpec.from_dict(d, "endpoints[0]", errs), [str(e) for e in errs.items]


def test_a_list_and_a_mapping_declare_the_same_pools() -> None:
    spec, errs = _spec("single", TYPES)
    assert errs == [] and spec is not None and spec.instance_pools == PoolValues(instance_types=tuple(TYPES))
    spec, errs = _spec("single", {"instance_types": TYPES, "provision_timeout_s": 900})
    assert errs == [] and spec is not None
    assert spec.instance_pools == PoolValues(instance_types=tuple(TYPES), provision_timeout_s=900)


@pytest.mark.parametrize(
    ("block", "where"),
    [
        ({"instance_types": TYPES, "provision_timeout_s": 60}, "instance_pools.provision_timeout_s"),
        (["ml.g5.xlarge", "ml.g5.xlarge"], "instance_pools"),
        (["ml.g5.xlarge", "ml.p4d.24xlarge"], "instance_pools.instance_types[1]"),
    ],
)
def test_values_outside_limits_are_coded_at_their_key(block: object, where: str) -> None:
    _, errs = _spec("SingleModel", block)
    assert errs and all("[InvalidInstancePools]" in e for e in errs)
    assert any(f"endpoints[0].{where}" in e for e in errs)


def test_refused_on_multi_model_citing_the_guide() -> None:
    _, errs = _spec("MultiModel", TYPES)
    [err] = [e for e in errs if "instance_pools" in e]
    assert "[InstancePoolsOnMultiModel]" in err and "realtime-endpoints-heterogeneous" in err
    assert modes.INFERENCE_COMPONENTS.refusal("instance_pools") is None  # the guide documents them there


def test_components_endpoints_declare_pools() -> None:
    spec, errs = _spec("InferenceComponents", {"instance_types": TYPES, "provision_timeout_s": 900})
    assert errs == [] and spec is not None
    assert spec.instance_pools == PoolValues(instance_types=tuple(TYPES), provision_timeout_s=900)


def test_the_manifest_carries_the_pools() -> None:
    values = PoolValues(instance_types=tuple(TYPES), provision_timeout_s=600)
    raw = sme_entry(TYPES, instance_pools=json.loads(json.dumps(json_ready(values))))
    assert _endpoint_entry("a", raw, fail).instance_pools == values
    raw["instance_pools"] = {"instance_types": TYPES, "provision_timeout_s": 7200}
    with pytest.raises(ManifestError, match="VariantInstanceProvisionTimeoutInSeconds"):
        _endpoint_entry("a", raw, fail)


def test_the_construct_defaults_to_the_manifests_pools(tmp_path: Path) -> None:
    from cdk_triton.constructs import ModelArtifacts, TritonEndpoint
    from tests.unit.constructs.support import EXAMPLE, new_stack, only, template

    data = json.loads(EXAMPLE.read_text())
    data["endpoints"]["classifier"]["instance_pools"] = {"instance_types": TYPES, "provision_timeout_s": 600}
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(data))
    stack = new_stack()
    TritonEndpoint(stack, "Ep", artifacts=ModelArtifacts.from_manifest(str(path), "classifier"))
    variant = only(template(stack), "AWS::SageMaker::EndpointConfig")["Properties"]["ProductionVariants"][0]
    assert [p["InstanceType"] for p in variant["InstancePools"]] == TYPES
    assert variant["VariantInstanceProvisionTimeoutInSeconds"] == 600
