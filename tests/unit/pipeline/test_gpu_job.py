"""The SageMaker GPU job launcher, with botocore's Stubber up to every API call."""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.response import StreamingBody
from botocore.stub import ANY, Stubber

from cdk_triton.pipeline import gpu_job
from cdk_triton.pipeline.gpu_job import GpuJobError, JobRequest

BUCKET = "artifacts-123456789012"


def _spec(kind: str = "processing", **kw: Any) -> JobRequest:
    return JobRequest(
        kind=kind,
        instance_type="ml.g6.xlarge" if kind == "processing" else "ml.p4d.24xlarge",
        image_uri="123456789012.dkr.ecr.us-east-1.amazonaws.com/cdk-assets:abc",
        role_arn="arn:aws:iam::123456789012:role/job",
        bucket=BUCKET,
        prefix="cdk-triton/",
        declaration="build/models.yaml",
        job_name="cdk-triton-trt-7",
        **kw,
    )


def _clients() -> dict[str, Any]:
    kw = {"region_name": "us-east-1", "aws_access_key_id": "x", "aws_secret_access_key": "y"}
    return {n: boto3.client(n, **kw) for n in ("s3", "sagemaker", "service-quotas")}


@contextmanager
def _stubbed(clients: dict[str, Any]) -> Iterator[tuple[Stubber, Stubber, Stubber]]:
    """Stubbers of the service-quotas, s3 and sagemaker clients, activated."""
    with (
        Stubber(clients["service-quotas"]) as sq,
        Stubber(clients["s3"]) as s3,
        Stubber(clients["sagemaker"]) as sm,
    ):
        yield sq, s3, sm


def _run(spec: JobRequest, source: Path, out: Path, clients: dict[str, Any]) -> Path:
    """The whole job, without waiting between polls and without its log."""
    return gpu_job.run(
        spec, source=source, out=out, clients=clients, sleep=lambda s: None, log=lambda m: None
    )


def _body(data: bytes) -> StreamingBody:
    return StreamingBody(io.BytesIO(data), len(data))


def _quota(stub: Stubber, kind: str, instance_type: str, value: float) -> None:
    stub.add_response(
        "list_service_quotas",
        {
            "Quotas": [
                {"QuotaName": "ml.m5.xlarge for processing job usage", "QuotaCode": "L-1", "Value": 4.0},
                {"QuotaName": gpu_job.quota_name(kind, instance_type), "QuotaCode": "L-GPU", "Value": value},
            ]
        },
        {"ServiceCode": "sagemaker"},
    )


@pytest.fixture()
def source(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    (root / "build" / "out").mkdir(parents=True)
    (root / "node_modules").mkdir()
    (root / "build" / "models.yaml").write_text("models: []\n")
    (root / "build" / "out" / "manifest.json").write_text("{}")
    (root / "node_modules" / "big.js").write_text("x")
    return root


def test_pack_source_leaves_out_build_outputs_and_node_modules(source: Path) -> None:
    with tarfile.open(fileobj=io.BytesIO(gpu_job.pack_source(source)), mode="r:gz") as tar:
        assert tar.getnames() == ["build/models.yaml"]


def test_processing_job_runs_the_tensorrt_build_on_the_instance_type(source: Path, tmp_path: Path) -> None:
    spec = _spec(kms_key_arn="arn:aws:kms:us-east-1:123456789012:key/k")
    clients = _clients()
    with _stubbed(clients) as (sq, s3, sm):
        _quota(sq, "processing", "ml.g6.xlarge", 1.0)
        s3.add_response(
            "put_object",
            {},
            {
                "Bucket": BUCKET,
                "Key": "cdk-triton/pipeline/gpu-build/cdk-triton-trt-7/source.tar.gz",
                "Body": ANY,
                "ServerSideEncryption": "aws:kms",
                "SSEKMSKeyId": spec.kms_key_arn,
            },
        )
        request = gpu_job.processing_request(spec)
        sm.add_response("create_processing_job", {"ProcessingJobArn": "arn:job"}, request)
        for status in ("InProgress", "Completed"):
            sm.add_response(
                "describe_processing_job",
                {
                    "ProcessingJobName": spec.job_name,
                    "ProcessingJobStatus": status,
                    "ProcessingResources": request["ProcessingResources"],
                    "AppSpecification": request["AppSpecification"],
                    "ProcessingJobArn": "arn:job",
                    "CreationTime": "2026-01-01T00:00:00Z",
                },
                {"ProcessingJobName": spec.job_name},
            )
        out_prefix = "cdk-triton/pipeline/gpu-build/cdk-triton-trt-7/output/"
        s3.add_response(
            "list_objects_v2",
            {
                "Contents": [
                    {"Key": out_prefix + "manifest.json"},
                    {"Key": out_prefix + "net_trt/1/model.plan"},
                ]
            },
            {"Bucket": BUCKET, "Prefix": out_prefix},
        )
        s3.add_response(
            "get_object",
            {"Body": _body(b'{"models": {}}')},
            {"Bucket": BUCKET, "Key": out_prefix + "manifest.json"},
        )
        s3.add_response(
            "get_object",
            {"Body": _body(b"PLAN")},
            {"Bucket": BUCKET, "Key": out_prefix + "net_trt/1/model.plan"},
        )
        path = _run(spec, source, tmp_path / "gpu", clients)
        for stub in (sq, s3, sm):
            stub.assert_no_pending_responses()
    assert json.loads(path.read_text()) == {"models": {}}
    assert (tmp_path / "gpu" / "net_trt" / "1" / "model.plan").read_bytes() == b"PLAN"
    # the image's own entrypoint (the NGC one: CUDA compat libraries) runs the build: never overridden
    assert "ContainerEntrypoint" not in request["AppSpecification"]
    bash, dash_c, script = request["AppSpecification"]["ContainerArguments"]
    assert (bash, dash_c) == ("/bin/bash", "-c")
    assert script.startswith("set -eu; " + gpu_job.DRIVER_QUERY + ";")  # the host driver, in the job log
    assert (
        "cdk-triton build --config build/models.yaml --formats tensorrt --upload --out /opt/ml/processing/output"
        in script
    )
    # then every GPU-placed model (all formats) on this GPU: parity on CUDA, the readings beside the manifest
    assert script.endswith(
        "; cdk-triton gpu-check --config build/models.yaml --out /tmp/cdk-triton-gpu-check "
        "--report /opt/ml/processing/output/gpu-readings.json"
    )
    assert request["ProcessingResources"]["ClusterConfig"]["InstanceType"] == "ml.g6.xlarge"
    assert request["ProcessingOutputConfig"]["KmsKeyId"] == spec.kms_key_arn


def test_training_job_for_types_processing_lacks(source: Path, tmp_path: Path) -> None:
    spec = _spec("training")
    clients = _clients()
    model = io.BytesIO()
    with tarfile.open(fileobj=model, mode="w:gz") as tar:
        data = b'{"models": {"net_trt": {}}}'
        info = tarfile.TarInfo("manifest.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with _stubbed(clients) as (sq, s3, sm):
        _quota(sq, "training", "ml.p4d.24xlarge", 2.0)
        s3.add_response("put_object", {}, {"Bucket": BUCKET, "Key": spec.source_key, "Body": ANY})
        request = gpu_job.training_request(spec)
        sm.add_response("create_training_job", {"TrainingJobArn": "arn:job"}, request)
        sm.add_response(
            "describe_training_job",
            {
                "TrainingJobName": spec.job_name,
                "TrainingJobArn": "arn:job",
                "TrainingJobStatus": "Completed",
                "SecondaryStatus": "Completed",
                "AlgorithmSpecification": request["AlgorithmSpecification"],
                "ResourceConfig": request["ResourceConfig"],
                "StoppingCondition": request["StoppingCondition"],
                "CreationTime": "2026-01-01T00:00:00Z",
                "ModelArtifacts": {"S3ModelArtifacts": "s3://x"},
            },
            {"TrainingJobName": spec.job_name},
        )
        key = f"{spec.work_prefix}output/{spec.job_name}/output/model.tar.gz"
        s3.add_response("get_object", {"Body": _body(model.getvalue())}, {"Bucket": BUCKET, "Key": key})
        path = _run(spec, source, tmp_path / "gpu", clients)
    assert "net_trt" in path.read_text()
    assert request["ResourceConfig"]["InstanceType"] == "ml.p4d.24xlarge"
    assert "--out /opt/ml/model" in request["AlgorithmSpecification"]["ContainerArguments"][2]


def test_fails_preflight_on_a_zero_quota_naming_it(source: Path, tmp_path: Path) -> None:
    clients = _clients()
    with Stubber(clients["service-quotas"]) as sq:
        _quota(sq, "processing", "ml.g6.xlarge", 0.0)
        with pytest.raises(GpuJobError) as exc:
            gpu_job.run(_spec(), source=source, out=tmp_path, clients=clients, log=lambda m: None)
    assert exc.value.code == "GpuJobQuotaZero"
    assert "ml.g6.xlarge for processing job usage" in str(exc.value) and "L-GPU" in str(exc.value)


def test_preflight_only_warns_without_permission() -> None:
    clients = _clients()
    logs: list[str] = []
    with Stubber(clients["service-quotas"]) as sq:
        sq.add_client_error("list_service_quotas", "AccessDeniedException", "no")
        assert (
            gpu_job.preflight_quota(clients["service-quotas"], "processing", "ml.g6.xlarge", log=logs.append)
            is None
        )
    assert "could not read the quota" in logs[0]


def test_fails_when_the_job_fails_with_its_reason() -> None:
    clients = _clients()
    spec = _spec()
    request = gpu_job.processing_request(spec)
    with Stubber(clients["sagemaker"]) as sm:
        sm.add_response(
            "describe_processing_job",
            {
                "ProcessingJobName": spec.job_name,
                "ProcessingJobStatus": "Failed",
                "FailureReason": "CapacityError: no ml.g6.xlarge",
                "ProcessingResources": request["ProcessingResources"],
                "AppSpecification": request["AppSpecification"],
                "ProcessingJobArn": "arn:job",
                "CreationTime": "2026-01-01T00:00:00Z",
            },
            {"ProcessingJobName": spec.job_name},
        )
        with pytest.raises(GpuJobError) as exc:
            gpu_job.wait(clients["sagemaker"], spec, sleep=lambda s: None, log=lambda m: None)
    assert exc.value.code == "GpuJobFailed" and "CapacityError" in str(exc.value)


def test_main_parses_the_step_command_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    def fake_run(spec: JobRequest, **kw: Any) -> Path:
        seen["spec"], seen["kw"] = spec, kw
        return tmp_path / "manifest.json"

    monkeypatch.setattr(gpu_job, "run", fake_run)
    monkeypatch.setenv("CODEBUILD_BUILD_NUMBER", "42")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    argv = "--kind processing --instance-type ml.g6.xlarge --image-uri i --role-arn r --bucket b --prefix p/"
    rc = gpu_job.main([*argv.split(), "--declaration", "build/models.yaml", "--out", str(tmp_path)])
    assert rc == 0
    assert seen["spec"].job_name == "cdk-triton-trt-42" and seen["spec"].prefix == "p/"


def test_training_job_runs_through_the_image_entrypoint_and_logs_the_driver() -> None:
    algo = gpu_job.training_request(_spec("training"))["AlgorithmSpecification"]
    assert "ContainerEntrypoint" not in algo
    assert algo["ContainerArguments"][:2] == ["/bin/bash", "-c"]
    assert "driver_version" in algo["ContainerArguments"][2]


def test_check_only_job_runs_gpu_check_and_no_tensorrt_build() -> None:
    script = gpu_job.build_script(_spec(build_models=False))
    assert "--formats tensorrt" not in script
    assert script.startswith("set -eu; " + gpu_job.DRIVER_QUERY + ";")  # set -e: a failed check fails the job
    assert script.endswith(
        "cd /tmp/src; cdk-triton gpu-check --config build/models.yaml --out /tmp/cdk-triton-gpu-check "
        "--report /opt/ml/processing/output/gpu-readings.json"
    )
    plans_only = gpu_job.build_script(_spec(gpu_check=False))
    assert "--formats tensorrt" in plans_only and "gpu-check" not in plans_only


def test_check_only_job_output_is_its_readings(tmp_path: Path) -> None:
    spec = _spec(build_models=False)
    clients = _clients()
    out_prefix = "cdk-triton/pipeline/gpu-build/cdk-triton-trt-7/output/"
    with Stubber(clients["s3"]) as s3:
        for _ in range(2):
            s3.add_response(
                "list_objects_v2",
                {"Contents": [{"Key": out_prefix + "gpu-readings.json"}]},
                {"Bucket": BUCKET, "Prefix": out_prefix},
            )
            s3.add_response(
                "get_object",
                {"Body": _body(b"{}")},
                {"Bucket": BUCKET, "Key": out_prefix + "gpu-readings.json"},
            )
        assert (
            gpu_job.fetch_output(clients["s3"], spec, tmp_path / "a") == tmp_path / "a" / "gpu-readings.json"
        )
        with pytest.raises(GpuJobError) as exc:  # a TensorRT job must bring its manifest
            gpu_job.fetch_output(clients["s3"], _spec(), tmp_path / "b")
    assert exc.value.code == "GpuJobOutputInvalid" and "manifest.json" in str(exc.value)


def test_main_passes_the_check_only_and_plans_only_flags(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: list[JobRequest] = []
    monkeypatch.setattr(
        gpu_job, "run", lambda spec, **kw: seen.append(spec) or tmp_path / "gpu-readings.json"
    )
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    argv = "--kind processing --instance-type ml.g6.xlarge --image-uri i --role-arn r --bucket b "
    argv += f"--declaration build/models.yaml --out {tmp_path}"
    assert gpu_job.main([*argv.split(), "--no-tensorrt"]) == 0
    assert gpu_job.main([*argv.split(), "--no-gpu-check"]) == 0
    assert [(s.build_models, s.gpu_check) for s in seen] == [(False, True), (True, False)]
    assert gpu_job.main([*argv.split(), "--no-tensorrt", "--no-gpu-check"]) == 2  # nothing to do
    assert len(seen) == 2
