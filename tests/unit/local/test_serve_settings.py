"""The serve path reads container settings as the manifest's Triton release does (no tritonserver here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cdk_triton.config.manifest import manifest_from_dict
from cdk_triton.config.server_options import PingMode, ServerOptions
from cdk_triton.errors import TritonValidationError
from cdk_triton.local import commands, detached
from cdk_triton.local.endpoint import LocalEndpoint

EXAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "manifests" / "example.json"


def _manifest(version: str = "24.09", *, response_cache: bool = False) -> Any:
    doc = json.loads(EXAMPLE.read_text())
    doc["triton_version"] = version
    if response_cache:
        doc["models"]["resnet"]["config"]["response_cache"] = {"enable": True}
    return manifest_from_dict(doc, source=str(EXAMPLE))


def test_a_setting_the_release_does_not_read_is_logged_and_dropped(caplog: pytest.LogCaptureFixture) -> None:
    opts = ServerOptions(allow_grpc=True, thread_count=4)
    ep = LocalEndpoint(_manifest("23.02"), "classifier", server_options=opts)
    assert [n.variable for n in ep.settings_without_effect] == ["SAGEMAKER_TRITON_ALLOW_GRPC"]
    assert ep.server_options.allow_grpc is None and ep.server_options.thread_count == 4
    assert ep.server_options.ping_mode == PingMode.LIVE  # 23.02 answers /ping on liveness
    assert "SAGEMAKER_TRITON_ALLOW_GRPC='true' has no effect" in caplog.text
    newest = LocalEndpoint(_manifest("24.09"), "classifier", server_options=opts)
    assert newest.settings_without_effect == [] and newest.server_options.allow_grpc is True


def test_the_ping_override_reaches_the_server_only_with_an_inherited_ping_mode() -> None:
    opts = ServerOptions(ping_mode=PingMode.LIVE)
    alone = LocalEndpoint(_manifest(), "classifier", server_options=opts)
    assert alone.server_options.ping_mode is None
    inherited = LocalEndpoint(_manifest(), "classifier", server_options=opts, ping_mode_inherited=True)
    assert inherited.server_options.ping_mode == PingMode.LIVE


def test_fails_when_a_model_enables_response_cache_and_the_server_has_none() -> None:
    with pytest.raises(
        TritonValidationError, match=r"resnet enable response_cache.*ResponseCacheNotConfigured"
    ):
        LocalEndpoint(_manifest(response_cache=True), "classifier")
    cache = ServerOptions(response_cache_byte_size=1 << 20)
    LocalEndpoint(_manifest(response_cache=True), "classifier", server_options=cache)
    with pytest.raises(
        TritonValidationError, match="Triton 23.02 server no response cache"
    ):  # ADDITIONAL_ARGS from 23.07
        LocalEndpoint(_manifest("23.02", response_cache=True), "classifier", server_options=cache)


def test_serve_prints_each_setting_without_effect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = json.loads(EXAMPLE.read_text())
    doc["triton_version"] = "24.09"
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(doc))

    def no_server(self: LocalEndpoint) -> LocalEndpoint:
        raise KeyboardInterrupt

    monkeypatch.setattr(LocalEndpoint, "start", no_server)
    parser = _parser()
    args = parser.parse_args(
        ["serve", "--manifest", str(path), "--endpoint", "classifier", "--env",
         "SAGEMAKER_TRITON_INFERENCE_TYPE=generate", "--env", "SAGEMAKER_TRITON_LOG_VERBOSE=0"]
    )  # fmt: skip
    with pytest.raises(KeyboardInterrupt):
        commands.cmd_serve(args)
    out = capsys.readouterr().out
    assert "SAGEMAKER_TRITON_INFERENCE_TYPE='generate' has no effect on sagemaker-tritonserver:24.09" in out
    assert "LOG_VERBOSE" not in out


def test_serve_env_items_are_read_as_the_container_reads_them() -> None:
    assert detached.container_environment(["A=1", "B=x=y"]) == {"A": "1", "B": "x=y"}
    args = _parser().parse_args(["serve", "--env", "SAGEMAKER_TRITON_ALLOW_GRPC=yes"])
    with pytest.raises(TritonValidationError, match="InvalidEnvironmentValue"):
        ServerOptions.from_environment(detached.container_environment(args.env))


def _parser() -> Any:
    import argparse

    parser = argparse.ArgumentParser()
    commands.register(parser.add_subparsers())
    return parser
