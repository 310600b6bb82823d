"""Shared, expensive fixtures of the local endpoint tests: built artifacts and running servers.

Every server start costs seconds, so endpoints are session-scoped. The session ends with a check
that no tritonserver, namespace launcher or backend stub started by the tests is left behind and
that no shared-memory region of ours remains.
"""

from __future__ import annotations

import glob
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from cdk_triton.config.manifest import Manifest, read_manifest
from cdk_triton.local import CpuOverlay, LocalEndpoint
from tests.local import artifacts

# Every process the tests start inherits this marker (the server environment copies os.environ).
SESSION_MARK = f"CDK_TRITON_TEST_SESSION={uuid.uuid4().hex}"
os.environ["CDK_TRITON_TEST_SESSION"] = SESSION_MARK.split("=", 1)[1]
# Shared memory of this session's servers (also those of a `serve` subprocess) carries this prefix:
# other sessions running the local tests at the same time have their own.
SHM_PREFIX = f"cdk_triton_t{os.environ['CDK_TRITON_TEST_SESSION'][:8]}_"
os.environ["CDK_TRITON_SHM_PREFIX"] = SHM_PREFIX
# Tests that open Triton's SageMaker port (0.0.0.0) do it inside a private network namespace, or fail.
os.environ["CDK_TRITON_REQUIRE_NAMESPACE"] = "1"


def _ours() -> set[int]:
    """Live processes started by this test session (servers, launchers, stubs, detached serve)."""
    pids = set()
    mark = SESSION_MARK.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            if mark not in Path(f"/proc/{entry}/environ").read_bytes().split(b"\0"):
                continue
            # only our serving processes: the server, its stubs, the namespace launcher, `serve`
            # (other suites' children, such as the jsii node runtime, inherit the mark too)
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            if b"triton" not in cmdline:
                continue
            # multiprocessing's resource tracker lives as long as the test process once a build ran
            # `--jobs` workers; in a checkout named cdk-triton its interpreter path says "triton" too
            if b"from multiprocessing" in cmdline:
                continue
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            pids.add(int(entry))
    return pids


@pytest.fixture(scope="session", autouse=True)
def no_process_left_behind() -> Iterator[None]:
    yield
    left = _ours()
    assert not left, f"processes left behind by the local endpoint tests: {sorted(left)}"
    shm_left = glob.glob(f"/dev/shm/{SHM_PREFIX}*")
    assert not shm_left, f"shared memory left behind: {sorted(shm_left)}"


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[artifacts.Built, Path]:
    return artifacts.build(tmp_path_factory.mktemp("built"))


@pytest.fixture(scope="session")
def manifest(built: tuple[artifacts.Built, Path]) -> Manifest:
    return read_manifest(built[1])


@pytest.fixture(scope="session")
def facts(built: tuple[artifacts.Built, Path]) -> artifacts.Built:
    return built[0]


@pytest.fixture(scope="session")
def sme(manifest: Manifest) -> Iterator[LocalEndpoint]:
    with LocalEndpoint(manifest, "local", overlay=CpuOverlay(instance_count=1)) as ep:
        yield ep


@pytest.fixture(scope="session")
def mme(manifest: Manifest) -> Iterator[LocalEndpoint]:
    with LocalEndpoint(manifest, "multi", overlay=CpuOverlay(instance_count=1)) as ep:
        yield ep


@pytest.fixture()
def boto_runtime():
    import boto3

    def make(url: str):
        return boto3.client(
            "sagemaker-runtime",
            endpoint_url=url,
            region_name="us-east-1",
            aws_access_key_id="x",
            aws_secret_access_key="x",
        )

    return make
