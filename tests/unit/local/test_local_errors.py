"""Every code of the local catalogue: raised, tested, and named with prop, value, allowed and fix.

No tritonserver here: each code is triggered at the function that raises it. The few that need a
real server (a start that fails or times out, a 424 ModelError) are tested in tests/local and
listed in ``IN_TESTS_LOCAL``; a static scan proves no code raised in cdk_triton/local escapes the
catalogue.
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import subprocess
import sys
import tarfile
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from cdk_triton.config.manifest import manifest_from_dict, read_manifest
from cdk_triton.config.server_options import ServerOptions
from cdk_triton.errors import TritonValidationError
from cdk_triton.local import commands as local_commands
from cdk_triton.local import detached, repository, runtime, server
from cdk_triton.local.client import datatype_of, resolve_sample, tensors_from_kserve
from cdk_triton.local.endpoint import LocalEndpoint
from cdk_triton.local.errors import (
    ALL_CODES,
    FRONT_ERRORS,
    SERVER_ERRORS,
    SURFACED,
    VALIDATION_ERRORS,
    LocalServerError,
)
from cdk_triton.local.front import RuntimeFront
from cdk_triton.local.mme import ModelManager, _State
from cdk_triton.local.overlay import CpuOverlay
from tests.unit.local.test_components import components_doc

ROOT = Path(__file__).resolve().parents[3]
LOCAL = ROOT / "cdk_triton" / "local"
EXAMPLE = ROOT / "tests" / "fixtures" / "manifests" / "example.json"


def _endpoint(name: str, doc: dict[str, Any] | None = None) -> SimpleNamespace:
    manifest = manifest_from_dict(doc, source=str(EXAMPLE)) if doc else read_manifest(EXAMPLE)
    return SimpleNamespace(manifest=manifest, entry=manifest.endpoint(name), name=name)


def _without_samples(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _without_samples(v) for k, v in node.items() if k != "sample"}
    if isinstance(node, list):
        return [_without_samples(v) for v in node]
    return node


class FakeServer:
    """Answers POST /models with one status (Triton's load API)."""

    def __init__(self, status: int) -> None:
        self.status = status

    def request(self, method: str, path: str, body: bytes | None = None, headers: object = None) -> Any:
        return self.status, {}, json.dumps({"error": "load failed: bad model"}).encode()


def _manager(status: int = 200, wait: float = 60.0) -> ModelManager:
    manifest = read_manifest(EXAMPLE)
    manager = ModelManager(
        server=FakeServer(status),  # type: ignore[arg-type]
        manifest=manifest,
        entry=manifest.endpoint("multi"),
        staging=Path("/nonexistent"),
        overlay=CpuOverlay(),
        load_wait_timeout=wait,
    )
    manager._stage = lambda target: f"/opt/ml/models/x/{target.target_model}"  # type: ignore[method-assign]
    return manager


def _still_loading() -> None:
    manager = _manager(wait=0.0)
    target = manager.resolve("classifier")
    manager._states[target.target_model] = _State(status="LOADING")
    manager.load("classifier")


def _unsafe_archive(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = tmp / "evil.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo("../escape.txt")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    monkeypatch.delattr(tarfile, "data_filter", raising=False)  # the Python 3.11.0-3.11.3 path
    repository.extract_archive(archive, tmp / "out")


def _bad_config(tmp: Path) -> None:
    (tmp / "repo" / "m").mkdir(parents=True)
    (tmp / "repo" / "m" / "config.pbtxt").write_text("name: 'm'\nmax_batch_size: {\n")
    repository.parse_configs(tmp / "repo")


def _gone_serve(tmp: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    (tmp / "ep.json").write_text(json.dumps({"pid": int(proc.stdout), "log": "serve.log"}))
    detached.read_state(str(tmp), "ep")


def _already_served(tmp: Path) -> None:
    (tmp / "classifier.json").write_text(
        detached.ServeState(
            pid=os.getpid(), url="http://127.0.0.1:1", endpoint="classifier", manifest="m"
        ).to_json()
    )
    detached.start(detached.ServeRequest(manifest=str(EXAMPLE), endpoints=("classifier",)), state_dir=tmp)


def _mismatch(tmp: Path) -> None:
    (tmp / "a.tar.gz").write_bytes(b"changed")
    repository.check_archive(tmp / "a.tar.gz", "0" * 64, "archive")


Case = Callable[[Path, pytest.MonkeyPatch], object]


#: code -> (what triggers it, the prop the error must name, the value it must name).
def _foreign_env(tmp: Path, mp: pytest.MonkeyPatch) -> None:
    """A model folder whose environment was packed for a Python no stub runs, with no local variant."""
    import io
    import tarfile

    from cdk_triton.config import python_env
    from cdk_triton.local.overlay import swap_python_env

    model = tmp / "pre"
    model.mkdir()
    meta = json.dumps({"python": "2.7", "key": "0" * 64}).encode()
    with tarfile.open(model / python_env.ENV_ARCHIVE, "w:gz") as tar:
        info = tarfile.TarInfo(python_env.ENV_METADATA)
        info.size = len(meta)
        tar.addfile(info, io.BytesIO(meta))
    swap_python_env(model, tmp / "out")


VALIDATION_CASES: dict[str, tuple[Case, str, Any]] = {
    "InvalidServeFlag": (
        lambda t, m: local_commands._serve_request(
            argparse.Namespace(
                manifest="m.json",
                endpoints=None,
                port=70000,
                instance_count=None,
                memory_budget_mb=None,
                start_timeout=120.0,
                env=[],
            )
        ),
        "--port",
        70000,
    ),
    "UnsupportedDatatype": (
        lambda t, m: tensors_from_kserve(
            {"inputs": [{"name": "x", "datatype": "FP8", "shape": [1], "data": [0]}]}
        ),
        "inputs 'x' datatype",
        "FP8",
    ),
    "TargetModelOnSingleModelEndpoint": (
        lambda t, m: resolve_sample(_endpoint("classifier"), "classifier"),  # type: ignore[arg-type]
        "target_model",
        "classifier",
    ),
    "UnknownTargetModel": (
        lambda t, m: resolve_sample(_endpoint("multi"), "nope"),  # type: ignore[arg-type]
        "target_model",
        "nope",
    ),
    "TargetModelRequired": (
        lambda t, m: resolve_sample(_endpoint("multi"), None),  # type: ignore[arg-type]
        "target_model",
        None,
    ),
    "ComponentOnOtherEndpoint": (
        lambda t, m: resolve_sample(_endpoint("multi"), None, "classifier"),  # type: ignore[arg-type]
        "component",
        "classifier",
    ),
    "ComponentRequired": (
        lambda t, m: resolve_sample(_endpoint("ics", components_doc()), None),  # type: ignore[arg-type]
        "component",
        None,
    ),
    "UnknownInferenceComponent": (
        lambda t, m: resolve_sample(_endpoint("ics", components_doc()), None, "nope"),  # type: ignore[arg-type]
        "component",
        "nope",
    ),
    "NoSample": (
        lambda t, m: resolve_sample(  # type: ignore[arg-type]
            _endpoint("classifier", _without_samples(json.loads(EXAMPLE.read_text()))), None
        ),
        "sample",
        "classifier",
    ),
    "LocalEndpointNotRunning": (lambda t, m: detached.read_state(str(t), "ep"), "endpoint", "ep"),
    "LocalEndpointAlreadyServed": (lambda t, m: _already_served(t), "endpoint", "classifier"),
    "ArtifactMissing": (
        lambda t, m: repository.check_archive(t / "missing.tar.gz", "0" * 64, "archive"),
        "archive",
        "MISSING",
    ),
    "ArtifactHashMismatch": (lambda t, m: _mismatch(t), "archive", "A"),
    "LocalPythonEnvMissing": (_foreign_env, "model 'pre' execution environment", "packed for Python 2.7"),
    "UnsafeArchiveMember": (_unsafe_archive, "archive member", "EVIL"),
    "InvalidModelConfig": (lambda t, m: _bad_config(t), "config.pbtxt of model 'm'", "CONFIG"),
    "ResponseCacheNotConfigured": (
        lambda t, m: LocalEndpoint(_with_response_cache(), "classifier"),
        "server_options.response_cache_byte_size",
        None,
    ),
    "RestrictedApiUnreachable": (
        lambda t, m: LocalEndpoint(
            manifest_from_dict(
                dict(json.loads(EXAMPLE.read_text()), triton_version="26.05"), source=str(EXAMPLE)
            ),
            "classifier",
            server_options=ServerOptions(additional_args=("--http-restricted-api=health:k=v",)),
        ),
        "server_options.additional_args",
        "--http-restricted-api=health:k=v",
    ),
    "InvalidEnvironmentValue": (
        lambda t, m: detached.container_environment(["NOVALUE"]),
        "--env",
        "NOVALUE",
    ),
}


def _with_response_cache() -> Any:
    doc = json.loads(EXAMPLE.read_text())
    doc["models"]["resnet"]["config"]["response_cache"] = {"enable": True}
    return manifest_from_dict(doc, source=str(EXAMPLE))


def _value(expected: Any, tmp: Path) -> Any:
    """Paths under tmp are written in capitals above: MISSING -> <tmp>/missing.tar.gz and so on."""
    paths = {
        "MISSING": tmp / "missing.tar.gz",
        "A": tmp / "a.tar.gz",
        "CONFIG": tmp / "repo" / "m" / "config.pbtxt",
    }
    if expected == "EVIL":
        return f"{tmp / 'evil.tar.gz'}:../escape.txt"
    return str(paths[expected]) if expected in paths else expected


@pytest.mark.parametrize("code", sorted(VALIDATION_CASES))
def test_fails_with_code_prop_value_allowed_and_fix(
    code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case, prop, value = VALIDATION_CASES[code]
    with pytest.raises(TritonValidationError) as info:
        case(tmp_path, monkeypatch)
    err = info.value
    assert err.code == code
    assert (err.prop, err.value) == (prop, _value(value, tmp_path))
    assert err.problem and err.allowed and err.fix
    text = str(err)
    assert f"[{code}]" in text and err.prop in text and err.allowed in text and err.fix in text


def test_an_input_dtype_without_a_triton_datatype() -> None:
    with pytest.raises(
        TritonValidationError, match=r"input dtype 'complex64' has no Triton datatype.*fix: cast"
    ):
        datatype_of(np.zeros(1, dtype=np.complex64))


def test_a_gone_serve_process_says_how_to_start_it_again(tmp_path: Path) -> None:
    with pytest.raises(
        TritonValidationError, match=r"which is gone.*serve --endpoint ep --detach.*LocalEndpointNotRunning"
    ):
        _gone_serve(tmp_path)
    assert not (tmp_path / "ep.json").exists()


def test_an_unknown_target_model_at_the_model_manager_names_the_s3_key() -> None:
    with pytest.raises(TritonValidationError, match=r"\[UnknownTargetModel\]") as info:
        _manager().resolve("nope")
    assert info.value.prop == "TargetModel" and "cdk-triton/mme/multi/nope" in info.value.problem


def _no_namespace(t: Path, m: pytest.MonkeyPatch) -> None:
    m.setattr(server, "namespace_prefix", lambda: None)
    server.TritonServer(options=ServerOptions(), model_repository=t, workdir=t, namespace=True)


def _broken_stub(t: Path, m: pytest.MonkeyPatch) -> None:
    missing = t / "triton_python_backend_stub"
    runtime.check_stub(runtime.TritonInstall(binary=missing, python_backend=t, stub=missing, libs=t))


def _no_pytriton(t: Path, m: pytest.MonkeyPatch) -> None:
    m.setitem(sys.modules, "pytriton", None)
    runtime.find_triton()


def _bad_shm_prefix(t: Path, m: pytest.MonkeyPatch) -> None:
    m.setenv("CDK_TRITON_SHM_PREFIX", "my-prefix")
    server.shm_prefix()


def _detached_serve_exits(t: Path, m: pytest.MonkeyPatch) -> None:
    # the fixture manifest's artifacts are not built: the serve process fails with ArtifactMissing
    request = detached.ServeRequest(manifest=str(EXAMPLE), endpoints=("classifier",), start_timeout=60)
    detached.start(request, state_dir=t / "state")


def _detached_serve_is_late(t: Path, m: pytest.MonkeyPatch) -> None:
    m.setattr(detached, "READY_SLACK_S", 0.0)
    request = detached.ServeRequest(manifest=str(EXAMPLE), endpoints=("classifier",), start_timeout=0.01)
    detached.start(request, state_dir=t / "state")


#: code -> (what triggers it, text the message must hold).
SERVER_CASES: dict[str, tuple[Case, str]] = {
    "TritonNotInstalled": (_no_pytriton, "pip install 'cdk-triton[local]'"),
    "TritonStubBroken": (_broken_stub, "cannot start"),
    "InvalidShmPrefix": (_bad_shm_prefix, "CDK_TRITON_SHM_PREFIX 'my-prefix' may contain only"),
    "NamespaceUnavailable": (_no_namespace, "private network namespace was required"),
    "ModelLoadFailed": (
        lambda t, m: _manager(status=400).load("classifier"),
        "failed with HTTP 400: load failed",
    ),
    "ModelNotReady": (lambda t, m: _still_loading(), "is still LOADING"),
    "DetachedServeFailed": (_detached_serve_exits, "ArtifactMissing"),
    "DetachedServeTimeout": (_detached_serve_is_late, "did not become ready within 0.01 s"),
}


@pytest.mark.parametrize("code", sorted(SERVER_CASES))
def test_fails_with_a_server_error(code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case, text = SERVER_CASES[code]
    with pytest.raises(LocalServerError) as info:
        case(tmp_path, monkeypatch)
    assert info.value.code == code
    assert text in str(info.value) and str(info.value).endswith(f"[{code}]")


class Raising:
    name = "boom"

    def handle_invocation(self, body: bytes, headers: dict[str, str]) -> Any:
        raise KeyError("oops")


def _post(url: str, path: str, method: str = "POST") -> tuple[int, str]:
    req = urllib.request.Request(url + path, data=b"{}" if method == "POST" else None, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:  # noqa: S310 - 127.0.0.1 only
            return resp.status, resp.headers["x-amzn-ErrorType"] or ""
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["x-amzn-ErrorType"] or ""


def test_front_errors_are_typed_like_sagemaker() -> None:
    front = RuntimeFront().start()
    try:
        front.add(Raising())  # type: ignore[arg-type]
        seen = {
            _post(front.url, "/nope", "GET"),
            _post(front.url, "/endpoints/missing/invocations"),
            _post(front.url, "/endpoints/boom/invocations"),
        }
    finally:
        front.stop()
    assert {(s, t.split(":", 1)[0]) for s, t in seen} == {
        (404, "UnknownOperationException"),
        (400, "ValidationError"),
        (500, "InternalFailure"),
    }
    status, headers, _ = LocalEndpoint(read_manifest(EXAMPLE), "classifier").handle_invocation(b"", {})
    assert (status, headers["x-amzn-ErrorType"].split(":", 1)[0]) == (503, "ServiceUnavailable")


#: Tested against a real tritonserver in tests/local: code -> test.
IN_TESTS_LOCAL = {
    "ServerCrashed": "test_restart.py::test_a_server_that_keeps_crashing_is_given_up_naming_its_log",
    "ServerStartFailed": "test_lifecycle.py::test_failed_default_model_fails_the_start_with_the_load_error",
    "ServerStartTimeout": "test_lifecycle.py::test_start_timeout_kills_the_whole_group",
    "ModelError": "test_sme.py (424 with OriginalStatusCode)",
    "ModelNotReadyException": "test_mme.py::test_a_request_waiting_too_long_for_a_load_is_model_not_ready",
}


def raised_codes(source: str) -> tuple[set[str], set[str]]:
    """(codes of raised errors, codes of the front's aws_error replies) written in a module's source."""
    errors: set[str] = set()
    front: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        literal = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if func == "TritonValidationError" and literal:
            errors.add(literal[0])
        elif func == "aws_error" and literal:
            front.add(literal[0])
        errors |= {
            k.value.value for k in node.keywords if k.arg == "code" and isinstance(k.value, ast.Constant)
        }
        if func in ("LocalServerError", "ModelNotReady") and not any(k.arg == "code" for k in node.keywords):
            errors.add("LocalServerFailed")  # the default code: every raise names its own
    return errors, front


def test_raised_codes_scan_sees_every_kind() -> None:
    source = (
        'raise TritonValidationError("A", prop="p")\nraise LocalServerError("m", code="B")\n'
        'raise LocalServerError("m")\nreturn aws_error(400, "C", "m")\n'
    )
    assert raised_codes(source) == ({"A", "B", "LocalServerFailed"}, {"C"})


#: Codes local raises through a config rule function (no literal code in cdk_triton/local) -> where.
RAISED_THROUGH_CONFIG = {
    "ComponentDoesNotFit": "components.check_components_fit: config.components.fit_problems",
    "RestrictedApiUnreachable": "endpoint.LocalEndpoint: config.server_options.check_front",
    "ImageNotInRegion": "container.setup_container: config.tables.image_uri",
}
#: Codes tested in tests/unit/local beside this file -> the test file.
IN_TESTS_UNIT_LOCAL = {
    "ComponentDoesNotFit": "test_components.py",
    "ImageNotInRegion": "test_container.py",
    "ContainerServeFlag": "test_container.py",
    "DockerUnavailable": "test_container.py",
    "ImagePullFailed": "test_container.py",
    "ContainerStartFailed": "test_container.py",
    "TargetRuntimeUnavailable": "test_target_runtime.py",
}


def test_every_code_raised_is_in_the_catalogue() -> None:
    errors: set[str] = set(RAISED_THROUGH_CONFIG)
    front: set[str] = set()
    for module in sorted(LOCAL.glob("*.py")):
        e, f = raised_codes(module.read_text())
        errors |= e
        front |= f
    catalogued = set(ALL_CODES) | set(SURFACED)
    assert errors == catalogued, sorted(errors ^ catalogued)
    assert front == set(FRONT_ERRORS), sorted(front ^ set(FRONT_ERRORS))


def test_every_catalogued_code_is_tested() -> None:
    tested = set(VALIDATION_CASES) | set(SERVER_CASES) | set(IN_TESTS_LOCAL) | set(IN_TESTS_UNIT_LOCAL)
    for code, where in IN_TESTS_UNIT_LOCAL.items():
        assert f"{code}" in (ROOT / "tests" / "unit" / "local" / where).read_text(), (code, where)
    tested |= {"UnknownOperationException", "ValidationError", "InternalFailure", "ServiceUnavailable"}
    corpus = (ROOT / "tests" / "unit" / "local" / "test_front_http.py").read_text()
    tested |= {code for code in ("AccessDeniedException", "RequestTimeout") if code in corpus}
    assert set(ALL_CODES) | set(SURFACED) | set(FRONT_ERRORS) == tested
    assert not set(VALIDATION_ERRORS) & set(SERVER_ERRORS)
    for code, where in IN_TESTS_LOCAL.items():
        test_file = ROOT / "tests" / "local" / where.split("::")[0].split(" ")[0]
        assert f'"{code}"' in test_file.read_text(), (code, where)
