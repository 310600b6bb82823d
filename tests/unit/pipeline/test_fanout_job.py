"""The fan-out's S3 side (plan items, shard outputs, merge inputs, failure summary) against moto's S3,
the quota preflight with botocore's Stubber, and the run id the shell and Python both compute."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from cdk_triton.config import layout
from cdk_triton.pipeline import fanout_job
from cdk_triton.pipeline.fanout_job import Store
from cdk_triton.pipeline.gpu_job import GpuJobError

BUCKET = "fanout-test-bucket"
PREFIX = "cdk-triton/"
RUN = "0123456789abcdef"
DECLARATION = """
triton_version: '24.09'
models:
  - {name: a, format: onnx}
  - {name: b, format: python}
  - {name: plan_a, format: tensorrt}
  - {name: c, format: torchscript}
  - {name: plan_b, format: tensorrt}
"""
ASSIGNMENT = {"shards": 2, "assignment": [["a", "plan_a", "b"], ["c", "plan_b"]]}


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    from moto import mock_aws

    for k, v in {
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
        "AWS_DEFAULT_REGION": "us-east-1",
    }.items():
        monkeypatch.setenv(k, v)
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket=BUCKET)
        yield client


def _quotas(value: float | None) -> Any:
    client = boto3.client("service-quotas", region_name="us-east-1")
    stub = Stubber(client)
    quotas = [] if value is None else [{"QuotaName": "ml.g6.xlarge for processing job usage", "Value": value}]
    stub.add_response("list_service_quotas", {"Quotas": quotas}, {"ServiceCode": "sagemaker"})
    stub.activate()
    return client


def _plan(s3: Any, tmp_path: Path, quotas: Any, log: list[str], gpu: bool = True) -> dict[str, Any]:
    decl = tmp_path / "models.yaml"
    decl.write_text(DECLARATION)
    return fanout_job.write_items(
        s3,
        Store(bucket=BUCKET, prefix=PREFIX),
        run=RUN,
        assignment=ASSIGNMENT,
        declaration=decl,
        gpu_kind="processing" if gpu else None,
        gpu_instance_type="ml.g6.xlarge" if gpu else None,
        sagemaker_concurrency=2,
        quotas=quotas,
        log=log.append,
    )


def test_plan_splits_each_shard_into_a_cpu_and_a_tensorrt_item_and_writes_both_lists(
    s3: Any, tmp_path: Path
) -> None:
    log: list[str] = []
    items = _plan(s3, tmp_path, _quotas(4), log)
    cpu = json.loads(
        s3.get_object(Bucket=BUCKET, Key=PREFIX + layout.fanout_items_key(RUN, "cpu"))["Body"].read()
    )
    trt = json.loads(
        s3.get_object(Bucket=BUCKET, Key=PREFIX + layout.fanout_items_key(RUN, "tensorrt"))["Body"].read()
    )
    assert cpu == items["cpu"] and trt == items["tensorrt"]
    assert [(i["shard_arg"], i["models"]) for i in cpu] == [("0/2", ["a", "b"]), ("1/2", ["c"])]
    assert [(i["shard_arg"], i["models"]) for i in trt] == [("0/2", ["plan_a"]), ("1/2", ["plan_b"])]
    assert trt[1]["output_key"] == f"{PREFIX}pipeline/fanout/{RUN}/shards/1-tensorrt.tar.gz"
    assert "2 shards -> 2 CodeBuild builds, 2 processing jobs" in log[-1]


def test_plan_without_a_gpu_job_puts_every_model_in_the_cpu_items(s3: Any, tmp_path: Path) -> None:
    items = _plan(s3, tmp_path, None, [], gpu=False)
    assert items["tensorrt"] == [] and [i["models"] for i in items["cpu"]] == [
        ["a", "plan_a", "b"],
        ["c", "plan_b"],
    ]


def test_plan_warns_when_the_job_quota_is_below_the_maps_concurrency(s3: Any, tmp_path: Path) -> None:
    log: list[str] = []
    _plan(s3, tmp_path, _quotas(1), log)
    assert any(
        "allows 1 concurrent processing jobs" in line and "retried with backoff" in line for line in log
    )


def test_fails_plan_when_the_job_quota_is_zero_before_writing_the_lists(s3: Any, tmp_path: Path) -> None:
    with pytest.raises(GpuJobError) as exc:
        _plan(s3, tmp_path, _quotas(0), [])
    assert exc.value.code == "GpuJobQuotaZero" and "ml.g6.xlarge for processing job usage" in str(exc.value)
    assert "Contents" not in s3.list_objects_v2(Bucket=BUCKET)


def _shard_output(s3: Any, item: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / f"out-{item['shard']}-{item['kind']}"
    (out / "onnx").mkdir(parents=True)
    (out / "manifest.json").write_text(json.dumps({"models": item["models"]}))
    (out / "onnx" / "model.onnx").write_bytes(b"\x00bytes")
    fanout_job.put_dir(s3, Store(bucket=BUCKET, prefix=PREFIX), out, item["output_key"])


def test_fetch_downloads_every_shard_output_and_writes_the_merge_arguments(s3: Any, tmp_path: Path) -> None:
    items = _plan(s3, tmp_path, _quotas(4), [])
    for item in items["cpu"] + items["tensorrt"]:
        _shard_output(s3, item, tmp_path)
    out = tmp_path / "shards"
    assert fanout_job.fetch(s3, Store(bucket=BUCKET, prefix=PREFIX), RUN, out, log=lambda *_: None) == 0
    args = (out / "merge-args.txt").read_text().split()
    assert "--build-missing" not in args  # every shard there: the set is complete
    assert args[::2] == ["--merge-manifest"] * 4
    assert args[1::2] == [
        str(out / f"{i}/manifest.json") for i in ("0-cpu", "0-tensorrt", "1-cpu", "1-tensorrt")
    ]
    assert (out / "1-tensorrt" / "onnx" / "model.onnx").read_bytes() == b"\x00bytes"
    summary = json.loads(
        s3.get_object(Bucket=BUCKET, Key=PREFIX + layout.fanout_failures_key(RUN))["Body"].read()
    )
    assert summary["failed_models"] == [] and summary["shards"] == 4


def test_fetch_leaves_a_failed_cpu_shard_to_the_merge_build_and_names_its_models(
    s3: Any, tmp_path: Path
) -> None:
    items = _plan(s3, tmp_path, _quotas(4), [])
    for item in items["cpu"][1:] + items["tensorrt"]:
        _shard_output(s3, item, tmp_path)
    log: list[str] = []
    out = tmp_path / "shards"
    assert fanout_job.fetch(s3, Store(bucket=BUCKET, prefix=PREFIX), RUN, out, log=log.append) == 0
    assert "0-cpu" not in (out / "merge-args.txt").read_text()
    # a merge of shard manifests refuses an incomplete set: the fan-out says it builds them (issue 30)
    assert (out / "merge-args.txt").read_text().split()[-1] == "--build-missing"
    assert "  shard 0/2 (cpu): a, b" in log and any("built by the merge step" in line for line in log)
    summary = json.loads(
        s3.get_object(Bucket=BUCKET, Key=PREFIX + layout.fanout_failures_key(RUN))["Body"].read()
    )
    assert summary["failed_models"] == ["a", "b"]


def test_fails_fetch_when_a_tensorrt_shard_has_no_output(s3: Any, tmp_path: Path) -> None:
    items = _plan(s3, tmp_path, _quotas(4), [])
    for item in items["cpu"] + items["tensorrt"][:1]:
        _shard_output(s3, item, tmp_path)
    log: list[str] = []
    code = fanout_job.fetch(s3, Store(bucket=BUCKET, prefix=PREFIX), RUN, tmp_path / "shards", log=log.append)
    assert code == fanout_job.EXIT_TENSORRT_SHARD_FAILED
    assert any("cannot be built on the merge step's CPU" in line and "1/2: plan_b" in line for line in log)


def test_get_of_a_missing_object_is_false_and_writes_nothing(s3: Any, tmp_path: Path) -> None:
    assert not fanout_job.get_dir(s3, Store(bucket=BUCKET, prefix=PREFIX), "nope.tar.gz", tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_the_shell_and_python_compute_the_same_run_id() -> None:
    revision = "3sL4kqtJlcpXroDTDmJ+rmSpXd3dIbrHY+MTRCxf3vjVBH40Nr8X8gdRQBpUMLUo"
    shell = subprocess.run(
        ["bash", "-c", f"echo {layout.fanout_run_id_shell()}"],
        env={"CODEBUILD_RESOLVED_SOURCE_VERSION": revision, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert shell == layout.fanout_run_id(revision) and len(shell) == layout.FANOUT_RUN_HEX
