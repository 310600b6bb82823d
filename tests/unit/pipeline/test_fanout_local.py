"""The fan-out's plan, shard and merge steps run locally: the buildspecs' exact command strings (bash, from
``FanOutCommands``, which test_fanout checks against the synthesized buildspecs) over a tiny declaration
of python models, each step in a fresh copy of the source as CodeBuild runs it, S3 on a moto server.

Not run here: the install phase (the source download with the AWS CLI, pip) and the SageMaker jobs of
TensorRT shards (the same ``--shard`` build with ``--formats tensorrt`` on a GPU).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cdk_triton.builder import commands as build_commands
from cdk_triton.config import layout
from cdk_triton.pipeline.fanout import FanOutCommands
from tests.moto_server import client, moto_server
from tests.unit.builder.helpers import python_model, write_decl
from tests.unit.pipeline.support import ROOT

BUCKET = "fanout-local"
PREFIX = "cdk-triton/"
REVISION = "e83c5163316f89bfbde7d9ab23ca2e25604af290"
ENDPOINTS = """
  - name: m
    mode: MultiModel
    instance_types: [ml.m5.xlarge]
    models: [p0, p1, p2]
  - name: s
    mode: SingleModel
    instance_types: [ml.m5.xlarge]
    models: [p3]
"""


def _build_flags() -> set[str]:
    parser = argparse.ArgumentParser()
    build_commands.register(parser.add_subparsers())
    (build,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {s for a in build.choices["build"]._actions for s in a.option_strings}


pytestmark = pytest.mark.skipif(
    not {"--shard", "--list-shards"} <= _build_flags(),
    reason="cdk-triton build has no --shard / --list-shards yet (issue 22 item 2, the fleet-build branch): "
    "the fan-out's commands call them",
)


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with moto_server(host="localhost") as url:  # moto would read '127' of 127.0.0.1 as a bucket name
        client("s3", url).create_bucket(Bucket=BUCKET)
        yield url


def _run(lines: list[str], cwd: Path, env: dict[str, str]) -> None:
    for line in lines:
        done = subprocess.run(
            ["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"


def _start(lines: list[str], cwd: Path, env: dict[str, str]) -> tuple[str, subprocess.Popen[str]]:
    script = " && ".join(f"( {line} )" for line in lines)
    return script, subprocess.Popen(
        ["bash", "-c", script], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def _wait(started: tuple[str, subprocess.Popen[str]]) -> None:
    script, proc = started
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, f"{script}\n{out}"


def _machine(src: Path, name: str) -> Path:
    """A fresh copy of the source, as one CodeBuild build sees it (the venv linked, not installed)."""
    where = src.parent / name
    shutil.copytree(src, where, ignore=shutil.ignore_patterns("out", "build"))
    (where / ".venv").symlink_to(ROOT / ".venv")
    return where


def test_plan_shards_and_merge_commands_build_every_model_from_real_shard_outputs(
    tmp_path: Path, endpoint: str
) -> None:
    import boto3

    src = tmp_path / "src"
    body = "".join(python_model(f"p{i}") for i in range(4))
    write_decl(src, body, endpoints=ENDPOINTS, location=f"s3://{BUCKET}/{PREFIX}")
    run = layout.fanout_run_id(REVISION)
    env: dict[str, str] = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "PYTHONPATH": str(ROOT),  # this checkout's cdk_triton, not the venv's install
        "PYTHONDONTWRITEBYTECODE": "1",
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_ACCESS_KEY_ID": "x",
        "AWS_SECRET_ACCESS_KEY": "x",
        "AWS_DEFAULT_REGION": "us-east-1",
        "ARTIFACT_BUCKET": BUCKET,
        "CDK_TRITON_ARTIFACT_LOCATION": f"s3://{BUCKET}/{PREFIX}",
        "CODEBUILD_RESOLVED_SOURCE_VERSION": REVISION,
        "FANOUT_RUN": run,
    }
    cmds = FanOutCommands(declaration="models.yaml", prefix=PREFIX, shards=2)
    s3: Any = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="x",
                           aws_secret_access_key="x")  # fmt: skip

    _run(cmds.assign_shards(), _machine(src, "plan"), env)
    items = json.loads(
        s3.get_object(Bucket=BUCKET, Key=PREFIX + layout.fanout_items_key(run, "cpu"))["Body"].read()
    )
    assert sorted(m for i in items for m in i["models"]) == ["p0", "p1", "p2", "p3"]
    assert [i["shard_arg"] for i in items] == [f"{i['shard']}/2" for i in items]

    shards = [  # the Distributed Map's children run at once
        _start(
            cmds.cpu_shard(),
            _machine(src, f"shard-{i['shard']}"),
            {**env, "SHARD": i["shard_arg"], "OUTPUT_KEY": i["output_key"]},
        )  # fmt: skip
        for i in items
    ]
    for shard in shards:
        _wait(shard)
    merge = _machine(src, "merge")
    _run(cmds.merge(), merge, env)
    assert (merge / "build/shards/merge-args.txt").read_text().count("--merge-manifest") == len(items)

    synth = _machine(src, "synth")
    _run([cmds.synth_fetch()], synth, env)
    merged = json.loads((synth / "out" / "manifest.json").read_text())
    assert sorted(merged["models"]) == ["p0", "p1", "p2", "p3"]
    assert sorted(merged["endpoints"]["m"]["target_models"]) == ["p0", "p1", "p2"]
    for target in merged["endpoints"]["m"]["target_models"].values():  # uploaded by the merge step
        key = target["s3_uri"].removeprefix(f"s3://{BUCKET}/")
        assert key.startswith(PREFIX + layout.mme_prefix_key("m"))
        assert s3.head_object(Bucket=BUCKET, Key=key)["ContentLength"] > 0
    summary = json.loads(
        s3.get_object(Bucket=BUCKET, Key=PREFIX + layout.fanout_failures_key(run))["Body"].read()
    )
    assert summary["failed_models"] == []
