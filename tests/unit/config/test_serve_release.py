"""Each release's serve script, as ServerOptions reads it: every variable of every recorded release
(data/sagemaker-serve.json), and every ServerOptions variable a release's record lacks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cdk_triton.config import tables
from cdk_triton.config.server_options import (
    ENV_FIELDS,
    NoEffect,
    PingMode,
    ServerOptions,
    effective_environment,
)

DATA = json.loads((Path(tables.__file__).parent / "data" / "sagemaker-serve.json").read_text())
RELEASES: dict[str, dict[str, Any]] = DATA["releases"]
PING = ("SAGEMAKER_TRITON_OVERRIDE_PING_MODE", "SAGEMAKER_TRITON_PING_MODE")
#: a valid value for every variable ServerOptions reads
SAMPLE = {
    "SAGEMAKER_MULTI_MODEL": "true",
    "SAGEMAKER_TRITON_DEFAULT_MODEL_NAME": "m",
    "SAGEMAKER_TRITON_OVERRIDE_PING_MODE": "live",
    "SAGEMAKER_TRITON_DISABLE_MODEL_NAMESPACING": "false",
    "SAGEMAKER_BIND_TO_PORT": "9090",
    "SAGEMAKER_SAFE_PORT_RANGE": "9000-9100",
    "SAGEMAKER_TRITON_ALLOW_GRPC": "true",
    "SAGEMAKER_TRITON_GRPC_PORT": "9001",
    "SAGEMAKER_TRITON_ALLOW_METRICS": "true",
    "SAGEMAKER_TRITON_METRICS_PORT": "9002",
    "SAGEMAKER_TRITON_THREAD_COUNT": "4",
    "SAGEMAKER_TRITON_BUFFER_MANAGER_THREAD_COUNT": "2",
    "SAGEMAKER_TRITON_LOG_VERBOSE": "2",
    "SAGEMAKER_TRITON_LOG_INFO": "false",
    "SAGEMAKER_TRITON_LOG_WARNING": "false",
    "SAGEMAKER_TRITON_LOG_ERROR": "false",
    "SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE": "1024",
    "SAGEMAKER_TRITON_SHM_GROWTH_BYTE_SIZE": "2048",
    "SAGEMAKER_TRITON_TENSORFLOW_VERSION": "2",
    "SAGEMAKER_TRITON_MODEL_LOAD_GPU_LIMIT": "0.5",
    "SAGEMAKER_TRITON_INFERENCE_TYPE": "generate",
    "SAGEMAKER_TRITON_ADDITIONAL_ARGS": "--cache-config=local,size=1024",
    "SAGEMAKER_TRITON_PUBLISH_METRICS_TO_CLOUDWATCH": "true",
    "SAGEMAKER_TRITON_CLOUDWATCH_LOG_GROUP": "/triton/x",
    "SAGEMAKER_TRITON_CLOUDWATCH_METRIC_NAMESPACE": "Triton/x",
}
#: a port is only rendered with its listener on (a port of a listener that is off changes nothing)
_ENABLES = {
    "SAGEMAKER_TRITON_GRPC_PORT": {"SAGEMAKER_TRITON_ALLOW_GRPC": "true"},
    "SAGEMAKER_TRITON_METRICS_PORT": {"SAGEMAKER_TRITON_ALLOW_METRICS": "true"},
}
RECORDED = {name for rel in RELEASES.values() for name in rel["variables"]}
CASES = [
    (release, name)
    for release, rel in RELEASES.items()
    for name in sorted(set(rel["variables"]) | set(ENV_FIELDS))
    if name not in PING
]


def _reads(rule: dict[str, Any] | None) -> bool:
    return rule is not None and (rule["flag"] is not None or rule["exported"] is not False)


def _argv(opts: ServerOptions) -> list[str]:
    return opts.to_argv(model_repository="/opt/ml/model", model_dirs=["m"], gpu_count=1)


def test_every_variable_has_a_sample() -> None:
    assert set(ENV_FIELDS) == set(SAMPLE)
    assert RECORDED - set(ENV_FIELDS) == {"SAGEMAKER_TRITON_PING_MODE"}


@pytest.mark.parametrize(("release", "name"), CASES, ids=[f"{r}-{n}" for r, n in CASES])
def test_a_variable_reaches_tritonserver_only_where_the_release_reads_it(release: str, name: str) -> None:
    rule = RELEASES[release]["variables"].get(name)
    env = {name: SAMPLE[name]}
    effective, notes = effective_environment(env, release)
    field = ENV_FIELDS[name]
    read = ServerOptions.from_environment(env, triton_version=release)
    if name not in RECORDED:  # not the upstream script's (AWS adds CloudWatch publishing): kept as is
        assert effective.get(name) == SAMPLE[name] and notes == []
    elif _reads(rule):
        assert effective[name] == SAMPLE[name] and notes == []
        assert getattr(read, field) == getattr(ServerOptions.from_environment(env), field)
        if rule is not None and str(rule["flag"]).startswith("--") and "=<value>" in rule["flag"]:
            flag = rule["flag"].split(" ")[0].split("=")[0]
            read = ServerOptions.from_environment({**env, **_ENABLES.get(name, {})}, triton_version=release)
            assert any(a.startswith(flag + "=") for a in _argv(read)), (flag, _argv(read))
    else:
        assert name not in effective or name == "SAGEMAKER_TRITON_DISABLE_MODEL_NAMESPACING"
        assert [n.variable for n in notes] == [name]
        assert _argv(read) == _argv(ServerOptions.from_environment({}, triton_version=release))


@pytest.mark.parametrize("release", list(RELEASES))
def test_ping_mode_as_the_release_reads_it(release: str) -> None:
    rule = RELEASES[release]["variables"]["SAGEMAKER_TRITON_PING_MODE"]
    override = {"SAGEMAKER_TRITON_OVERRIDE_PING_MODE": "live"}
    assert rule["exported"] is False  # assigned, never exported
    opts = ServerOptions.from_environment(override, triton_version=release)
    inherited = ServerOptions.from_environment(
        {**override, "SAGEMAKER_TRITON_PING_MODE": "ready"}, triton_version=release
    )
    mme = ServerOptions.from_environment(
        {"SAGEMAKER_MULTI_MODEL": "true", "SAGEMAKER_TRITON_PING_MODE": ""}, triton_version=release
    )
    if "hard-coded" in rule["default"]:  # before 23.07: /ping answers on liveness, nothing read
        assert "SAGEMAKER_TRITON_OVERRIDE_PING_MODE" not in RELEASES[release]["variables"]
        assert opts.ping_mode == inherited.ping_mode == mme.ping_mode == PingMode.LIVE
        assert ServerOptions.from_environment({}, triton_version=release).ping_mode == PingMode.LIVE
    else:  # the override alone has no effect: tritonserver keeps its default 'ready'
        assert opts.ping_mode is None
        assert opts.server_environment().get("SAGEMAKER_TRITON_PING_MODE") is None
        assert inherited.ping_mode == PingMode.LIVE  # an inherited PING_MODE carries the override
        assert mme.ping_mode == PingMode.LIVE  # ... or the script's MME default
        assert inherited.server_environment()["SAGEMAKER_TRITON_PING_MODE"] == "live"


@pytest.mark.parametrize("release", list(RELEASES))
def test_namespacing_before_the_release_that_reads_it_is_off(release: str) -> None:
    argv = _argv(ServerOptions.from_environment({}, triton_version=release))
    if "SAGEMAKER_TRITON_DISABLE_MODEL_NAMESPACING" in RELEASES[release]["variables"]:
        assert "--model-namespacing=true" in argv
    else:
        assert "--model-namespacing" not in RELEASES[release]["fixed_command"]
        assert "--model-namespacing=false" in argv


def test_for_release_names_each_setting_without_effect() -> None:
    opts = ServerOptions(allow_grpc=True, response_cache_byte_size=1024, ping_mode=PingMode.READY)
    effective, notes = opts.for_release("23.02")
    assert [n.variable for n in notes] == [
        "SAGEMAKER_TRITON_ALLOW_GRPC",
        "SAGEMAKER_TRITON_ADDITIONAL_ARGS",
        "SAGEMAKER_TRITON_OVERRIDE_PING_MODE",
    ]
    assert effective.allow_grpc is None and effective.response_cache_byte_size is None
    assert effective.ping_mode == PingMode.LIVE
    assert "target Triton 23.12 or newer" in notes[0].message
    newest, none = opts.for_release("24.09", ping_mode_inherited=True)
    assert none == [] and newest.ping_mode == PingMode.READY and newest.allow_grpc is True
    assert opts.for_release(None) == (opts, [])  # a custom image: no record, nothing judged
    assert ServerOptions().for_release("24.09") == (ServerOptions(), [])


def test_no_effect_message_names_variable_value_release_and_fix() -> None:
    note = NoEffect(variable="V", value="x", triton_version="23.02", reason="not read.", read_from="23.12")
    assert note.message == (
        "V='x' has no effect on sagemaker-tritonserver:23.02-py3: not read; remove it, or target "
        "Triton 23.12 or newer"
    )
