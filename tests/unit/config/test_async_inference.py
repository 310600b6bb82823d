"""The async: block: parsed with coded errors at its YAML location, refused through the rows, carried by
the manifest, and MaxConcurrentInvocationsPerInstance derived from instance groups and batching."""

from __future__ import annotations

import pytest

from cdk_triton.config import async_inference, modes
from cdk_triton.config.async_inference import AsyncValues
from cdk_triton.config.declaration.endpoint import EndpointSpec
from cdk_triton.config.manifest import ManifestError, _endpoint_entry
from cdk_triton.config.parse import Errors
from cdk_triton.config.serialize import json_ready
from tests.unit.config.manifest_support import fail, sme_entry


def _spec(mode: str, block: object) -> tuple[EndpointSpec | None, list[str]]:
    errs = Errors("models.yaml")
    d = {"name": "a", "mode": mode, "instance_types": ["ml.g5.xlarge"], "models": ["m"], "async": block}
    spec = EndpointSpec.from_dict(d, "endpoints[0]", errs)
    return spec, [str(e) for e in errs.items]


def test_an_empty_block_takes_every_default_on_a_single_model_endpoint() -> None:
    spec, errs = _spec("single", None)
    assert errs == [] and spec is not None and spec.async_inference == AsyncValues()
    assert spec.async_inference.min_instances == 0  # scales to zero unless told


@pytest.mark.parametrize("mode", [m.name for m in modes.MODES.values() if m.async_inference is not None])
def test_refused_where_the_row_refuses_naming_single_model(mode: str) -> None:
    _, errs = _spec(mode, {})
    [err] = errs
    assert "[AsyncNeedsSingleModel]" in err and "models.yaml: endpoints[0].async" in err
    assert "mode: SingleModel" in err


@pytest.mark.parametrize(
    ("block", "where"),
    [
        ({"max_concurrent_invocations_per_instance": 0}, "async.max_concurrent_invocations_per_instance"),
        ({"invocation_timeout_s": 3601}, "async.invocation_timeout_s"),
        ({"min_instances": 2, "max_instances": 1}, "async.max_instances"),
        ({"backlog_per_instance": -1}, "async.backlog_per_instance"),
    ],
)
def test_values_outside_limits_are_coded_at_their_key(block: dict[str, object], where: str) -> None:
    _, errs = _spec("SingleModel", block)
    [err] = errs
    assert "[InvalidAsyncInference]" in err and f"endpoints[0].{where}" in err


def test_unknown_key_and_wrong_type_are_reported() -> None:
    _, errs = _spec("SingleModel", {"max_instance": 2, "notifications": "yes"})
    assert any("[UnknownKey]" in e and "max_instances" in e for e in errs)
    assert any("[InvalidType]" in e and "notifications" in e for e in errs)


def test_the_manifest_carries_the_block_and_refuses_it_on_a_multi_model_entry() -> None:
    values = AsyncValues(max_instances=3, invocation_timeout_s=120)
    raw = sme_entry(["ml.g5.xlarge"], async_inference=json_ready(values))
    assert _endpoint_entry("a", raw, fail).async_inference == values
    mme = {"name": "a", "mode": "MultiModel", "instance_types": ["ml.g5.xlarge"], "s3_prefix": "s3://b/p/",
           "target_models": {}, "async_inference": {}}  # fmt: skip
    with pytest.raises(ManifestError, match="TargetModel"):
        _endpoint_entry("a", mme, fail)


def _cfg(count: int = 1, kind: str = "KIND_GPU", batch: int = 0, dynamic: bool = False) -> dict[str, object]:
    c: dict[str, object] = {"instance_group": [{"count": count, "kind": kind}], "max_batch_size": batch}
    if dynamic:
        c["dynamic_batching"] = {}
    return c


def test_concurrency_is_instances_times_the_dynamic_batch() -> None:
    assert async_inference.model_concurrency(_cfg(2, batch=8, dynamic=True), gpu_count=4) == 64
    assert async_inference.model_concurrency(_cfg(2, batch=8), gpu_count=1) == 2  # no batcher: one each
    assert async_inference.model_concurrency(_cfg(3, kind="KIND_CPU"), gpu_count=4) == 3
    configs = {
        "ens": {"platform": "ensemble", "ensemble_scheduling": {"step": [{"model_name": "pre"}, {"model_name": "net"}]}},
        "pre": _cfg(1, kind="KIND_CPU"),
        "net": _cfg(1, batch=8, dynamic=True),
    }  # fmt: skip
    assert async_inference.derived_max_concurrency(configs, "ens", 1) == 1  # the slowest step bounds it
    assert async_inference.derived_max_concurrency(configs, "net", 1) == 8
    assert async_inference.derived_max_concurrency({"x": _cfg(100, batch=64, dynamic=True)}, "x", 8) == 1000
