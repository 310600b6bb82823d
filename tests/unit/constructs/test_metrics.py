"""The metric table: one row per official name, read by metric_*, the dashboard and the alarms."""

from __future__ import annotations

import re
from pathlib import Path

import aws_cdk as cdk

from cdk_triton.constructs import metrics as m

PACKAGE = Path(__file__).resolve().parents[3] / "cdk_triton" / "constructs"
#: Construct ids that happen to equal a metric name (ids are a public contract): the scaling policy.
CONSTRUCT_IDS = {"InvocationsPerInstance": 1}


def test_each_official_name_is_written_once_in_the_package() -> None:
    sources = "\n".join(p.read_text() for p in sorted(PACKAGE.glob("*.py")))
    for name in m.METRICS:
        assert len(re.findall(f'"{name}"', sources)) == 1 + CONSTRUCT_IDS.get(name, 0), name


def test_rows() -> None:
    assert m.MODEL_LATENCY.statistic == "p99" and m.MODEL_LATENCY.unit == "microseconds"
    assert m.GPU_UTILIZATION.namespace == m.HOST
    assert {s.name for s in m.METRICS.values() if s.multi_model} == {
        "LoadedModelCount",
        "ModelCacheHit",
        "ModelLoadingWaitTime",
        "ModelLoadingTime",
        "ModelDownloadingTime",
        "ModelUnloadingTime",
    }


def test_factory() -> None:
    stack = cdk.Stack()
    metric = m.metric_of(m.GPU_UTILIZATION, "ep", "AllTraffic")
    assert (metric.namespace, metric.metric_name, metric.statistic) == (m.HOST, "GPUUtilization", "Average")
    assert stack.resolve(metric.dimensions) == {"EndpointName": "ep", "VariantName": "AllTraffic"}
    assert m.metric_of(m.MODEL_LATENCY, "ep", "v", statistic="p50").statistic == "p50"
    assert m.widget_metric(m.INVOCATIONS, ["EndpointName", "ep"], id="inv") == [
        m.SAGEMAKER,
        "Invocations",
        "EndpointName",
        "ep",
        {"stat": "Sum", "id": "inv"},
    ]
    assert m.alarm_metric(m.MODEL_LATENCY) == {"namespace": m.SAGEMAKER, "metric_name": "ModelLatency"}
    assert m.dimension_list("ep", "v") == [
        {"name": "EndpointName", "value": "ep"},
        {"name": "VariantName", "value": "v"},
    ]
