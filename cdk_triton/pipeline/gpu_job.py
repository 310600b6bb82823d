"""Launch the GPU job (TensorRT build, GPU check) as a SageMaker Processing or Training job on the endpoint's type.

Run in a CPU CodeBuild step of the pipeline (boto3 and the standard library only, so it also runs as
a plain script: ``python cdk_triton/pipeline/gpu_job.py ...``):

1. preflight the job quota (``<type> for processing job usage`` / ``... training job usage``) through
   Service Quotas: a quota of 0 is a clear error naming the quota; no permission to read it only warns;
2. pack the source directory into ``<prefix>pipeline/gpu-build/<job>/source.tar.gz``;
3. create the job: the GPU build image runs, through its own entrypoint (the NGC entrypoint, which
   sets up the CUDA compat libraries for forward compatibility: no ``ContainerEntrypoint`` is given,
   only ``ContainerArguments``), ``nvidia-smi`` (the host driver, in the job log) and then
   ``cdk-triton build --config <declaration> --formats tensorrt --upload --out <job output dir>``
   (unless ``--no-tensorrt``: a fleet without TensorRT models), then ``cdk-triton gpu-check`` (every
   GPU-placed model, all formats, on this GPU; a failure fails the job; unless ``--no-gpu-check``);
4. wait for it (a failed or stopped job is an error naming its FailureReason);
5. fetch its output (manifest.json and the plan directories, gpu-readings.json) into ``--out``: the
   step's output FileSet.
"""

from __future__ import annotations

import argparse
import io
import os
import shlex
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cdk_triton.config import formats

PROCESSING = "processing"
TRAINING = "training"
QUOTA_NAMES = {PROCESSING: "{} for processing job usage", TRAINING: "{} for training job usage"}
PROCESSING_SOURCE = "/opt/ml/processing/input/source"
PROCESSING_OUTPUT = "/opt/ml/processing/output"
TRAINING_SOURCE = "/opt/ml/input/data/source"
TRAINING_OUTPUT = "/opt/ml/model"
#: The NGC images' entrypoint (``ENTRYPOINT ["/opt/nvidia/nvidia_entrypoint.sh"]`` of
#: nvcr.io/nvidia/tritonserver): it puts the CUDA compat libraries on the library path when the host
#: driver is older than the image's CUDA. A step that overrides the entrypoint (CodeBuild runs its
#: commands in its own shell) runs the build through it explicitly.
NGC_ENTRYPOINT = "/opt/nvidia/nvidia_entrypoint.sh"
#: Written to the job log before the build: the host's GPU, driver and compute capability.
DRIVER_QUERY = "nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv"
#: Where the GPU check builds (its own output: the GPU build's manifest holds the TensorRT models only)
GPU_CHECK_OUT = "/tmp/cdk-triton-gpu-check"


def gpu_check_command(declaration: str, out: str) -> str:
    """``cdk-triton gpu-check`` on the job's GPU: every GPU-placed model of the declaration (all formats)
    run on CUDA at batch 1 and its max batch against eager; the readings go to ``<out>/gpu-readings.json``
    (never the manifest). A parity failure exits 1: the step fails and the deploy stops."""
    args = ["cdk-triton", "gpu-check", "--config", declaration, "--out", GPU_CHECK_OUT]
    args += ["--report", f"{out}/gpu-readings.json"]
    return " ".join(shlex.quote(a) for a in args)


SKIP_DIRS = {".git", "node_modules", ".venv", "cdk.out", "__pycache__", ".mypy_cache", ".pytest_cache"}


class GpuJobError(RuntimeError):
    """The GPU build job could not run or failed. ``code`` is stable."""

    def __init__(self, message: str, *, code: str) -> None:
        self.code = code
        super().__init__(f"{message} [{code}]")


@dataclass(frozen=True, kw_only=True)
class JobRequest:
    """Everything the launcher needs; the CodeBuild step passes it on the command line."""

    kind: str
    instance_type: str
    image_uri: str
    role_arn: str
    bucket: str
    prefix: str  # the artifact prefix, '' or ending '/'
    declaration: str  # relative to the source root
    job_name: str
    kms_key_arn: str | None = None
    max_runtime_s: int = 3 * 3600
    volume_gib: int = 100
    build_models: bool = True  # build the GPU-only formats' models (TensorRT plans)
    gpu_check: bool = True  # run cdk-triton gpu-check (every GPU-placed model)

    @property
    def work_prefix(self) -> str:
        return f"{self.prefix}pipeline/gpu-build/{self.job_name}/"

    @property
    def source_key(self) -> str:
        return self.work_prefix + "source.tar.gz"

    @property
    def output_uri(self) -> str:
        return f"s3://{self.bucket}/{self.work_prefix}output/"


def build_script(spec: JobRequest) -> str:
    """The job's shell script: unpack the source, build the TensorRT formats into the job's output dir,
    run the GPU check (each part where the request asks for it; ``set -e``: a failure fails the job)."""
    src, out = (
        (PROCESSING_SOURCE, PROCESSING_OUTPUT)
        if spec.kind == PROCESSING
        else (TRAINING_SOURCE, TRAINING_OUTPUT)
    )
    cmd = " ".join(
        shlex.quote(a)
        for a in [
            "cdk-triton",
            "build",
            "--config",
            spec.declaration,
            "--formats",
            ",".join(formats.gpu_only_names()),
            "--upload",
            "--out",
            out,
        ]
    )
    steps = [f"{cmd} --no-progress"] if spec.build_models else []
    if spec.gpu_check:
        steps.append(gpu_check_command(spec.declaration, out))
    return (
        f"set -eu; {DRIVER_QUERY}; mkdir -p /tmp/src; tar -xzf {src}/source.tar.gz -C /tmp/src; "
        f"cd /tmp/src; {'; '.join(steps)}"
    )


def container_arguments(spec: JobRequest) -> list[str]:
    """The job container's arguments: the image's own entrypoint (never overridden) runs them."""
    return ["/bin/bash", "-c", build_script(spec)]


def quota_name(kind: str, instance_type: str) -> str:
    return QUOTA_NAMES[kind].format(instance_type)


def preflight_quota(quotas: Any, kind: str, instance_type: str, *, log: Any = print) -> float | None:
    """The job quota's value for ``instance_type``; GpuJobError(GpuJobQuotaZero) when it is below 1.

    Returns None (with a warning) when the quota cannot be read: no permission, or no quota of that name.
    """
    name = quota_name(kind, instance_type)
    try:
        pages = quotas.get_paginator("list_service_quotas").paginate(ServiceCode="sagemaker")
        for page in pages:
            for q in page.get("Quotas", []):
                if q.get("QuotaName") == name:
                    value = float(q.get("Value", 0))
                    if value < 1:
                        raise GpuJobError(
                            f"the SageMaker quota '{name}' ({q.get('QuotaCode')}) is {value:g} in this account and "
                            "region; request an increase in Service Quotas (or choose another GPU build kind)",
                            code="GpuJobQuotaZero",
                        )
                    return value
    except GpuJobError:
        raise
    except Exception as exc:  # noqa: BLE001 - a preflight must not hide the job's own error
        log(f"warning: could not read the quota '{name}': {exc}")
        return None
    log(f"warning: no quota named '{name}' found; the job may still be refused")
    return None


def pack_source(root: Path) -> bytes:
    """The source tree as a .tar.gz, without VCS, node_modules, virtual environments and build outputs."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for dirpath, dirnames, filenames in os.walk(root):
            rel_dir = Path(dirpath).relative_to(root)
            dirnames[:] = sorted(
                d
                for d in dirnames
                if d not in SKIP_DIRS and not (rel_dir == Path("build") and d.startswith("out"))
            )
            for f in sorted(filenames):
                tar.add(Path(dirpath) / f, arcname=str(rel_dir / f), recursive=False)
    return buf.getvalue()


def processing_request(spec: JobRequest) -> dict[str, Any]:
    output: dict[str, Any] = {
        "Outputs": [
            {
                "OutputName": "build",
                "S3Output": {
                    "S3Uri": spec.output_uri,
                    "LocalPath": PROCESSING_OUTPUT,
                    "S3UploadMode": "EndOfJob",
                },
            }
        ]
    }
    if spec.kms_key_arn:
        output["KmsKeyId"] = spec.kms_key_arn
    return {
        "ProcessingJobName": spec.job_name,
        "ProcessingInputs": [
            {
                "InputName": "source",
                "S3Input": {
                    "S3Uri": f"s3://{spec.bucket}/{spec.source_key}",
                    "LocalPath": PROCESSING_SOURCE,
                    "S3DataType": "S3Prefix",
                    "S3InputMode": "File",
                },
            }
        ],
        "ProcessingOutputConfig": output,
        "ProcessingResources": {
            "ClusterConfig": {
                "InstanceCount": 1,
                "InstanceType": spec.instance_type,
                "VolumeSizeInGB": spec.volume_gib,
            }
        },
        "StoppingCondition": {"MaxRuntimeInSeconds": spec.max_runtime_s},
        "AppSpecification": {
            "ImageUri": spec.image_uri,
            "ContainerArguments": container_arguments(spec),
        },
        "RoleArn": spec.role_arn,
    }


def training_request(spec: JobRequest) -> dict[str, Any]:
    output: dict[str, Any] = {"S3OutputPath": spec.output_uri}
    if spec.kms_key_arn:
        output["KmsKeyId"] = spec.kms_key_arn
    return {
        "TrainingJobName": spec.job_name,
        "AlgorithmSpecification": {
            "TrainingImage": spec.image_uri,
            "TrainingInputMode": "File",
            "ContainerArguments": container_arguments(spec),
        },
        "RoleArn": spec.role_arn,
        "InputDataConfig": [
            {
                "ChannelName": "source",
                "DataSource": {
                    "S3DataSource": {
                        "S3DataType": "S3Prefix",
                        "S3Uri": f"s3://{spec.bucket}/{spec.source_key}",
                        "S3DataDistributionType": "FullyReplicated",
                    }
                },
            }
        ],
        "OutputDataConfig": output,
        "ResourceConfig": {
            "InstanceType": spec.instance_type,
            "InstanceCount": 1,
            "VolumeSizeInGB": spec.volume_gib,
        },
        "StoppingCondition": {"MaxRuntimeInSeconds": spec.max_runtime_s},
    }


def wait(
    sagemaker: Any, spec: JobRequest, *, poll_s: float = 30.0, sleep: Any = time.sleep, log: Any = print
) -> None:
    """Poll the job until it ends; GpuJobError(GpuJobFailed) unless it completed."""
    while True:
        if spec.kind == PROCESSING:
            desc = sagemaker.describe_processing_job(ProcessingJobName=spec.job_name)
            status = desc["ProcessingJobStatus"]
        else:
            desc = sagemaker.describe_training_job(TrainingJobName=spec.job_name)
            status = desc["TrainingJobStatus"]
        if status == "Completed":
            return
        if status in ("Failed", "Stopped"):
            reason = desc.get("FailureReason", "no reason given")
            raise GpuJobError(
                f"{spec.kind} job {spec.job_name} on {spec.instance_type} ended {status}: {reason} "
                f"(logs: CloudWatch /aws/sagemaker/{'ProcessingJobs' if spec.kind == PROCESSING else 'TrainingJobs'})",
                code="GpuJobFailed",
            )
        log(f"{spec.job_name}: {status}")
        sleep(poll_s)


def safe_extract(tar: tarfile.TarFile, out: Path) -> None:
    for member in tar.getmembers():
        target = (out / member.name).resolve()
        if not str(target).startswith(str(out.resolve())) or member.issym() or member.islnk():
            raise GpuJobError(f"unsafe path in the job's output: {member.name}", code="GpuJobOutputInvalid")
    tar.extractall(out)  # noqa: S202 - members checked above


def fetch_output(s3: Any, spec: JobRequest, out: Path) -> Path:
    """Download the job's output into ``out``; return the path of its manifest.json (of its
    gpu-readings.json for a check-only job)."""
    out.mkdir(parents=True, exist_ok=True)
    base = spec.work_prefix + "output/"
    if spec.kind == TRAINING:
        body = s3.get_object(Bucket=spec.bucket, Key=f"{base}{spec.job_name}/output/model.tar.gz")[
            "Body"
        ].read()
        with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as tar:
            safe_extract(tar, out)
    else:
        token: str | None = None
        while True:
            kw: dict[str, Any] = {"Bucket": spec.bucket, "Prefix": base}
            if token:
                kw["ContinuationToken"] = token
            page = s3.list_objects_v2(**kw)
            for obj in page.get("Contents", []):
                rel = obj["Key"][len(base) :]
                if not rel or rel.endswith("/") or ".." in Path(rel).parts:
                    continue
                dest = out / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(s3.get_object(Bucket=spec.bucket, Key=obj["Key"])["Body"].read())
            token = page.get("NextContinuationToken")
            if not token:
                break
    manifest = out / ("manifest.json" if spec.build_models else "gpu-readings.json")
    if not manifest.is_file():
        raise GpuJobError(
            f"the job {spec.job_name} wrote no {manifest.name} under {spec.output_uri}",
            code="GpuJobOutputInvalid",
        )
    return manifest


def run(
    spec: JobRequest,
    *,
    source: Path,
    out: Path,
    clients: dict[str, Any],
    poll_s: float = 30.0,
    sleep: Any = time.sleep,
    log: Any = print,
) -> Path:
    """Preflight, upload the source, create the job, wait, fetch the output; the manifest's path."""
    if spec.kind not in QUOTA_NAMES:
        raise GpuJobError(
            f"unknown job kind {spec.kind!r}; use processing or training", code="UnknownGpuJobKind"
        )
    preflight_quota(clients["service-quotas"], spec.kind, spec.instance_type, log=log)
    put: dict[str, Any] = {"Bucket": spec.bucket, "Key": spec.source_key, "Body": pack_source(source)}
    if spec.kms_key_arn:
        put.update(ServerSideEncryption="aws:kms", SSEKMSKeyId=spec.kms_key_arn)
    clients["s3"].put_object(**put)
    sm = clients["sagemaker"]
    if spec.kind == PROCESSING:
        sm.create_processing_job(**processing_request(spec))
    else:
        sm.create_training_job(**training_request(spec))
    log(f"started {spec.kind} job {spec.job_name} on {spec.instance_type}")
    wait(sm, spec, poll_s=poll_s, sleep=sleep, log=log)
    return fetch_output(clients["s3"], spec, out)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--kind", required=True, choices=[PROCESSING, TRAINING])
    p.add_argument("--instance-type", required=True)
    p.add_argument("--image-uri", required=True)
    p.add_argument("--role-arn", required=True)
    p.add_argument("--bucket", required=True)
    p.add_argument("--prefix", default="")
    p.add_argument("--declaration", required=True, help="models.yaml, relative to --source")
    p.add_argument("--source", default=".", help="the source tree to build (default: .)")
    p.add_argument("--out", required=True, help="where the job's output (manifest.json, plans) is written")
    p.add_argument("--kms-key-arn", default=None)
    p.add_argument(
        "--job-name", default=None, help="default: cdk-triton-trt-<CODEBUILD_BUILD_NUMBER or time>"
    )
    p.add_argument("--max-runtime-s", type=int, default=3 * 3600)
    p.add_argument("--no-tensorrt", action="store_true", help="build no TensorRT plans (a GPU check only)")
    p.add_argument("--no-gpu-check", action="store_true", help="do not run cdk-triton gpu-check")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    suffix = os.environ.get("CODEBUILD_BUILD_NUMBER") or time.strftime("%Y%m%d%H%M%S")
    spec = JobRequest(
        kind=args.kind,
        instance_type=args.instance_type,
        image_uri=args.image_uri,
        role_arn=args.role_arn,
        bucket=args.bucket,
        prefix=args.prefix,
        declaration=args.declaration,
        job_name=(args.job_name or f"cdk-triton-trt-{suffix}")[:63],
        kms_key_arn=args.kms_key_arn or None,
        max_runtime_s=args.max_runtime_s,
        build_models=not args.no_tensorrt,
        gpu_check=not args.no_gpu_check,
    )
    if not spec.build_models and not spec.gpu_check:
        print("error: --no-tensorrt and --no-gpu-check leave the job nothing to do", file=sys.stderr)
        return 2
    import boto3

    clients = {n: boto3.client(n) for n in ("s3", "sagemaker", "service-quotas")}
    try:
        path = run(spec, source=Path(args.source), out=Path(args.out), clients=clients)
    except GpuJobError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"GPU job output: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
