"""A SageMaker Runtime stand-in on 127.0.0.1: ``POST /endpoints/<name>/invocations``.

boto3 talks to it exactly as to AWS (``endpoint_url=front.url``): the same route, headers
(``X-Amzn-SageMaker-Target-Model``, Content-Type and Accept passed through) and the same error
codes and shapes (CONTRACT.md section 2): ValidationError 400, ModelError 424 with
OriginalStatusCode / OriginalMessage / LogStreamArn, ModelNotReadyException 429, InternalFailure
500, ServiceUnavailable 503. Standard library only (``http.server.ThreadingHTTPServer``).
:func:`invoke_front` is its HTTP client (``LocalEndpoint.invoke`` and ``FrontClient.invoke`` call it).
"""

from __future__ import annotations

import http.client
import json
import logging
import socket
import threading
import urllib.parse
import uuid
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Protocol

log = logging.getLogger("cdk_triton.local")

#: SageMaker Runtime's InvokeEndpoint payload limit (6 MB).
MAX_PAYLOAD_BYTES = 6 * 1024 * 1024

Reply = tuple[int, dict[str, str], bytes]


class InvocationTarget(Protocol):
    """What the front routes to (a LocalEndpoint)."""

    name: str

    def handle_invocation(self, body: bytes, headers: dict[str, str]) -> Reply: ...


def aws_error(status: int, code: str, message: str, **members: object) -> Reply:
    """An error the way SageMaker Runtime sends it (rest-json: x-amzn-ErrorType + JSON body)."""
    body = {"message": message, **members}
    if "Message" in members or code == "ModelError":
        body.setdefault("Message", message)
    return (
        status,
        {
            "Content-Type": "application/json",
            "x-amzn-ErrorType": f"{code}:http://internal.amazon.com/coral/com.amazon.sagemaker/",
        },
        json.dumps(body).encode(),
    )


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # listen() backlog: many clients connect at once


class RuntimeFront:
    """The HTTP front. One front can serve several local endpoints (routed by endpoint name).

    Args:
        port: port on 127.0.0.1. Default: a free port.
        account: the account id used in messages and ARNs. Default: 000000000000.
    """

    def __init__(self, *, port: int | None = None, account: str = "000000000000") -> None:
        self.account = account
        self.endpoints: dict[str, InvocationTarget] = {}
        front = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = "cdk-triton-local"

            def setup(self) -> None:
                super().setup()
                # no Nagle: with delayed ACKs a reply split in two writes waits 40 ms
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, fmt: str, *args: object) -> None:
                log.debug("front: " + fmt, *args)

            def _send(self, reply: Reply) -> None:
                status, headers, body = reply
                head = [
                    f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
                    f"Server: {self.server_version}",
                    f"Date: {self.date_time_string()}",
                ]
                head += [f"{k}: {v}" for k, v in headers.items()]
                head += [f"x-amzn-RequestId: {uuid.uuid4()}", f"Content-Length: {len(body)}", "", ""]
                self.wfile.write("\r\n".join(head).encode("latin-1") + body)  # one write per reply

            def _body(self) -> bytes:
                length = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(length) if length else b""

            def do_GET(self) -> None:  # noqa: N802
                if self.path == "/ping":
                    self._send(
                        (
                            200,
                            {"Content-Type": "application/json"},
                            json.dumps({"endpoints": sorted(front.endpoints)}).encode(),
                        )
                    )
                else:
                    self._send(aws_error(404, "UnknownOperationException", f"no route for GET {self.path}"))

            def do_POST(self) -> None:  # noqa: N802
                body = self._body()
                parts = urllib.parse.urlsplit(self.path).path.strip("/").split("/")
                if len(parts) != 3 or parts[0] != "endpoints" or parts[2] != "invocations":
                    self._send(aws_error(404, "UnknownOperationException", f"no route for POST {self.path}"))
                    return
                name = urllib.parse.unquote(parts[1])
                target = front.endpoints.get(name)
                if target is None:
                    self._send(
                        aws_error(
                            400, "ValidationError", f"Endpoint {name} of account {front.account} not found."
                        )
                    )
                    return
                if len(body) > MAX_PAYLOAD_BYTES:
                    self._send(
                        aws_error(
                            413,
                            "ValidationError",
                            f"Request body of {len(body)} bytes exceeds the 6 MB InvokeEndpoint limit",
                        )
                    )
                    return
                headers = {k.lower(): v for k, v in self.headers.items()}
                try:
                    reply = target.handle_invocation(body, headers)
                except Exception as exc:  # never let a handler thread die silently
                    log.exception("local endpoint %s failed", name)
                    reply = aws_error(500, "InternalFailure", f"{type(exc).__name__}: {exc}")
                self._send(reply)

        self._httpd = _Server(("127.0.0.1", port or 0), Handler)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: pass it to boto3 as ``endpoint_url``."""
        return f"http://127.0.0.1:{self.port}"

    def add(self, endpoint: InvocationTarget) -> None:
        """Route ``/endpoints/<endpoint.name>/invocations`` to this endpoint."""
        self.endpoints[endpoint.name] = endpoint

    def remove(self, name: str) -> None:
        """Stop routing an endpoint name (later calls get ValidationError, as for a deleted endpoint)."""
        self.endpoints.pop(name, None)

    def start(self) -> RuntimeFront:
        """Serve in a daemon thread."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._httpd.serve_forever, name="cdk-triton-front", daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the listening socket."""
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()


def invoke_front(
    url: str,
    endpoint: str,
    body: bytes,
    content_type: str,
    target_model: str | None = None,
    accept: str | None = None,
    timeout: float = 120.0,
) -> Reply:
    """``POST /endpoints/<endpoint>/invocations`` on a front URL: (status, lower-case headers, body)."""
    headers = {"Content-Type": content_type}
    if accept:
        headers["Accept"] = accept
    if target_model is not None:
        headers["X-Amzn-SageMaker-Target-Model"] = target_model
    host, port = url.split("://", 1)[1].rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.request("POST", f"/endpoints/{urllib.parse.quote(endpoint, safe='')}/invocations", body, headers)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()
