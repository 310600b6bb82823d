"""``cdk-triton serve --detach``, ``invoke``, ``bench`` and ``stop`` as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cdk_triton.cli import main

pytestmark = pytest.mark.triton


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cdk_triton.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_serve_detach_invoke_bench_stop(built, tmp_path: Path) -> None:
    manifest_path = str(built[1])
    out = _cli(
        "serve",
        "--manifest",
        manifest_path,
        "--endpoint",
        "local",
        "--endpoint",
        "multi",
        "--detach",
        "--instance-count",
        "1",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr + out.stdout
    try:
        state_dir = tmp_path / ".cdk-triton" / "local"
        state = json.loads((state_dir / "local.json").read_text())
        modes = {p.name: oct(p.stat().st_mode & 0o777) for p in [state_dir, *state_dir.iterdir()]}
        assert set(modes.values()) == {"0o700", "0o600"} and modes["local"] == "0o700", modes
        assert state["url"].startswith("http://127.0.0.1:")
        out = _cli("invoke", "--endpoint", "local", "--sample", "--binary", cwd=tmp_path)
        assert out.returncode == 0, out.stderr + out.stdout
        assert "sample response matches" in out.stdout and "top-" in out.stdout and " ms " in out.stdout
        out = _cli("invoke", "--endpoint", "multi", "--target-model", "ts", cwd=tmp_path)
        assert out.returncode == 0, out.stderr + out.stdout
        assert "OUTPUT__0" in out.stdout
        request = tmp_path / "request.json"
        request.write_text(
            json.dumps(
                {"inputs": [{"name": "RAW", "shape": [1, 8], "datatype": "UINT8", "data": list(range(8))}]}
            )
        )
        out = _cli("invoke", "--endpoint", "local", "--input", str(request), cwd=tmp_path)
        assert out.returncode == 0, out.stderr + out.stdout
        assert "SCORES float32 [1, 4]" in out.stdout
        out = _cli("bench", "--endpoint", "local", "--requests", "200", "--concurrency", "4", cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout.splitlines()[-1])["errors"] == 0
        out = _cli("serve", "--manifest", manifest_path, "--endpoint", "local", "--detach", cwd=tmp_path)
        assert out.returncode == 2 and "already served" in out.stderr
    finally:
        out = _cli("stop", cwd=tmp_path)
    assert out.returncode == 0 and "stopped local" in out.stdout and "stopped multi" in out.stdout
    assert not list((tmp_path / ".cdk-triton" / "local").glob("*.json"))


def test_invoke_without_a_running_endpoint_says_how_to_start_one(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["invoke", "--endpoint", "local"]) == 2
    assert "cdk-triton serve --endpoint local --detach" in capsys.readouterr().err


def test_serve_rejects_an_unknown_endpoint_before_starting(
    built, tmp_path: Path, monkeypatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["serve", "--manifest", str(built[1]), "--endpoint", "nope", "--detach"]) == 2
    assert "UnknownManifestEndpoint" in capsys.readouterr().err
