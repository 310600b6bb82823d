"""The front speaks HTTP correctly: a malformed-request corpus over raw sockets, timeouts, limits.

No tritonserver: the front routes to an echo endpoint. Each case is the raw bytes a client sends and
the status it must get (framing errors are answered by the HTTP parser before any handler runs;
every other error carries SageMaker Runtime's ``x-amzn-ErrorType``).
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import pytest

from cdk_triton.local.front import MAX_PAYLOAD_BYTES, Reply, RuntimeFront

INV = "/endpoints/ep/invocations"


class Echo:
    name = "ep"

    def handle_invocation(self, body: bytes, headers: dict[str, str]) -> Reply:
        return 200, {"Content-Type": "application/octet-stream"}, body


def _echo_front(timeout: float) -> Iterator[RuntimeFront]:
    """A started front routing ``ep`` to ``Echo``, with ``timeout`` seconds for idle clients and bodies."""
    f = RuntimeFront(idle_timeout=timeout, body_timeout=timeout).start()
    f.add(Echo())  # type: ignore[arg-type]
    yield f
    f.stop()


@pytest.fixture(scope="module")
def front() -> Iterator[RuntimeFront]:
    yield from _echo_front(5)


def exchange(port: int, raw: bytes, timeout: float = 4.0) -> tuple[int | None, bytes, float]:
    """Send raw bytes; (status of the first non-100 response or None if closed without one, head, seconds)."""
    t0 = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(raw)
        data = b""
        while True:
            head = data.split(b"\r\n\r\n", 1)[0]
            if b"\r\n\r\n" in data and not head.startswith(b"HTTP/1.1 100"):
                return int(head[9:12]), head, time.monotonic() - t0
            if b"\r\n\r\n" in data:  # 100 Continue: send nothing more, read on
                data = data.split(b"\r\n\r\n", 1)[1]
                continue
            try:
                chunk = s.recv(65536)
            except (ConnectionResetError, TimeoutError):
                chunk = b""
            if not chunk:
                return None, data, time.monotonic() - t0
            data += chunk


def req(
    method: str, path: str, headers: str = "", body: bytes = b"", *, host: str | None = "{host}"
) -> bytes:
    lines = [f"{method} {path} HTTP/1.1"]
    if host is not None:
        lines.append(f"Host: {host}")
    lines += [h for h in headers.split("|") if h]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def post(headers: str = "", body: bytes = b"{}", **kw: object) -> bytes:
    return req("POST", INV, f"Content-Length: {len(body)}|{headers}", body, **kw)  # type: ignore[arg-type]


CHUNKED = "Transfer-Encoding: chunked"
#: case -> (raw request, status). ``{host}`` / ``{port}`` become the front's.
CASES: dict[str, tuple[bytes, int]] = {
    "post": (post(), 200),
    "post-empty-body": (post(body=b""), 200),
    "post-no-length": (req("POST", INV), 200),
    "post-chunked": (req("POST", INV, CHUNKED, b"2\r\n{}\r\n0\r\n\r\n"), 200),
    "post-http10-without-host": (b"POST " + INV.encode() + b" HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}", 200),
    "expect-100-continue": (post("Expect: 100-continue"), 200),
    "ping": (req("GET", "/ping"), 200),
    "ping-head": (req("HEAD", "/ping"), 200),
    "put-invocations": (req("PUT", INV, "Content-Length: 0"), 405),
    "delete-invocations": (req("DELETE", INV), 405),
    "patch-invocations": (req("PATCH", INV, "Content-Length: 0"), 405),
    "options-invocations": (req("OPTIONS", INV), 405),
    "head-invocations": (req("HEAD", INV), 405),
    "get-invocations": (req("GET", INV), 405),
    "post-ping": (req("POST", "/ping", "Content-Length: 0"), 405),
    "unknown-route": (req("GET", "/nope"), 404),
    "endpoint-without-invocations": (post().replace(INV.encode(), b"/endpoints/ep"), 404),
    "invocations-extra-segment": (post().replace(INV.encode(), INV.encode() + b"/x"), 404),
    "unknown-endpoint": (post().replace(b"/ep/", b"/missing/"), 400),
    "content-length-not-a-number": (req("POST", INV, "Content-Length: abc"), 400),
    "content-length-negative": (req("POST", INV, "Content-Length: -1"), 400),
    "content-length-fraction": (req("POST", INV, "Content-Length: 1.5"), 400),
    "content-length-hex": (req("POST", INV, "Content-Length: 0x10"), 400),
    "content-length-empty": (req("POST", INV, "Content-Length: "), 400),
    "content-length-twice-different": (req("POST", INV, "Content-Length: 2|Content-Length: 3", b"{}"), 400),
    "content-length-overflow": (req("POST", INV, "Content-Length: 99999999999999999999999"), 400),
    "content-length-and-chunked": (
        req("POST", INV, f"Content-Length: 2|{CHUNKED}", b"2\r\n{}\r\n0\r\n\r\n"),
        400,
    ),
    "transfer-encoding-unknown": (req("POST", INV, "Transfer-Encoding: gzip", b"{}"), 400),
    "chunk-size-not-hex": (req("POST", INV, CHUNKED, b"zz\r\n{}\r\n0\r\n\r\n"), 400),
    "body-over-limit-unread": (req("POST", INV, f"Content-Length: {MAX_PAYLOAD_BYTES + 1}"), 413),
    "body-far-over-limit-unread": (req("POST", INV, "Content-Length: 1073741824"), 413),
    "body-over-limit-unknown-endpoint": (
        req("POST", "/endpoints/missing/invocations", f"Content-Length: {MAX_PAYLOAD_BYTES + 1}"),
        413,
    ),
    "request-line-garbage": (b"HELLO\r\n\r\n", 400),
    "method-with-space": (b"PO ST " + INV.encode() + b" HTTP/1.1\r\nHost: {host}\r\n\r\n", 400),
    "header-without-colon": (req("POST", INV, "Content-Length: 2|NoColonHere", b"{}"), 400),
    "header-space-before-colon": (req("POST", INV, "Content-Length : 2", b"{}"), 400),
    "header-obs-fold": (req("POST", INV, "Content-Length: 2|X-A: a|  folded", b"{}"), 400),
    "header-nul": (req("POST", INV, "Content-Length: 2|X-A: a\x00b", b"{}"), 400),
    "header-too-long": (req("GET", "/ping", "X-A: " + "a" * 9000), 431),
    "too-many-headers": (req("GET", "/ping", "|".join(f"X-{i}: v" for i in range(200))), 431),
    "url-too-long": (req("GET", "/" + "a" * 9000), 414),
    "host-missing-http11": (post(host=None), 400),
    "host-twice": (post("Host: {host}"), 400),
    "host-evil": (post(host="evil.example.com"), 403),
    "host-evil-with-our-port": (post(host="evil.example.com:{port}"), 403),
    "host-loopback-without-port": (post(host="127.0.0.1"), 403),
    "host-loopback-other-port": (post(host="127.0.0.1:1"), 403),
    "host-localhost": (post(host="localhost:{port}"), 200),
    "host-ipv6-loopback": (post(host="[::1]:{port}"), 200),
    "host-upper-case": (post(host="LOCALHOST:{port}"), 200),
    "origin-evil": (post("Origin: http://evil.example.com"), 403),
    "origin-evil-text-plain": (post("Origin: https://evil.example.com|Content-Type: text/plain"), 403),
    "origin-null": (post("Origin: null"), 403),
    "origin-other-local-port": (post("Origin: http://127.0.0.1:1"), 403),
    "origin-self": (post("Origin: http://127.0.0.1:{port}"), 200),
    "sec-fetch-site-cross-site": (post("Sec-Fetch-Site: cross-site"), 403),
    "sec-fetch-site-same-site": (post("Sec-Fetch-Site: same-site"), 403),
    "sec-fetch-site-same-origin": (post("Sec-Fetch-Site: same-origin"), 200),
    "sec-fetch-site-none": (post("Sec-Fetch-Site: none"), 200),
}


def test_the_corpus_is_large_enough() -> None:
    assert len(CASES) >= 40
    assert sum(1 for _, status in CASES.values() if status >= 400) >= 40


@pytest.mark.parametrize("case", sorted(CASES))
def test_malformed_request_corpus(front: RuntimeFront, case: str) -> None:
    raw, expected = CASES[case]
    raw = raw.replace(b"{host}", f"127.0.0.1:{front.port}".encode()).replace(
        b"{port}", str(front.port).encode()
    )
    status, head, seconds = exchange(front.port, raw)
    assert status == expected, (case, head)
    assert seconds < 3, f"{case}: answered after {seconds:.1f} s, not at once"
    if expected == 405:
        assert b"\r\nAllow: " in head, head
    if expected in (403, 404, 405, 413) or (expected == 400 and b"Server: cdk-triton-local" in head):
        assert b"x-amzn-ErrorType: " in head, head  # handler-level errors keep SageMaker's shape


def test_keep_alive_serves_several_requests_on_one_connection(front: RuntimeFront) -> None:
    raw = post(body=b'{"a": 1}').replace(b"{host}", f"127.0.0.1:{front.port}".encode())
    with socket.create_connection(("127.0.0.1", front.port), timeout=5) as s:
        for _ in range(3):
            s.sendall(raw)
            data = b""
            while not data.endswith(b'{"a": 1}'):
                data += s.recv(65536)
            assert data.startswith(b"HTTP/1.1 200")


def test_error_bodies_are_sagemaker_json(front: RuntimeFront) -> None:
    raw = post(host="evil.example.com")
    with socket.create_connection(("127.0.0.1", front.port), timeout=5) as s:
        s.sendall(raw)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    assert b"x-amzn-ErrorType: AccessDeniedException:" in head
    assert "evil.example.com" in json.loads(body)["message"]


@pytest.fixture(scope="module")
def impatient() -> Iterator[RuntimeFront]:
    yield from _echo_front(1)


@pytest.mark.parametrize(
    "raw",
    [b"", b"POST /endpoints/ep/invocations HTTP/1.1\r\nHost: 127.0.0.1"],
    ids=["idle", "slow-headers"],
)
def test_idle_and_slow_header_clients_are_closed(impatient: RuntimeFront, raw: bytes) -> None:
    status, _, seconds = exchange(impatient.port, raw, timeout=10)
    assert status is None and seconds < 5


def test_a_slow_body_is_408(impatient: RuntimeFront) -> None:
    raw = req("POST", INV, "Content-Length: 10", b"{}", host=f"127.0.0.1:{impatient.port}")
    status, head, seconds = exchange(impatient.port, raw, timeout=10)
    assert status == 408 and b"RequestTimeout" in head and seconds < 5


def test_boto3_still_works(front: RuntimeFront) -> None:
    import boto3

    client = boto3.client(
        "sagemaker-runtime",
        endpoint_url=front.url,
        region_name="us-east-1",
        aws_access_key_id="x",
        aws_secret_access_key="x",
    )
    resp = client.invoke_endpoint(EndpointName="ep", Body=b"abc", ContentType="application/json")
    assert resp["Body"].read() == b"abc"
