"""A SageMaker Runtime stand-in on 127.0.0.1: ``POST /endpoints/<name>/invocations``.

boto3 talks to it exactly as to AWS (``endpoint_url=front.url``): the same route, headers
(``X-Amzn-SageMaker-Target-Model``, Content-Type and Accept passed through) and the same error
codes and shapes (botocore's sagemaker-runtime service model, InvokeEndpoint): ValidationError 400, ModelError 424 with
OriginalStatusCode / OriginalMessage / LogStreamArn, ModelNotReadyException 429, InternalFailure
500, ServiceUnavailable 503.

The HTTP server is aiohttp's (``aiohttp.web``, its llhttp parser): framing errors (a bad
Content-Length, a bad chunk) are answered 400 by the parser before any handler runs. On top of it:

- a method other than the route's is 405 with ``Allow`` (UnknownOperationException), another
  route 404;
- a body over SageMaker's real-time payload limit (6 MiB) is 413 at once, from its Content-Length,
  without reading it (chunked bodies: as soon as the limit is passed);
- a connection that sends no complete request within ``idle_timeout`` (default 60 s, SageMaker's
  invocation timeout) is closed; a body not received within ``body_timeout`` (60 s) is 408;
- only requests for this front reach a handler: the Host must be ``127.0.0.1:PORT``,
  ``localhost:PORT`` or ``[::1]:PORT`` (DNS rebinding), an ``Origin`` must be one of those and
  ``Sec-Fetch-Site`` must not be ``cross-site`` or ``same-site`` (a web page's cross-origin POST):
  403 AccessDeniedException otherwise.

``POST /endpoints/<name>/async-invocations`` emulates ``InvokeEndpointAsync`` for an endpoint added with
:meth:`RuntimeFront.add_async` (its output and failure locations, as the endpoint config says): 202 with
the ``InferenceId`` and the ``X-Amzn-SageMaker-OutputLocation`` / ``-FailureLocation`` headers at once;
the payload is read from ``X-Amzn-SageMaker-InputLocation`` (``s3://`` through boto3, so moto works;
``file://`` or a path: a local file), invoked in the background within ``InvocationTimeoutSeconds``
(header, else the endpoint's, else 900 s), and the answer written to the output location, or the error
to the failure location. An endpoint not added for async answers ValidationError, as SageMaker does
for a real-time endpoint.

Bodies are passed through untouched. A target's ``handle_invocation_async`` (a single-model
LocalEndpoint: kept-alive asyncio connections to the server) runs on the front's event loop, with no
thread hop; otherwise, or when it returns None (MME loads may block), ``handle_invocation`` runs in
a thread pool (its connections to the server are kept alive per thread). :func:`invoke_front` is the HTTP client
(``LocalEndpoint.invoke`` and ``FrontClient.invoke`` call it).
"""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import socket
import threading
import traceback
import urllib.parse
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Self

from aiohttp import web
from aiohttp.http_exceptions import BadHttpMessage, LineTooLong
from aiohttp.web_protocol import RequestHandler

log = logging.getLogger("cdk_triton.local")

#: SageMaker Runtime's InvokeEndpoint payload limit for real-time endpoints (6 MiB).
MAX_PAYLOAD_BYTES = 6 * 1024 * 1024
#: Seconds a connection may stay without a complete request (idle keep-alive, slow headers).
IDLE_TIMEOUT_S = 60.0
#: Seconds a request body may take to arrive (SageMaker's invocation timeout is 60 s).
BODY_TIMEOUT_S = 60.0
#: Threads running endpoint handlers (each keeps its own kept-alive connection to the server).
HANDLER_THREADS = 64
SERVER_HEADER = "cdk-triton-local"

Reply = tuple[int, dict[str, str], bytes]


class InvocationTarget(Protocol):
    """What the front routes to (a LocalEndpoint)."""

    name: str

    def handle_invocation(self, body: bytes, headers: dict[str, str]) -> Reply: ...

    # Optional: ``async def handle_invocation_async(body, headers) -> Reply | None`` runs on the
    # front's event loop first (headers: case-insensitive); None falls back to handle_invocation.


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


def _response(reply: Reply, *, close: bool = False) -> web.Response:
    status, headers, body = reply
    out = {**headers, "x-amzn-RequestId": str(uuid.uuid4()), "Server": SERVER_HEADER}
    resp = web.Response(status=status, body=body, headers=out)
    if close:
        resp.force_close()  # the body was not read: do not wait for it
    return resp


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class _ParserErrors(RequestHandler):
    """aiohttp's connection handler, with the statuses RFC 9112 / 6585 give to oversized requests.

    The parser answers every framing error 400; a request-target over ``max_line_size`` MUST be 414
    and too many or too long header fields are 431.
    """

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if status == 400 and isinstance(exc, LineTooLong):
            in_url = any("url" in f.name for f in traceback.extract_tb(exc.__traceback__))
            status = 414 if in_url else 431
        elif status == 400 and isinstance(exc, BadHttpMessage) and "Too many headers" in str(exc):
            status = 431
        return super().handle_error(request, status, exc, message)


class _Server(web.Server):
    def __call__(self) -> RequestHandler:
        return _ParserErrors(self, loop=self._loop, **self._kwargs)


class _Runner(web.AppRunner):
    async def _make_server(self) -> web.Server:
        server = await super()._make_server()
        server.__class__ = _Server  # the same server, making _ParserErrors connection handlers
        return server


@dataclass(frozen=True, kw_only=True, slots=True)
class AsyncRoute:
    """Where an asynchronous endpoint writes (``s3://bucket/prefix/``, ``file://`` or a directory)."""

    output_location: str
    failure_location: str
    invocation_timeout_s: int = 900


def read_location(uri: str) -> bytes:
    """An object's bytes: ``s3://`` through boto3 (moto when mocked), else a local file."""
    if uri.startswith("s3://"):
        import boto3

        bucket, _, key = uri[5:].partition("/")
        body: bytes = boto3.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()
        return body
    return Path(uri.removeprefix("file://")).read_bytes()


def write_location(uri: str, data: bytes) -> None:
    """Write ``data`` at ``uri`` (``s3://`` through boto3, else a local file; folders made)."""
    if uri.startswith("s3://"):
        import boto3

        bucket, _, key = uri[5:].partition("/")
        boto3.client("s3").put_object(Bucket=bucket, Key=key, Body=data)
        return
    path = Path(uri.removeprefix("file://"))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _join(base: str, name: str) -> str:
    return base.rstrip("/") + "/" + name


class RuntimeFront:
    """The HTTP front. One front can serve several local endpoints (routed by endpoint name).

    Args:
        port: port on 127.0.0.1. Default: a free port.
        account: the account id used in messages and ARNs. Default: 000000000000.
        idle_timeout: seconds a connection may stay without a complete request. Default: 60.
        body_timeout: seconds a request body may take to arrive (then 408). Default: 60.
        max_payload_bytes: larger bodies are answered 413 unread. Default: 6 MiB (SageMaker's limit).
    """

    def __init__(
        self,
        *,
        port: int | None = None,
        account: str = "000000000000",
        idle_timeout: float = IDLE_TIMEOUT_S,
        body_timeout: float = BODY_TIMEOUT_S,
        max_payload_bytes: int = MAX_PAYLOAD_BYTES,
    ) -> None:
        self.account = account
        self.endpoints: dict[str, InvocationTarget] = {}
        self.async_routes: dict[str, AsyncRoute] = {}
        self._async_tasks: set[asyncio.Task[None]] = set()
        self.idle_timeout = idle_timeout
        self.body_timeout = body_timeout
        self.max_payload_bytes = max_payload_bytes
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", port or 0))
        self._sock.listen(512)  # many clients connect at once
        self._pool = ThreadPoolExecutor(HANDLER_THREADS, thread_name_prefix="cdk-triton-front")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        hosts = (f"127.0.0.1:{self.port}", f"localhost:{self.port}", f"[::1]:{self.port}")
        self._hosts = frozenset(hosts)
        self._origins = frozenset(f"http://{h}" for h in hosts)

    @property
    def port(self) -> int:
        return int(self._sock.getsockname()[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: pass it to boto3 as ``endpoint_url``."""
        return f"http://127.0.0.1:{self.port}"

    def add(self, endpoint: InvocationTarget) -> None:
        """Route ``/endpoints/<endpoint.name>/invocations`` to this endpoint."""
        self.endpoints[endpoint.name] = endpoint

    def add_async(self, endpoint: InvocationTarget, route: AsyncRoute) -> None:
        """Route ``/endpoints/<name>/async-invocations`` (and ``/invocations``) to this endpoint."""
        self.add(endpoint)
        self.async_routes[endpoint.name] = route

    def remove(self, name: str) -> None:
        """Stop routing an endpoint name (later calls get ValidationError, as for a deleted endpoint)."""
        self.endpoints.pop(name, None)
        self.async_routes.pop(name, None)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> RuntimeFront:
        """Serve in a daemon thread (its own event loop); returns once the front accepts requests."""
        if self._thread is None:
            ready = threading.Event()
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(
                target=self._serve, args=(ready,), name="cdk-triton-front", daemon=True
            )
            self._thread.start()
            ready.wait(30)
        return self

    def _serve(self, ready: threading.Event) -> None:
        loop = self._loop
        assert loop is not None
        asyncio.set_event_loop(loop)
        app = web.Application(middlewares=[self._guard], client_max_size=self.max_payload_bytes)
        app.router.add_post("/endpoints/{name}/invocations", self._invoke)
        app.router.add_post("/endpoints/{name}/async-invocations", self._invoke_async)
        app.router.add_get("/ping", self._ping)
        runner = _Runner(
            app,
            handle_signals=False,
            access_log=None,
            keepalive_timeout=self.idle_timeout,
            shutdown_timeout=1.0,
        )
        try:
            loop.run_until_complete(runner.setup())
            loop.run_until_complete(web.SockSite(runner, self._sock).start())
        finally:
            ready.set()
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())
        pending = asyncio.all_tasks(loop)  # connections still open: end their tasks before closing
        for task in pending:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.close()

    def stop(self) -> None:
        """Stop serving and close the listening socket."""
        thread, self._thread = self._thread, None
        if thread is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            thread.join(timeout=10)
        self._sock.close()
        self._pool.shutdown(wait=False, cancel_futures=True)

    # ------------------------------------------------------------------ requests
    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Refuse requests not meant for this front; answer routing errors with SageMaker's shapes."""
        refused = self.refusal(request)
        if refused is not None:
            return _response(refused, close=request.content_length != 0)
        try:
            return await handler(request)
        except web.HTTPException as exc:
            if exc.status == 405:
                reply = aws_error(
                    405,
                    "UnknownOperationException",
                    f"method {request.method} is not allowed on {request.path} (allowed: {exc.headers['Allow']})",
                )
                reply[1]["Allow"] = exc.headers["Allow"]
            elif exc.status == 413:
                reply = aws_error(
                    413,
                    "ValidationError",
                    f"Request body exceeds the {self.max_payload_bytes} bytes InvokeEndpoint limit",
                )
                return _response(reply, close=True)
            elif exc.status == 404:
                reply = aws_error(
                    404, "UnknownOperationException", f"no route for {request.method} {request.path}"
                )
            else:
                raise
            return _response(reply)

    def refusal(self, request: web.BaseRequest) -> Reply | None:
        """Why a request is refused (DNS rebinding, cross-site), or None: Host, Origin, Sec-Fetch-Site."""
        hosts = request.headers.getall("Host", [])
        get = request.headers.get
        if len(hosts) > 1 or (not hosts and request.version >= (1, 1)):
            return aws_error(400, "ValidationError", "an HTTP/1.1 request needs exactly one Host header")
        if hosts and hosts[0].lower() not in self._hosts:
            return aws_error(
                403,
                "AccessDeniedException",
                f"Host '{hosts[0]}' is not this local endpoint (allowed: {', '.join(sorted(self._hosts))})",
            )
        origin = get("Origin")
        if origin is not None and origin.lower() not in self._origins:
            return aws_error(
                403,
                "AccessDeniedException",
                f"cross-origin request from '{origin}' refused (a local endpoint)",
            )
        site = (get("Sec-Fetch-Site") or "").lower()
        if site in ("cross-site", "same-site"):
            return aws_error(403, "AccessDeniedException", f"{site} request refused (a local endpoint)")
        return None

    async def _ping(self, request: web.Request) -> web.Response:
        unhealthy = sorted(n for n, ep in self.endpoints.items() if not getattr(ep, "healthy", True))
        doc = {"endpoints": sorted(self.endpoints), "unhealthy": unhealthy}
        return _response(
            (503 if unhealthy else 200, {"Content-Type": "application/json"}, json.dumps(doc).encode())
        )

    async def _invoke(self, request: web.Request) -> web.Response:
        length = request.content_length
        if length is not None and length > self.max_payload_bytes:
            return _response(
                aws_error(
                    413,
                    "ValidationError",
                    f"Request body of {length} bytes exceeds the {self.max_payload_bytes} bytes InvokeEndpoint limit",
                ),
                close=True,
            )
        name = request.match_info["name"]
        target = self.endpoints.get(name)
        if target is None:
            return _response(
                aws_error(400, "ValidationError", f"Endpoint {name} of account {self.account} not found."),
                close=bool(length),
            )
        try:
            async with asyncio.timeout(self.body_timeout):
                body = await request.read()
        except TimeoutError:
            return _response(
                aws_error(
                    408, "RequestTimeout", f"the request body did not arrive within {self.body_timeout:g} s"
                ),
                close=True,
            )
        try:
            fast = getattr(target, "handle_invocation_async", None)
            answer: Reply | None = await fast(body, request.headers) if fast is not None else None
            if answer is None:  # no fast path for this request: the handler in the thread pool
                headers = {k.lower(): v for k, v in request.headers.items()}
                answer = await asyncio.get_running_loop().run_in_executor(
                    self._pool, target.handle_invocation, body, headers
                )
            reply = answer
        except Exception as exc:  # never let a handler failure go unanswered
            log.exception("local endpoint %s failed", name)
            reply = aws_error(500, "InternalFailure", f"{type(exc).__name__}: {exc}")
        return _response(reply)

    async def _invoke_async(self, request: web.Request) -> web.Response:
        """``InvokeEndpointAsync``: 202 at once; the invocation runs in the background (module doc)."""
        name = request.match_info["name"]
        target, route = self.endpoints.get(name), self.async_routes.get(name)
        await request.read()  # an inline body is not used: the payload is at InputLocation
        if target is None or route is None:
            what = "not found" if target is None else "is not an asynchronous endpoint"
            return _response(
                aws_error(400, "ValidationError", f"Endpoint {name} of account {self.account} {what}.")
            )
        get = request.headers.get
        input_location = get("X-Amzn-SageMaker-InputLocation")
        if not input_location:
            return _response(
                aws_error(400, "ValidationError", "InputLocation is required (s3://, file:// or a path)")
            )
        timeout_text = get("X-Amzn-SageMaker-InvocationTimeoutSeconds")
        try:
            timeout = int(timeout_text) if timeout_text else route.invocation_timeout_s
        except ValueError:
            timeout = -1
        if not 1 <= timeout <= 3600:
            return _response(
                aws_error(400, "ValidationError", f"InvocationTimeoutSeconds {timeout_text!r} is not 1..3600")
            )
        inference_id = get("X-Amzn-SageMaker-Inference-Id") or str(uuid.uuid4())
        output = _join(route.output_location, f"{inference_id}.out")
        failure = _join(route.failure_location, f"{inference_id}-error.out")
        headers = {"content-type": get("X-Amzn-SageMaker-Content-Type") or "application/octet-stream"}
        if get("X-Amzn-SageMaker-Accept"):
            headers["accept"] = get("X-Amzn-SageMaker-Accept") or ""
        task = asyncio.get_running_loop().create_task(
            self._run_async(target, input_location, headers, timeout, output, failure)
        )
        self._async_tasks.add(task)
        task.add_done_callback(self._async_tasks.discard)
        return _response(
            (
                202,
                {
                    "Content-Type": "application/json",
                    "X-Amzn-SageMaker-OutputLocation": output,
                    "X-Amzn-SageMaker-FailureLocation": failure,
                },
                json.dumps({"InferenceId": inference_id}).encode(),
            )
        )

    async def _run_async(
        self,
        target: InvocationTarget,
        input_location: str,
        headers: dict[str, str],
        timeout: int,
        output: str,
        failure: str,
    ) -> None:
        loop = asyncio.get_running_loop()
        try:
            body = await loop.run_in_executor(self._pool, read_location, input_location)
            async with asyncio.timeout(timeout):
                status, _, answer = await loop.run_in_executor(
                    self._pool, target.handle_invocation, body, headers
                )
            if 200 <= status < 300:
                await loop.run_in_executor(self._pool, write_location, output, answer)
                return
            error = answer
        except TimeoutError:
            error = f"the invocation did not finish within InvocationTimeoutSeconds {timeout}".encode()
        except Exception as exc:  # the failure location says why, as SageMaker's does
            error = f"{type(exc).__name__}: {exc}".encode()
        await loop.run_in_executor(self._pool, write_location, failure, error)


def invoke_front(
    url: str,
    endpoint: str,
    body: bytes,
    content_type: str,
    target_model: str | None = None,
    accept: str | None = None,
    timeout: float = 120.0,
    component: str | None = None,
) -> Reply:
    """``POST /endpoints/<endpoint>/invocations`` on a front URL: (status, lower-case headers, body).

    ``component``: the ``InferenceComponentName`` (sent as ``X-Amzn-SageMaker-Inference-Component``)."""
    headers = {"Content-Type": content_type}
    if accept:
        headers["Accept"] = accept
    if target_model is not None:
        headers["X-Amzn-SageMaker-Target-Model"] = target_model
    if component is not None:
        headers["X-Amzn-SageMaker-Inference-Component"] = component
    host, port = url.split("://", 1)[1].rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
    try:
        conn.request("POST", f"/endpoints/{urllib.parse.quote(endpoint, safe='')}/invocations", body, headers)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


class _OnFront(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def url(self) -> str: ...


class FrontInvoke:
    """``invoke`` for whatever has an endpoint ``name`` and a front ``url`` (local endpoints, the detached client)."""

    def invoke(
        self: _OnFront,
        body: bytes,
        content_type: str,
        target_model: str | None = None,
        accept: str | None = None,
        timeout: float = 120.0,
        component: str | None = None,
    ) -> Reply:
        """``InvokeEndpoint`` through the front over HTTP: (status, lower-case headers, body);
        ``component`` is the ``InferenceComponentName``."""
        return invoke_front(self.url, self.name, body, content_type, target_model, accept, timeout, component)


class FrontServed(FrontInvoke):
    """A local endpoint routed on a :class:`RuntimeFront`: a context manager (start/stop), ``url`` and ``invoke``."""

    front: RuntimeFront | None

    def start(self) -> Self:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The SageMaker Runtime front, e.g. ``http://127.0.0.1:PORT`` (boto3 ``endpoint_url``)."""
        if self.front is None:
            raise RuntimeError("the local endpoint is not started")
        return self.front.url
