"""Pieces the local-endpoint benchmarks share: the load job, per-process CPU accounting, the in-process floor,
the report file."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cdk_triton.local.load import LoadResult, run_load


def load_job(args: tuple) -> LoadResult:
    """One closed-loop phase in a worker process: ``(socket, url, endpoint, body, ctype, concurrency, requests)``.

    With a ``url`` the requests go through the SageMaker Runtime front; without, straight to Triton's
    SageMaker port through the namespace's Unix ``socket``.
    """
    sock, url, endpoint, body, ctype, concurrency, requests = args
    if url:
        return run_load(url, endpoint, body, ctype, concurrency=concurrency, requests=requests)
    return run_load(
        "http://localhost:0",
        "",
        body,
        ctype,
        concurrency=concurrency,
        requests=requests,
        unix_socket=sock,
        path="/invocations",
    )


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def role(pid: int, launcher: int) -> str:
    """What a process of the local server is: the socket bridge (its launcher), a backend stub, tritonserver."""
    if pid == launcher:
        return "socket_bridge"
    cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    return "backend_stubs" if cmd.endswith(b"_stub") else "tritonserver"


def cpu_by_role(server: Any, run: Callable[[], LoadResult]) -> tuple[LoadResult, dict[str, float]]:
    """Run one phase; CPU seconds it cost per role: client, this process (the front), and each server process."""
    pids = server.process_ids() if server is not None else []
    before = {p: cpu_s(p) for p in pids}
    me0 = time.process_time()
    result = run()
    cpu: dict[str, float] = {"client": result.client_cpu_s, "this_process": time.process_time() - me0}
    for p in pids:
        r = role(p, server.proc.pid)
        cpu[r] = cpu.get(r, 0.0) + cpu_s(p) - before[p]
    return result, cpu


def threaded_floor(sessions: Sequence[Any], run_one: Callable[[Any], Any], requests: int) -> dict:
    """The in-process floor: one thread per session, ``requests`` calls in all; summary + CPU ms per request."""
    out, cpu, lock = LoadResult(), [], threading.Lock()

    def work(sess: Any, n: int) -> None:
        mine, t_cpu = [], time.thread_time()
        for _ in range(n):
            t0 = time.perf_counter()
            run_one(sess)
            mine.append(time.perf_counter() - t0)
        with lock:
            out.latencies.extend(mine)
            cpu.append(time.thread_time() - t_cpu)

    threads = [threading.Thread(target=work, args=(s, requests // len(sessions))) for s in sessions]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.wall_s = time.perf_counter() - t0
    summary = out.summary()
    summary["cpu_ms_per_request"] = {"onnxruntime": round(sum(cpu) / len(out.latencies) * 1e3, 3)}
    return summary


def write_onnx_endpoints(
    root: Path, onnx_path: Path, config: dict[str, Any], batching: dict[str, Any]
) -> Path:
    """A manifest of two SME endpoints, ``nodb`` and ``db``, serving one ONNX model with dynamic batching
    off / on (``config``: its ModelConfig as a dict, without dynamic_batching); returns the manifest path."""
    from google.protobuf import json_format, text_format
    from tritonclient.grpc import model_config_pb2 as mc

    from cdk_triton.local.repository import tree_sha256

    name = config["name"]
    endpoints = {}
    for key, dynamic in (("nodb", {}), ("db", {"dynamic_batching": batching})):
        cfg = json_format.ParseDict({**config, **dynamic}, mc.ModelConfig())
        repo = root / key / "repository"
        (repo / name / "1").mkdir(parents=True)
        (repo / name / "config.pbtxt").write_text(text_format.MessageToString(cfg))
        (repo / name / "1" / "model.onnx").write_bytes(onnx_path.read_bytes())
        endpoints[key] = {
            "name": key,
            "mode": "SingleModel",
            "instance_types": ["ml.g5.xlarge"],
            "default_model": name,
            "models": [name],
            "packaging": "directory",
            "local_path": f"{key}/repository",
            "s3_uri": f"s3://b/{key}/",
            "sha256": tree_sha256(repo),
        }
    manifest = {
        "schema_version": 1,
        "triton_version": "24.09",
        "uploaded": False,
        "artifact_location": {"bucket": "b"},
        "models": {},
        "endpoints": endpoints,
    }
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root / "manifest.json"


def write_report(name: str, report: dict[str, Any]) -> Path:
    """Write ``bench/results/<name>.json`` and print its ratios and where it went."""
    out = Path(__file__).resolve().parent / "results" / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report["ratios"], indent=1))
    print(f"wrote {out} in {report['wall_s']} s")
    return out
