"""The front's asyncio client to the server, the event-loop fast path, and the auto-complete scan.

No tritonserver: a small Unix-socket HTTP server answers with Content-Length, chunked bodies,
``Connection: close``, or closes a kept-alive connection, and records what it received.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from cdk_triton.local.front import Reply, RuntimeFront, invoke_front
from cdk_triton.local.repository import uses_auto_complete
from cdk_triton.local.upstream import UpstreamPool
from tests.unit.local.support import write_tar_gz


class FakeServer:
    """Answers each request per ``mode``; records (connection number, request head, body)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.mode = "length"
        self.seen: list[tuple[int, bytes, bytes]] = []
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(16)
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn, self.connections), daemon=True).start()

    def _serve(self, conn: socket.socket, number: int) -> None:
        data = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, data = data.split(b"\r\n\r\n", 1)
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                while len(data) < length:
                    data += conn.recv(65536)
                body, data = data[:length], data[length:]
                self.seen.append((number, head, body))
                reply = b"echo:" + body
                if self.mode == "chunked":
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Type: a/b\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + b"%x\r\n%s\r\n0\r\n\r\n" % (len(reply), reply)
                    )
                elif self.mode == "close":
                    conn.sendall(b"HTTP/1.1 400 Bad\r\nConnection: close\r\nContent-Length: 3\r\n\r\nbad")
                    return
                elif self.mode == "drop":  # answer, then close the kept-alive connection unannounced
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(reply), reply))
                    self.mode = "length"
                    return
                else:
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Type: a/b\r\nContent-Length: %d\r\n\r\n%s"
                        % (len(reply), reply)
                    )

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeServer]:
    server = FakeServer(str(tmp_path / "s.sock"))
    yield server
    server.close()


def test_pool_keeps_connections_alive_and_passes_bodies_through(fake: FakeServer) -> None:
    async def go() -> list[tuple[int, dict[str, str], bytes]]:
        pool = UpstreamPool(fake.path)
        out = [
            await pool.request("POST", "/invocations", b"x" * n, {"Content-Type": "t/u"}) for n in (1, 2, 3)
        ]
        pool.close()
        return out

    replies = asyncio.run(go())
    assert [r[2] for r in replies] == [b"echo:x", b"echo:xx", b"echo:xxx"]
    assert replies[0][:2] == (200, {"content-type": "a/b", "content-length": "6"})
    assert {n for n, _, _ in fake.seen} == {1}  # one connection for all three
    assert fake.seen[0][1].startswith(b"POST /invocations HTTP/1.1\r\n")
    assert b"\r\nContent-Type: t/u" in fake.seen[0][1]


def test_pool_reads_chunked_bodies_and_honours_connection_close(fake: FakeServer) -> None:
    async def go() -> list[tuple[int, dict[str, str], bytes]]:
        pool = UpstreamPool(fake.path)
        fake.mode = "chunked"
        first = await pool.request("POST", "/p", b"ab", {})
        fake.mode = "close"
        second = await pool.request("POST", "/p", b"cd", {})
        fake.mode = "length"
        third = await pool.request("POST", "/p", b"ef", {})
        return [first, second, third]

    first, second, third = asyncio.run(go())
    assert first[0] == 200 and first[2] == b"echo:ab"
    assert second[0] == 400 and second[2] == b"bad"
    assert third[2] == b"echo:ef"
    assert [n for n, _, _ in fake.seen] == [1, 1, 2]  # a new connection after Connection: close


def test_a_kept_alive_connection_closed_by_the_server_is_retried_on_a_new_one(fake: FakeServer) -> None:
    async def go() -> bytes:
        pool = UpstreamPool(fake.path)
        fake.mode = "drop"
        await pool.request("POST", "/p", b"1", {})
        await asyncio.sleep(0.05)
        return (await pool.request("POST", "/p", b"2", {}))[2]

    assert asyncio.run(go()) == b"echo:2"
    assert [n for n, _, _ in fake.seen] == [1, 2]


class Both:
    """A target with both paths: the fast one answers unless the request asks for the pool."""

    name = "ep"

    def __init__(self) -> None:
        self.paths: list[str] = []

    async def handle_invocation_async(self, body: bytes, headers) -> Reply | None:  # type: ignore[no-untyped-def]
        if headers.get("accept") == "pool":
            return None
        self.paths.append("fast")
        return 200, {"Content-Type": headers.get("content-type", "")}, b"fast:" + body

    def handle_invocation(self, body: bytes, headers: dict[str, str]) -> Reply:
        self.paths.append("pool")
        return 200, {"Content-Type": headers["content-type"]}, b"pool:" + body


def test_front_uses_the_event_loop_path_and_falls_back_to_the_thread_pool() -> None:
    front = RuntimeFront().start()
    target = Both()
    front.add(target)  # type: ignore[arg-type]
    try:
        fast = invoke_front(front.url, "ep", b"{}", "application/json")
        pooled = invoke_front(front.url, "ep", b"{}", "application/json", accept="pool")
    finally:
        front.stop()
    assert fast[0] == 200 and fast[2] == b"fast:{}" and fast[1]["content-type"] == "application/json"
    assert pooled[0] == 200 and pooled[2] == b"pool:{}"
    assert "x-amzn-requestid" in fast[1] and "x-amzn-requestid" in pooled[1]
    assert target.paths == ["fast", "pool"]


def test_auto_complete_stays_on_only_for_a_python_model_that_defines_it(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    (plain / "pre" / "1").mkdir(parents=True)
    (plain / "pre" / "1" / "model.py").write_text("class TritonPythonModel:\n    def execute(self, r): ...\n")
    assert not uses_auto_complete(plain)
    hooked = tmp_path / "hooked"
    (hooked / "pre" / "1").mkdir(parents=True)
    (hooked / "pre" / "1" / "model.py").write_text(
        "class TritonPythonModel:\n    @staticmethod\n    def auto_complete_config(c):\n        return c\n"
    )
    assert uses_auto_complete(hooked)
    quiet = write_tar_gz(tmp_path / "a.tar.gz", {"m/1/model.onnx": b"\0", "m/config.pbtxt": b"name: 'm'"})
    loud = write_tar_gz(tmp_path / "b.tar.gz", {"p/1/model.py": b"def auto_complete_config(c): return c"})
    assert not uses_auto_complete(archives=(quiet,))
    assert uses_auto_complete(archives=(quiet, loud))
    assert json.dumps(uses_auto_complete()) == "false"


def test_the_server_disables_auto_complete_only_when_told(tmp_path: Path) -> None:
    from cdk_triton.config.server_options import ServerOptions
    from cdk_triton.local.server import TritonServer

    def argv(**kw: bool) -> list[str]:
        server = TritonServer(
            options=ServerOptions(), model_repository=tmp_path, workdir=tmp_path, namespace=False, **kw
        )
        return server.argv("tritonserver", "/b")

    assert "--disable-auto-complete-config" not in argv()
    assert "--disable-auto-complete-config" in argv(auto_complete_config=False)
