"""The local front answers as the emulated release's SageMaker port (``config.server_options.front``).

No tritonserver: a fake server records what reaches it. From 26.03 ``--http-restricted-api`` (inference) and
``--http-max-input-size`` apply to ``/invocations`` (server PR #8686 / #8693) and a zero-length body is parsed
(issue #8762): the container's 403 / 400 / 500, surfaced as SageMaker does (ModelError 424 with
OriginalStatusCode). Before 26.03 the flags do not reach the SageMaker port: nothing is enforced, and the
settings are reported without effect.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cdk_triton.config.manifest import manifest_from_dict
from cdk_triton.config.server_options import ServerOptions, front_profile
from cdk_triton.local.endpoint import LocalEndpoint
from cdk_triton.local.front import RuntimeFront

EXAMPLE = Path(__file__).resolve().parents[2] / "fixtures" / "manifests" / "example.json"
KEY = "X-Amzn-SageMaker-Custom-Attributes"
ARGS = (f"--http-restricted-api=inference:{KEY}=secret", "--http-max-input-size=64")


class FakeServer:
    """Stands for tritonserver: answers 200 and records each request."""

    running = True
    socket_path = "/nonexistent.sock"
    log_path = Path("/tmp/tritonserver.log")

    def __init__(self) -> None:
        self.seen: list[tuple[str, bytes, dict[str, str]]] = []

    def request(self, method: str, path: str, body: bytes | None = None, headers: Any = None) -> Any:
        self.seen.append((path, body or b"", dict(headers or {})))
        return 200, {"content-type": "application/json"}, b'{"outputs": []}'

    def stop(self) -> None:
        pass


def _endpoint(release: str, front: RuntimeFront, args: tuple[str, ...] = ARGS) -> LocalEndpoint:
    doc = dict(json.loads(EXAMPLE.read_text()), triton_version=release)
    ep = LocalEndpoint(
        manifest_from_dict(doc, source=str(EXAMPLE)),
        "classifier",
        server_options=ServerOptions(additional_args=args),
    )
    ep.server = FakeServer()  # type: ignore[assignment]
    ep.front = front
    ep.handle_invocation_async = None  # type: ignore[assignment,method-assign]  # the fake has no socket
    front.add(ep)
    return ep


@pytest.fixture(scope="module")
def front() -> Iterator[RuntimeFront]:
    f = RuntimeFront().start()
    yield f
    f.stop()


def _post(
    front: RuntimeFront, body: bytes, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection("127.0.0.1", front.port, timeout=10)
    try:
        conn.request(
            "POST",
            "/endpoints/classifier/invocations",
            body,
            {"Content-Type": "application/json", **(headers or {})},
        )
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"{}")
    finally:
        conn.close()


def test_from_26_03_the_restricted_header_and_the_size_are_the_containers_answers(
    front: RuntimeFront,
) -> None:
    ep = _endpoint("26.05", front)
    status, err = _post(front, b'{"inputs": []}')
    assert (status, err["OriginalStatusCode"]) == (424, 403)
    assert err["OriginalMessage"] == f"This API is restricted, expecting header '{KEY}'"
    status, err = _post(front, b"x" * 65, {KEY: "secret"})
    assert (status, err["OriginalStatusCode"]) == (424, 400)
    assert "exceeds the maximum allowed value of 64 bytes" in err["OriginalMessage"]
    assert _post(front, b'{"inputs": []}', {KEY: "wrong"})[1]["OriginalStatusCode"] == 403
    assert _post(front, b'{"inputs": []}', {KEY: "secret"})[0] == 200
    fake = ep.server
    assert [(p, b, h.get(KEY)) for p, b, h in fake.seen] == [("/invocations", b'{"inputs": []}', "secret")]  # type: ignore[union-attr]
    assert "--http-max-input-size=64" not in ep.server_options.additional_args  # 2.51 does not know it
    assert ep.settings_without_effect == []


def test_before_26_03_the_flags_do_not_reach_the_sagemaker_port(front: RuntimeFront) -> None:
    ep = _endpoint("24.09", front)
    assert _post(front, b"x" * 65)[0] == 200  # no header, over the size: forwarded
    assert {n.value for n in ep.settings_without_effect} == set(ARGS)
    assert all("26.03" in n.message for n in ep.settings_without_effect)


@pytest.mark.parametrize("release", ["24.09", "25.09", "26.05"])
def test_a_zero_length_body_answers_as_the_profile_says(front: RuntimeFront, release: str) -> None:
    ep = _endpoint(release, front, args=())
    status, err = _post(front, b"")
    profile = front_profile(release)
    if profile.zero_length_parsed:
        assert (status, err["OriginalStatusCode"]) == (424, profile.empty_body_status(multi_model=False))
        assert ep.server.seen == []  # type: ignore[union-attr]
    else:  # the local server's own answer (tests/local: tritonserver 2.51's)
        assert status == 200 and ep.server.seen[0][1] == b""  # type: ignore[union-attr]
