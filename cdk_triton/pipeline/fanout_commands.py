"""The shell commands of every fan-out step: the buildspecs hold exactly these lines (pure: no aws-cdk-lib).

``tests/unit/pipeline/test_fanout.py`` checks the synthesized buildspecs against them and
``tests/unit/pipeline/test_fanout_local.py`` runs them (S3 on moto). Keys come from
``cdk_triton.config.layout`` with the run id as a shell variable (``${FANOUT_RUN}``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

from cdk_triton.config import formats, layout
from cdk_triton.pipeline import gpu_job

CPU_FORMATS = ",".join(formats.where(gpu_only=False))
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
SHARD_OUT = "build/out-shard"
SHARD_DIR = "build/shards"
ASSIGNMENT = "fanout-assignment.json"
#: Where the fan-out's GPU check job writes its readings (uploaded as one tar.gz)
GPU_CHECK_REPORT_DIR = "/tmp/cdk-triton-gpu-readings"
INPUT_FILE = "fanout-input.json"
VENV_INSTALL = [
    "python3 -m venv .venv",
    f".venv/bin/pip install --extra-index-url {TORCH_CPU_INDEX} -r requirements.txt",
    ".venv/bin/pip install --no-deps -e .",
]
#: What the source pack leaves out (the same folders as the GPU job launcher's pack_source).
PACK_EXCLUDES = ["./.git", "./node_modules", "./.venv", "./cdk.out", "./build/out*"]


@dataclass(frozen=True, kw_only=True)
class FanOutCommands:
    """The shell commands of every fan-out step (the buildspecs hold exactly these; the tests run them)."""

    declaration: str
    prefix: str
    shards: int
    kms: bool = False
    gpu_kind: str | None = None
    gpu_instance_type: str | None = None
    sagemaker_concurrency: int = 1

    def _job(self, python: str = ".venv/bin/python") -> str:
        kms = ' --kms-key-arn "$ARTIFACT_KEY_ARN"' if self.kms else ""
        return f'{python} -m cdk_triton.pipeline.fanout_job --bucket "$ARTIFACT_BUCKET" --prefix "{self.prefix}"{kms}'

    @property
    def out_dir(self) -> str:
        return str(PurePosixPath(self.declaration).parent / "out")

    def fetch_source(self) -> str:
        key = self.prefix + layout.fanout_source_key("${FANOUT_RUN}")
        return f'aws s3 cp "s3://$ARTIFACT_BUCKET/{key}" /tmp/source.tar.gz --only-show-errors && tar -xzf /tmp/source.tar.gz && rm /tmp/source.tar.gz'

    def prepare(self) -> list[str]:
        run = f"RUN={layout.fanout_run_id_shell()}"
        key = self.prefix + layout.fanout_source_key("${RUN}")
        sse = ' --sse aws:kms --sse-kms-key-id "$ARTIFACT_KEY_ARN"' if self.kms else ""
        excludes = " ".join(f"--exclude='{e}'" for e in PACK_EXCLUDES)
        return [
            'test -n "$CODEBUILD_RESOLVED_SOURCE_VERSION" || { echo "error: CodePipeline passed no source '
            'revision (an S3 source needs a versioned bucket)"; exit 1; }',
            f"{run} && tar -czf /tmp/source.tar.gz {excludes} . && "
            f'aws s3 cp /tmp/source.tar.gz "s3://$ARTIFACT_BUCKET/{key}" --only-show-errors{sse}',
            f'{run} && printf \'{{"run":"%s"}}\' "$RUN" > {INPUT_FILE}',
        ]

    def assign_shards(self) -> list[str]:
        """The assignment step: list the shards, then write the run's item lists (``fanout_job plan``)."""
        gpu = ""
        if self.gpu_kind:
            gpu = (
                f" --gpu-kind {self.gpu_kind} --gpu-instance-type {self.gpu_instance_type} "
                f"--sagemaker-concurrency {self.sagemaker_concurrency}"
            )
        return [
            f".venv/bin/cdk-triton build --config {self.declaration} --list-shards {self.shards} > {ASSIGNMENT}",
            f'{self._job()} plan --run "$FANOUT_RUN" --assignment {ASSIGNMENT} --config {self.declaration}{gpu}',
        ]

    def cpu_shard(self) -> list[str]:
        # the shards skip the release-runtime check: the Merge runs it once over every model (one environment
        # of the release's runtimes instead of one per shard job; a refused model fails the Merge, so the run)
        return [
            f'.venv/bin/cdk-triton build --config {self.declaration} --shard "$SHARD" --formats {CPU_FORMATS} '
            f"--upload --out {SHARD_OUT} --no-progress --no-target-runtime",
            f'{self._job()} put --dir {SHARD_OUT} --key "$OUTPUT_KEY"',
        ]

    def gpu_shard_script(self, source_dir: str) -> str:
        """The SageMaker job's script (run by the image's own NGC entrypoint, as the GPU job launcher's)."""
        return (
            f"set -eu; {gpu_job.DRIVER_QUERY}; mkdir -p /tmp/src; tar -xzf {source_dir}/source.tar.gz -C /tmp/src; "
            f'cd /tmp/src; cdk-triton build --config {self.declaration} --shard "$SHARD" --formats {",".join(formats.gpu_only_names())} '
            f"--upload --out {SHARD_OUT} --no-progress; "
            f'{self._job("python3")} put --dir {SHARD_OUT} --key "$OUTPUT_KEY"'
        )

    def gpu_check_script(self, source_dir: str) -> str:
        """The GPU check job's script: ``cdk-triton gpu-check`` on every GPU-placed model of the whole
        declaration (a failure fails the job, so the run), then its readings to ``$OUTPUT_KEY``."""
        report = PurePosixPath(GPU_CHECK_REPORT_DIR)
        return (
            f"set -eu; {gpu_job.DRIVER_QUERY}; mkdir -p /tmp/src; tar -xzf {source_dir}/source.tar.gz -C /tmp/src; "
            f"cd /tmp/src; {gpu_job.gpu_check_command(self.declaration, str(report))}; "
            f'{self._job("python3")} put --dir {report} --key "$OUTPUT_KEY"'
        )

    def merge(self) -> list[str]:
        merged = self.prefix + layout.fanout_merged_key("${FANOUT_RUN}")
        return [
            f'{self._job()} fetch --run "$FANOUT_RUN" --out {SHARD_DIR}',
            f".venv/bin/cdk-triton build --config {self.declaration} --formats {CPU_FORMATS} --upload --no-progress "
            f"$(cat {SHARD_DIR}/merge-args.txt)",
            f'{self._job()} put --dir {self.out_dir} --key "{merged}"',
        ]

    def summary(self) -> list[str]:
        return [f'PYTHONPATH=. {self._job("python3")} summary --run "$FANOUT_RUN"']

    def synth_fetch(self) -> str:
        merged = self.prefix + layout.fanout_merged_key(layout.fanout_run_id_shell())
        return f'{self._job()} get --key "{merged}" --dir {self.out_dir}'
