"""The MME working-set warning at its edge, and the loading alarms TritonAlarms adds to an MME."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Annotations, Match

from cdk_triton.config import residency
from cdk_triton.config.manifest import Manifest
from cdk_triton.constructs import ModelArtifacts, TritonAlarms, TritonEndpoint
from cdk_triton.constructs.checks.working_set import WARNING_ID, check_working_set
from cdk_triton.errors import TritonValidationError
from tests.unit.constructs.support import EXAMPLE, big_mme_manifest, manifest_with, new_stack, template

# the server of these archives loads their formats' backends only (gpu_costs.server_costs)
_M = big_mme_manifest(1)
_FORMATS = {_M.models[m].format for t in _M.endpoint("multi").target_models.values() for m in t.models}
USABLE = residency.usable_memory("ml.g5.xlarge", sorted(_FORMATS))
assert USABLE is not None


def _sized(total: int, n: int = 6) -> Manifest:
    """An MME of ``n`` TargetModels with memory recorded (measured): ``total`` GPU bytes together."""
    m = big_mme_manifest(n)
    sizes = [total // n] * n
    sizes[0] += total - sum(sizes)
    sized = {
        f"model_{i:04d}": replace(m.models[f"model_{i:04d}"], memory_bytes=b, memory_source="measured")
        for i, b in enumerate(sizes)
    }
    return replace(m, models={**m.models, **sized})


def _warnings(total: int, count: int) -> list[Any]:
    stack = new_stack()
    TritonEndpoint(
        stack,
        "Multi",
        artifacts=ModelArtifacts.from_manifest(_sized(total), "multi"),
        instance_type="ml.g5.xlarge",
        instance_count=count,
    )
    found = Annotations.from_stack(stack).find_warning("*", Match.string_like_regexp(".*"))
    return [w for w in found if WARNING_ID in str(w.entry.data)]


@pytest.mark.parametrize("count", [1, 3])
def test_working_set_warns_one_byte_past_the_instances_usable_memory(count: int) -> None:
    assert _warnings(count * USABLE.gpu_bytes, count) == []
    (warning,) = _warnings(count * USABLE.gpu_bytes + 1, count)
    text = str(warning.entry.data)
    assert f"at least {count + 1} instances" in text and f"{count} x ml.g5.xlarge" in text
    assert "measured" in text


def test_working_set_names_a_model_bigger_than_any_instance() -> None:
    m = _sized(3 * USABLE.gpu_bytes, n=2)  # each of the two holds 1.5 instances
    entry = m.endpoint("multi")
    ((wid, message),) = check_working_set("ml.g5.xlarge", 5, entry.target_models, m.models)
    assert wid == WARNING_ID and "model_0000, model_0001 fit(s) no ml.g5.xlarge" in message


def test_working_set_of_a_v1_manifest_falls_back_on_the_archive_bytes() -> None:
    m = manifest_with()  # schema 1: no memory, no size_bytes: the archives (3000 bytes) count
    entry = m.endpoint("multi")
    assert check_working_set("ml.g5.xlarge", 1, entry.target_models, m.models) == []
    assert check_working_set("ml.m5.xlarge", 1, entry.target_models, m.models) == []  # not in the table


def _alarms(endpoint: str, **kw: Any) -> tuple[TritonAlarms, Any]:
    stack = new_stack()
    ep = TritonEndpoint(
        stack, "Ep", artifacts=ModelArtifacts.from_manifest(EXAMPLE, endpoint), instance_type="ml.g5.xlarge"
    )
    alarms = TritonAlarms(stack, "Alarms", endpoint=ep, **kw)
    return alarms, template(stack)


def test_mme_gets_cache_hit_and_loading_wait_alarms() -> None:
    alarms, tpl = _alarms("multi", cache_hit_ratio=0.9, model_loading_wait=cdk.Duration.millis(500))
    assert alarms.cache_hit_alarm is not None and alarms.loading_wait_alarm is not None
    tpl.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "MetricName": "ModelCacheHit",
            "Namespace": "AWS/SageMaker",
            "Statistic": "Average",
            "Threshold": 0.9,
            "ComparisonOperator": "LessThanThreshold",
            "TreatMissingData": "notBreaching",
        },
    )
    tpl.has_resource_properties(
        "AWS::CloudWatch::Alarm",
        {
            "MetricName": "ModelLoadingWaitTime",
            "Statistic": "Average",
            "Threshold": 500_000,
            "ComparisonOperator": "GreaterThanThreshold",
        },
    )
    assert len(alarms.alarms) == 5


def test_loading_alarms_are_left_out_of_an_sme_and_when_disabled() -> None:
    alarms, tpl = _alarms("classifier")
    assert alarms.cache_hit_alarm is None and len(alarms.alarms) == 3
    alarms, tpl = _alarms("multi", mme_loading_alarms=False)
    assert alarms.cache_hit_alarm is None and alarms.loading_wait_alarm is None
    tpl.resource_properties_count_is("AWS::CloudWatch::Alarm", {"MetricName": "ModelCacheHit"}, 0)


@pytest.mark.parametrize(
    ("kw", "prop"),
    [
        ({"cache_hit_ratio": 0.0}, "cache_hit_ratio"),
        ({"cache_hit_ratio": 1.5}, "cache_hit_ratio"),
        ({"model_loading_wait": cdk.Duration.millis(0)}, "model_loading_wait"),
    ],
)
def test_fails_loading_alarm_thresholds_out_of_range(kw: dict[str, Any], prop: str) -> None:
    with pytest.raises(TritonValidationError) as info:
        _alarms("multi", **kw)
    assert info.value.code == "InvalidAlarmThreshold" and info.value.prop == prop
