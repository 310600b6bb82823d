"""``cdk-triton serve --runtime``: the stand-ins in the release's own runtimes (target), the container hand-off."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from cdk_triton.cli import main
from cdk_triton.config import target_runtime as rules
from cdk_triton.local import runtime, target
from cdk_triton.local.errors import LocalServerError
from cdk_triton.runtimes import environments

EXAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "manifests" / "example.json"


def _install(tmp_path: Path) -> runtime.TritonInstall:
    return runtime.TritonInstall(binary=tmp_path, python_backend=tmp_path, stub=tmp_path, libs=tmp_path)


def test_stubs_run_the_release_environment_first_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(rules.STUB_PYTHON_VARIABLE, raising=False)
    plain = runtime.server_base_environment(_install(tmp_path))["PATH"].split(":")
    assert plain[0] == str(Path(sys.executable).parent)
    monkeypatch.setenv(rules.STUB_PYTHON_VARIABLE, "/envs/24.09-abc/bin")
    path = runtime.server_base_environment(_install(tmp_path))["PATH"].split(":")
    assert path[:2] == ["/envs/24.09-abc/bin", str(Path(sys.executable).parent)]


def test_the_manifest_names_the_release_and_runtimes() -> None:
    assert target.runtimes_of(EXAMPLE) == ("24.09", frozenset({"libtorch", "onnxruntime"}))


def test_use_target_runtime_points_the_stubs_at_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[tuple[str, frozenset[str]]] = []

    def ensure(release: str, runtimes: frozenset[str]) -> environments.RuntimeEnv:
        asked.append((release, runtimes))
        return environments.RuntimeEnv(
            path=tmp_path / "24.09-x", name="24.09-x", requirements=("numpy<2",), created=False, seconds=0.0
        )

    monkeypatch.setattr(environments, "ensure_environment", ensure)
    monkeypatch.setenv(
        rules.STUB_PYTHON_VARIABLE, ""
    )  # recorded as unset: the test's end removes what the call sets
    target.use_target_runtime(EXAMPLE)
    import os

    assert asked == [("24.09", frozenset({"libtorch", "onnxruntime"}))]
    assert os.environ[rules.STUB_PYTHON_VARIABLE] == str(tmp_path / "24.09-x" / "bin")


def test_fails_target_runtime_without_a_package_index(monkeypatch: pytest.MonkeyPatch) -> None:
    def offline(release: str, runtimes: frozenset[str]) -> environments.RuntimeEnv:
        raise environments.RuntimeUnavailable("pip could not install torch==2.5.0 (exit 1): no index")

    monkeypatch.setattr(environments, "ensure_environment", offline)
    with pytest.raises(LocalServerError) as err:
        target.use_target_runtime(EXAMPLE)
    assert err.value.code == "TargetRuntimeUnavailable"
    assert "Triton 24.09's runtimes (numpy<2 onnxruntime==1.19.2 torch==2.5.0)" in str(err.value)
    assert "--runtime stand-in" in str(err.value)


def test_runtime_container_hands_over_to_the_container_module(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []
    fake = types.ModuleType("cdk_triton.local.container")
    fake.serve_container = lambda args: seen.append(args.runtime) or 0  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cdk_triton.local.container", fake)
    assert main(["serve", "--manifest", str(EXAMPLE), "--runtime", "container"]) == 0
    assert seen == ["container"]


def test_fails_an_unknown_runtime(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--runtime", "docker"])
    assert "invalid choice: 'docker'" in capsys.readouterr().err
