"""A small asyncio load generator for the local front (keep-alive HTTP/1.1, one connection per client).

Used by ``cdk-triton bench``, the load test and bench/local_bench.py. One asyncio loop drives
every client: about 0.13 ms of CPU per request (measured on 2 cores at concurrency 16, under 0.1
core busy), far from being the bottleneck; ``LoadResult.client_cpu_s`` records it for every run.
:func:`run_load_processes` splits the clients over processes.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import re
import statistics
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cdk_triton.local.client import FrontClient

_CONTENT_LENGTH = re.compile(rb"(?i)\r\ncontent-length:\s*(\d+)")


@dataclass
class LoadResult:
    """Latencies (seconds) of every request, failures, and wall time."""

    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    first_error: str | None = None
    wall_s: float = 0.0
    statuses: dict[int, int] = field(default_factory=dict)
    #: CPU seconds the load generator itself used (its process): with ``wall_s``, how busy the client was.
    client_cpu_s: float = 0.0

    @property
    def requests(self) -> int:
        return len(self.latencies) + self.errors

    @property
    def throughput(self) -> float:
        return len(self.latencies) / self.wall_s if self.wall_s else 0.0

    def percentile(self, q: float) -> float:
        if not self.latencies:
            return float("nan")
        data = sorted(self.latencies)
        return data[min(len(data) - 1, int(round(q / 100 * (len(data) - 1))))]

    def summary(self) -> dict[str, float | int]:
        return {
            "requests": self.requests,
            "errors": self.errors,
            "throughput_rps": round(self.throughput, 1),
            "p50_ms": round(self.percentile(50) * 1e3, 3),
            "p99_ms": round(self.percentile(99) * 1e3, 3),
            "mean_ms": round(statistics.fmean(self.latencies) * 1e3, 3) if self.latencies else float("nan"),
            # cores the client kept busy (1.0 = one core saturated: then the client is the bottleneck)
            "client_cores": round(self.client_cpu_s / self.wall_s, 3) if self.wall_s else 0.0,
        }

    def merge(self, other: LoadResult) -> None:
        self.latencies += other.latencies
        self.errors += other.errors
        self.first_error = self.first_error or other.first_error
        self.client_cpu_s += other.client_cpu_s
        for k, v in other.statuses.items():
            self.statuses[k] = self.statuses.get(k, 0) + v


async def _client(
    host: str,
    port: int,
    path: str,
    headers: bytes,
    body: bytes,
    count: int,
    out: LoadResult,
    unix_socket: str | None,
) -> None:
    if unix_socket:
        reader, writer = await asyncio.open_unix_connection(unix_socket)
    else:
        reader, writer = await asyncio.open_connection(host, port)
    request = (
        (f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Length: {len(body)}\r\n").encode()
        + headers
        + b"\r\n"
        + body
    )
    try:
        for _ in range(count):
            t0 = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")  # one call for the status line and headers
            match = _CONTENT_LENGTH.search(head)
            payload = await reader.readexactly(int(match.group(1)) if match else 0)
            elapsed = time.perf_counter() - t0
            status = int(head[9:12])
            out.statuses[status] = out.statuses.get(status, 0) + 1
            if status == 200:
                out.latencies.append(elapsed)
            else:
                out.errors += 1
                out.first_error = out.first_error or f"{status}: {payload[:300]!r}"
    finally:
        writer.close()


async def _run(
    url: str,
    path: str,
    body: bytes,
    headers: dict[str, str],
    concurrency: int,
    requests: int,
    unix_socket: str | None = None,
) -> LoadResult:
    host_port = url.split("://", 1)[1].split("/", 1)[0]
    host, port = host_port.rsplit(":", 1)
    hdr = b"".join(f"{k}: {v}\r\n".encode() for k, v in headers.items())
    out = LoadResult()
    per = [requests // concurrency + (1 if i < requests % concurrency else 0) for i in range(concurrency)]
    t0 = time.perf_counter()
    results = await asyncio.gather(
        *(_client(host, int(port), path, hdr, body, n, out, unix_socket) for n in per if n),
        return_exceptions=True,
    )
    out.wall_s = time.perf_counter() - t0
    for r in results:
        if isinstance(r, BaseException):
            out.errors += 1
            out.first_error = out.first_error or repr(r)
    return out


def run_load(
    url: str,
    endpoint: str,
    body: bytes,
    content_type: str,
    *,
    target_model: str | None = None,
    concurrency: int = 16,
    requests: int = 2000,
    unix_socket: str | None = None,
    path: str | None = None,
) -> LoadResult:
    """Send ``requests`` InvokeEndpoint calls with ``concurrency`` keep-alive clients; return latencies.

    ``unix_socket`` + ``path`` (e.g. the server's socket and ``/invocations``) bypass the front and
    talk to Triton's SageMaker port directly (benchmarks of server settings).
    """
    headers = {"Content-Type": content_type}
    if target_model:
        headers["X-Amzn-SageMaker-Target-Model"] = target_model
    cpu0 = time.process_time()
    result = asyncio.run(
        _run(
            url,
            path or f"/endpoints/{endpoint}/invocations",
            body,
            headers,
            concurrency,
            requests,
            unix_socket,
        )
    )
    result.client_cpu_s = time.process_time() - cpu0  # this process: the client, plus a front served here
    return result


def _worker(args: tuple) -> LoadResult:
    return run_load(*args[:4], target_model=args[4], concurrency=args[5], requests=args[6])


def run_load_processes(
    url: str,
    endpoint: str,
    body: bytes,
    content_type: str,
    *,
    target_model: str | None = None,
    concurrency: int = 16,
    requests: int = 2000,
    processes: int = 2,
) -> LoadResult:
    """Like :func:`run_load`, with the clients split over ``processes`` processes."""
    processes = max(1, min(processes, concurrency))
    if processes == 1:
        return run_load(
            url,
            endpoint,
            body,
            content_type,
            target_model=target_model,
            concurrency=concurrency,
            requests=requests,
        )
    jobs = []
    for i in range(processes):
        c = concurrency // processes + (1 if i < concurrency % processes else 0)
        r = requests // processes + (1 if i < requests % processes else 0)
        jobs.append((url, endpoint, body, content_type, target_model, c, r))
    t0 = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        parts = pool.map(_worker, jobs)
    out = LoadResult(wall_s=time.perf_counter() - t0)
    for p in parts:
        out.merge(p)
    out.wall_s = max(p.wall_s for p in parts)
    return out


def bench_sample(
    client: FrontClient,
    *,
    target_model: str | None = None,
    binary: bool = False,
    concurrency: int = 16,
    requests: int = 2000,
) -> LoadResult:
    """``cdk-triton bench``: load a detached endpoint with its manifest sample (:func:`run_load_processes`)."""
    from cdk_triton.local.client import build_request, resolve_sample, tensors_from_kserve

    sample, header = resolve_sample(client, target_model)
    body, ctype = build_request(
        tensors_from_kserve(json.loads(client.manifest.resolve(sample.request).read_text())),
        binary=binary,
    )
    return run_load_processes(
        client.url,
        client.name,
        body,
        ctype,
        target_model=header,
        concurrency=concurrency,
        requests=requests,
    )
