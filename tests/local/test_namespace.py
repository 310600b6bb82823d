"""The private network namespace: how the ``unshare`` prefix is chosen, the loud fallback, and the
unprivileged user-namespace path (``unshare --user --map-root-user``) run for real as another user."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from cdk_triton.config.server_options import ServerOptions
from cdk_triton.local import server as server_mod
from cdk_triton.local.server import TritonServer

ROOT = Path(__file__).resolve().parents[2]
USER_NS = ("unshare", "--user", "--map-root-user", "--net", "--mount", "--propagation", "private")
ROOT_NS = ("unshare", "--net", "--mount", "--propagation", "private")


def _probe(monkeypatch: pytest.MonkeyPatch, *, euid: int, works: set[tuple[str, ...]]) -> tuple:
    tried: list[tuple[str, ...]] = []

    def run(argv, **_):
        prefix = tuple(argv[:-1])
        tried.append(prefix)
        return subprocess.CompletedProcess(argv, 0 if prefix in works else 1)

    monkeypatch.setattr(server_mod.os, "geteuid", lambda: euid)
    monkeypatch.setattr(server_mod.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(server_mod.subprocess, "run", run)
    return server_mod.namespace_prefix.__wrapped__(), tried


def test_root_uses_a_plain_network_and_mount_namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    prefix, tried = _probe(monkeypatch, euid=0, works={ROOT_NS, USER_NS})
    assert prefix == ROOT_NS and tried == [ROOT_NS]


def test_an_unprivileged_user_gets_a_user_namespace_mapped_to_root(monkeypatch: pytest.MonkeyPatch) -> None:
    prefix, tried = _probe(monkeypatch, euid=1000, works={USER_NS})
    assert prefix == USER_NS and tried == [USER_NS]  # plain unshare needs CAP_SYS_ADMIN: not tried


def test_root_falls_back_to_a_user_namespace(monkeypatch: pytest.MonkeyPatch) -> None:
    prefix, tried = _probe(monkeypatch, euid=0, works={USER_NS})  # e.g. root without CAP_SYS_ADMIN
    assert prefix == USER_NS and tried == [ROOT_NS, USER_NS]


def test_no_namespace_when_unshare_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    prefix, _ = _probe(monkeypatch, euid=1000, works=set())
    assert prefix is None


def test_the_launcher_runs_under_the_prefix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(server_mod, "namespace_prefix", lambda: USER_NS)
    server = TritonServer(options=ServerOptions(), model_repository=tmp_path, workdir=tmp_path)
    assert server.namespace == USER_NS and server.port == 8080  # the container's port, inside the namespace


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_without_a_namespace_the_exposure_is_said_loudly(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(server_mod, "namespace_prefix", lambda: None)
    monkeypatch.delenv("CDK_TRITON_REQUIRE_NAMESPACE")
    records = _Records()
    logging.getLogger("cdk_triton.local").addHandler(records)
    try:
        server = TritonServer(options=ServerOptions(), model_repository=tmp_path, workdir=tmp_path)
    finally:
        logging.getLogger("cdk_triton.local").removeHandler(records)
    assert server.namespace is None
    (message,) = records.messages
    assert "NO PRIVATE NETWORK NAMESPACE" in message and f"port {server.port} will bind 0.0.0.0" in message
    assert "reachable from other hosts" in message


def test_a_required_namespace_that_cannot_be_made_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(server_mod, "namespace_prefix", lambda: None)
    with pytest.raises(server_mod.LocalServerError) as info:
        TritonServer(options=ServerOptions(), model_repository=tmp_path, workdir=tmp_path)  # env requires it
    assert info.value.code == "NamespaceUnavailable"


PROBE = '''
import json, sys, tempfile
from pathlib import Path
import numpy as np
from cdk_triton.config.manifest import read_manifest
from cdk_triton.local import CpuOverlay, LocalEndpoint, build_request, parse_response
from cdk_triton.local.repository import tree_sha256
from cdk_triton.local.server import pids_in_group

MODEL = """
import triton_python_backend_utils as pb_utils
class TritonPythonModel:
    def execute(self, requests):
        return [pb_utils.InferenceResponse([pb_utils.Tensor("Y", pb_utils.get_input_tensor_by_name(r, "X")
                .as_numpy() * 2)]) for r in requests]
"""
with tempfile.TemporaryDirectory() as tmp:
    repo = Path(tmp) / "repo" / "double"
    (repo / "1").mkdir(parents=True)
    (repo / "config.pbtxt").write_text('name: "double" backend: "python" max_batch_size: 4 '
        'input { name: "X" data_type: TYPE_FP32 dims: 2 } output { name: "Y" data_type: TYPE_FP32 dims: 2 }')
    (repo / "1" / "model.py").write_text(MODEL)
    doc = {"schema_version": 1, "triton_version": "24.09", "uploaded": False, "artifact_location": {"bucket": "b"},
           "models": {}, "endpoints": {"e": {"name": "e", "mode": "SingleModel", "instance_types": ["ml.g5.xlarge"],
           "default_model": "double", "models": ["double"], "packaging": "directory", "local_path": "repo",
           "s3_uri": "s3://b/e/", "sha256": tree_sha256(repo.parent)}}}
    (Path(tmp) / "manifest.json").write_text(json.dumps(doc))
    manifest = read_manifest(Path(tmp) / "manifest.json")
    with LocalEndpoint(manifest, "e", overlay=CpuOverlay(instance_count=1), namespace=True, start_timeout=60) as ep:
        body, ctype = build_request({"X": np.ones((1, 2), np.float32)}, binary=True)
        status, headers, data = ep.invoke(body, ctype)
        out = parse_response(data, headers["content-type"])["Y"].tolist() if status == 200 else data.decode()
        namespace, pgid = list(ep.server.namespace), ep.server.proc.pid
    print(json.dumps({"namespace": namespace, "status": status, "out": out, "left": pids_in_group(pgid)}))
'''


def _unprivileged_python(home: Path) -> list[str] | None:
    """A venv for uid 65534 that sees this environment's packages, or None where it cannot be made."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    system_python = Path(f"/usr/bin/python{version}")
    if os.geteuid() != 0 or shutil.which("setpriv") is None or not system_python.exists():
        return None
    drop = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    venv = home / "venv"
    made = subprocess.run(
        [*drop, str(system_python), "-m", "venv", "--without-pip", str(venv)], capture_output=True, timeout=60
    )
    if made.returncode != 0:
        return None
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "cdk_triton_test.pth").write_text(f"{sysconfig.get_paths()['purelib']}\n{ROOT}\n")
    ok = subprocess.run(
        [*drop, str(venv / "bin" / "python"), "-c", "import numpy, cdk_triton"], capture_output=True
    )
    return [*drop, str(venv / "bin" / "python")] if ok.returncode == 0 else None


@pytest.mark.triton
def test_an_unprivileged_user_serves_inside_a_user_namespace() -> None:
    home = Path(tempfile.mkdtemp(prefix="cdk-triton-userns-"))
    try:
        home.chmod(0o777)
        python = _unprivileged_python(home)
        if python is None:
            pytest.skip("needs root, setpriv and a system python of this version to run as uid 65534")
        env = {k: v for k, v in os.environ.items() if k not in ("HOME", "PYTHONPATH")}
        proc = subprocess.run(
            [*python, "-c", PROBE], capture_output=True, text=True, timeout=120, cwd=home, env=env
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        assert result["namespace"] == list(USER_NS)
        assert result["status"] == 200 and result["out"] == [[2.0, 2.0]]
        assert result["left"] == []
    finally:
        shutil.rmtree(home, ignore_errors=True)
