"""ServerOptions.from_environment against what each release's serve script does (data/sagemaker-serve.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cdk_triton.config import tables
from cdk_triton.config.server_options import ENV_FIELDS, ServerOptions
from cdk_triton.errors import TritonValidationError

DATA = json.loads((Path(tables.__file__).parent / "data" / "sagemaker-serve.json").read_text())
CASES = [(r, name, v) for r, rel in DATA["releases"].items() for name, v in rel["variables"].items()]
BOOL = "tritonserver bool option"


@pytest.mark.parametrize(("release", "name", "rule"), CASES, ids=[f"{r}-{n}" for r, n, _ in CASES])
def test_every_variable_the_script_reads(release: str, name: str, rule: dict[str, Any]) -> None:
    assert tables.serve_script_data(release) is not None
    if name == "SAGEMAKER_TRITON_PING_MODE":
        assert rule["exported"] is False  # assigned, never exported: not a ServerOptions setting
        assert name not in ENV_FIELDS
        return
    assert name in ENV_FIELDS, name
    accepted = rule["accepted_values"]
    if isinstance(accepted, str) and accepted.startswith(BOOL):
        for value, expected in (("1", True), ("ON", True), ("True", True), ("0", False), ("Off", False)):
            opts = ServerOptions.from_environment({name: value})
            assert getattr(opts, ENV_FIELDS[name]) is expected, (name, value)
        with pytest.raises(TritonValidationError):
            ServerOptions.from_environment({name: "yes"})
    if name == "SAGEMAKER_MULTI_MODEL":
        assert accepted == ["true"]
        assert ServerOptions.from_environment({name: "true"}).multi_model
        for other in ("True", "1", "on"):
            assert not ServerOptions.from_environment({name: other}).multi_model
    if name == "SAGEMAKER_TRITON_LOG_VERBOSE":
        assert "NOT on/off" in accepted
        assert ServerOptions.from_environment({name: "TRUE"}).log_verbose == 1
        assert ServerOptions.from_environment({name: "3"}).log_verbose == 3
        with pytest.raises(TritonValidationError):
            ServerOptions.from_environment({name: "on"})
    flag = rule["flag"]
    if isinstance(flag, str) and flag.startswith("--") and "=<value>" in flag and name in _SAMPLES:
        opts = ServerOptions.from_environment({name: _SAMPLES[name]})
        argv = opts.to_argv(model_repository="/opt/ml/model", model_dirs=["m"], gpu_count=1)
        assert flag.split(" ")[0].replace("<value>", _SAMPLES[name]) in argv, (name, argv)


_SAMPLES = {
    "SAGEMAKER_BIND_TO_PORT": "9090",
    "SAGEMAKER_SAFE_PORT_RANGE": "9000-9100",
    "SAGEMAKER_TRITON_THREAD_COUNT": "4",
    "SAGEMAKER_TRITON_BUFFER_MANAGER_THREAD_COUNT": "2",
    "SAGEMAKER_TRITON_LOG_VERBOSE": "2",
    "SAGEMAKER_TRITON_SHM_DEFAULT_BYTE_SIZE": "1024",
    "SAGEMAKER_TRITON_SHM_GROWTH_BYTE_SIZE": "2048",
    "SAGEMAKER_TRITON_TENSORFLOW_VERSION": "2",
    "SAGEMAKER_TRITON_DEFAULT_MODEL_NAME": "m",
}


def test_features_absent_before_a_release_are_not_read_there() -> None:
    old = DATA["releases"]["23.02"]["variables"]
    assert old["SAGEMAKER_TRITON_ALLOW_GRPC"]["flag"] is None
    assert "SAGEMAKER_TRITON_DISABLE_MODEL_NAMESPACING" not in old
    assert "SAGEMAKER_TRITON_INFERENCE_TYPE" not in DATA["releases"]["24.09"]["variables"]
    assert "SAGEMAKER_TRITON_INFERENCE_TYPE" in DATA["releases"]["25.04"]["variables"]
