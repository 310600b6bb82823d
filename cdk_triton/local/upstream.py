"""The front's own client to the server: keep-alive HTTP/1.1 over the namespace's Unix socket, on asyncio.

A single-model invocation is forwarded from the front's event loop with no thread hop and no
``http.client`` (whose header parsing costs more than the rest of the hop): the request is one
``write`` of a prebuilt head plus the body, the response head is split by hand, the body read by
its Content-Length (or chunks). Idle connections are kept for the next request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

#: Idle connections kept per pool (the front's loop runs at most this many requests at once anyway).
MAX_IDLE = 64


class UpstreamPool:
    """Kept-alive asyncio connections to one Unix socket; use from one event loop."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    async def request(
        self, method: str, path: str, body: bytes, headers: Mapping[str, str]
    ) -> tuple[int, dict[str, str], bytes]:
        """One request: (status, lower-case headers, body). A stale kept-alive connection is retried once."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # connections belong to the loop that made them
            self._idle, self._loop = [], loop
        head = f"{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: {len(body)}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items())
        payload = head.encode("latin-1") + b"\r\n" + body
        while True:
            reused = bool(self._idle)
            if reused:
                reader, writer = self._idle.pop()
            else:
                reader, writer = await asyncio.open_unix_connection(self.path)
            try:
                writer.write(payload)
                status, out, data, keep = await _read_response(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                writer.close()
                if reused:
                    continue  # the server closed an idle connection: a fresh one
                raise
            except BaseException:
                writer.close()
                raise
            if keep and len(self._idle) < MAX_IDLE:
                self._idle.append((reader, writer))
            else:
                writer.close()
            return status, out, data

    def close(self) -> None:
        idle, self._idle = self._idle, []
        for _, writer in idle:
            writer.close()


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes, bool]:
    raw = await reader.readuntil(b"\r\n\r\n")
    lines = raw[:-4].decode("latin-1").split("\r\n")
    version, status = lines[0].split(" ", 2)[:2]
    headers: dict[str, str] = {}
    for line in lines[1:]:
        key, _, value = line.partition(":")
        headers[key.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        while size := int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16):
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
        while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
            pass
        data = b"".join(parts)
    elif "content-length" in headers:
        data = await reader.readexactly(int(headers["content-length"]))
    else:  # HTTP/1.0-style: the body runs to EOF
        data = await reader.read()
        return int(status), headers, data, False
    keep = headers.get("connection", "").lower() != "close" and version == "HTTP/1.1"
    return int(status), headers, data, keep
