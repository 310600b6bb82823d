"""The detached serve's lifecycle without a server: state files, status, stop (a stand-in process)."""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cdk_triton.errors import TritonValidationError
from cdk_triton.local import commands, detached


@pytest.fixture()
def serve_process() -> Iterator[subprocess.Popen[bytes]]:
    """A process in a session of its own, as ``detached.start`` runs ``serve``."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.wait()


def _state(pid: int, endpoint: str) -> detached.ServeState:
    return detached.ServeState(
        pid=pid, url="http://127.0.0.1:9", endpoint=endpoint, manifest="m.json", log="x.log"
    )


def test_published_state_is_private_and_reads_back(
    tmp_path: Path, serve_process: subprocess.Popen[bytes]
) -> None:
    state_dir = tmp_path / "state"
    state = _state(serve_process.pid, "classifier")
    detached.publish(state_dir, state)
    assert oct(state_dir.stat().st_mode & 0o777) == "0o700"
    assert oct(detached.state_path(state_dir, "classifier").stat().st_mode & 0o777) == "0o600"
    assert detached.read_state(state_dir, "classifier") == state
    assert state.invocations_url == "http://127.0.0.1:9/endpoints/classifier/invocations"
    assert detached.status(state_dir) == (state,)


def test_status_drops_a_gone_process_and_its_state_file(tmp_path: Path) -> None:
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    detached.publish(tmp_path, _state(int(gone.stdout), "old"))
    assert detached.status(tmp_path) == ()
    assert not detached.state_path(tmp_path, "old").exists()


def test_stop_ends_the_process_group_and_removes_the_state(
    tmp_path: Path, serve_process: subprocess.Popen[bytes]
) -> None:
    detached.publish(tmp_path, _state(serve_process.pid, "a"))
    detached.publish(tmp_path, _state(serve_process.pid, "b"))
    result = detached.stop(tmp_path, ["a", "b", "none"])
    assert result == detached.Stopped(stopped=("a", "b"), not_running=("none",))
    assert serve_process.wait(timeout=10) != 0
    assert not list(tmp_path.glob("*.json"))


def test_the_detached_command_line_parses_back_to_the_same_request(tmp_path: Path) -> None:
    request = detached.ServeRequest(
        manifest="out/manifest.json", port=8123, instance_count=1, memory_budget_mb=512, env=("A=1", "B=2")
    )
    argv = request.argv(["x", "y"], tmp_path)
    assert argv[:3] == [sys.executable, "-m", "cdk_triton.cli"]
    parser = argparse.ArgumentParser()
    commands.register(parser.add_subparsers())
    args = parser.parse_args(argv[3:])
    assert commands._serve_request(args) == dataclasses.replace(request, endpoints=("x", "y"))
    assert args.state_dir == str(tmp_path) and not args.detach


def test_only_a_serve_started_detached_publishes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(detached.CHILD_MARK, raising=False)
    assert detached.child_state_dir("s") is None
    monkeypatch.setenv(detached.CHILD_MARK, "1")
    assert detached.child_state_dir("s") == Path("s")


def test_fails_on_a_bad_container_setting_before_anything_starts(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "fixtures" / "manifests" / "example.json"
    request = detached.ServeRequest(manifest=str(example), env=("SAGEMAKER_TRITON_ALLOW_GRPC=yes",))
    with pytest.raises(TritonValidationError, match="SAGEMAKER_TRITON_ALLOW_GRPC"):
        detached.start(request, state_dir=tmp_path / "state")
    assert not (tmp_path / "state").exists()
