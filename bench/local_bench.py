"""Local endpoint benchmark: CPU serving settings measured side by side with a real Triton server.

One run, one model (an ONNX MLP, a few milliseconds of single-thread compute per request), printed
as ratios:

- dynamic batching on vs off (one instance), at concurrency 1 and 16;
- one instance vs one instance per core (the overlay's default), at concurrency 1 and 16;
- the in-process floor: the same model and inputs in onnxruntime in one process (one session per
  worker thread, one intra-op thread each), at concurrency 1 and 16;
- the SageMaker Runtime front's own cost (same server, through the 127.0.0.1 front);
- Triton's verbose log (the container's default, ``SAGEMAKER_TRITON_LOG_VERBOSE``) on vs off.

The servers run with ``log_verbose=0`` (at level 1 Triton writes ~1.6 kB of log per request; its
cost is measured separately). For one instance per core at concurrency 16 the CPU milliseconds per
request of every process (backend stubs, tritonserver, the socket bridge, the client) are recorded
next to the floor's, to show where the time goes (through the front: the client's and the front's). The load generator is an
asyncio keep-alive client in a separate process, talking to Triton's SageMaker port through the
namespace's Unix socket; each result records ``client_cores`` (the client's CPU time / wall time)
so a client bottleneck would show. Results: bench/results/local.json, with the load average
before the run (the machine may be shared). Each setting runs in two interleaved rounds and keeps
its best. Run: ``.venv/bin/python bench/local_bench.py`` (about a minute on 2 cores).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.local_common import (  # noqa: E402
    cpu_by_role,
    load_job,
    threaded_floor,
    write_onnx_endpoints,
    write_report,
)
from cdk_triton.local.load import LoadResult  # noqa: E402

IN, HIDDEN, OUT, ROWS = 256, 2048, 16, 32
C1_REQUESTS, C16_REQUESTS, WARMUP, ROUNDS = 100, 500, 30, 2


def _write_model(root: Path) -> tuple[Path, np.ndarray]:
    """Two SME endpoints (dynamic batching off / on) serving the same ONNX MLP; returns (manifest, input)."""
    import torch

    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(IN, HIDDEN),
        torch.nn.ReLU(),
        torch.nn.Linear(HIDDEN, HIDDEN),
        torch.nn.ReLU(),
        torch.nn.Linear(HIDDEN, OUT),
    ).eval()
    onnx_path = root / "mlp.onnx"
    torch.onnx.export(
        net,
        (torch.zeros(1, IN),),
        str(onnx_path),
        input_names=["x"],
        output_names=["y"],
        dynamic_axes={"x": {0: "b"}, "y": {0: "b"}},
        opset_version=17,
        dynamo=False,
        external_data=False,
    )
    config = {
        "name": "mlp",
        "platform": "onnxruntime_onnx",
        "max_batch_size": 64,
        "input": [{"name": "x", "data_type": "TYPE_FP32", "dims": [IN]}],
        "output": [{"name": "y", "data_type": "TYPE_FP32", "dims": [OUT]}],
    }
    manifest = write_onnx_endpoints(root, onnx_path, config, {"max_queue_delay_microseconds": 500})
    x = np.random.default_rng(0).standard_normal((ROWS, IN)).astype(np.float32)
    return manifest, x


def _measure(
    pool, sock: str, body: bytes, ctype: str, url: str | None = None, endpoint: str = "", server=None
) -> dict:
    """c1 and c16 results; with ``server``, the CPU milliseconds per c16 request of each process."""
    job = (sock, url or "", endpoint, body, ctype)
    pool.apply(load_job, (job + (4, WARMUP),))
    c1 = pool.apply(load_job, (job + (1, C1_REQUESTS),))
    c16, cpu = cpu_by_role(server, lambda: pool.apply(load_job, (job + (16, C16_REQUESTS),)))
    assert c1.errors == 0 and c16.errors == 0, (c1.first_error, c16.first_error)
    out = {"c1": c1.summary(), "c16": c16.summary()}
    front = cpu.pop("this_process")  # through the front: the front runs in this process
    if url:
        out["c16"]["cpu_ms_per_request"] = {
            "client": round(c16.client_cpu_s / C16_REQUESTS * 1e3, 3),
            "front": round(front / C16_REQUESTS * 1e3, 3),
        }
    if server is not None:
        out["c16"]["cpu_ms_per_request"] = {k: round(v / C16_REQUESTS * 1e3, 3) for k, v in cpu.items()}
    return out


def _keep_best(results: dict, label: str, new: dict) -> None:
    """Best c1 latency and best c16 throughput over the rounds."""
    old = results.get(label)
    if old is None:
        results[label] = new
        return
    if new["c1"]["p50_ms"] < old["c1"]["p50_ms"]:
        old["c1"] = new["c1"]
    if new["c16"]["throughput_rps"] > old["c16"]["throughput_rps"]:
        old["c16"] = new["c16"]


def _floor(path: Path, x: np.ndarray) -> dict:
    """The same model and inputs in onnxruntime in this process: the best a server could do."""
    import onnxruntime as ort

    def session():
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])

    s = session()
    for _ in range(WARMUP):
        s.run(["y"], {"x": x})
    lat = []
    for _ in range(C1_REQUESTS):
        t0 = time.perf_counter()
        s.run(["y"], {"x": x})
        lat.append(time.perf_counter() - t0)
    c1 = LoadResult(latencies=lat, wall_s=sum(lat))
    workers = os.cpu_count() or 1
    sessions = [session() for _ in range(workers)]
    c16 = threaded_floor(sessions, lambda sess: sess.run(["y"], {"x": x}), C16_REQUESTS)
    return {"c1": c1.summary(), "c16": c16, "workers": workers}


def main() -> dict:
    import onnxruntime
    import tritonclient

    from cdk_triton.config.manifest import read_manifest
    from cdk_triton.config.server_options import ServerOptions
    from cdk_triton.local import CpuOverlay, LocalEndpoint, build_request

    load_before = os.getloadavg()
    quiet, verbose = ServerOptions(log_verbose=0), ServerOptions(log_verbose=1)
    t_start = time.perf_counter()
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="cdk-triton-bench-") as tmp:
        manifest_path, x = _write_model(Path(tmp))
        manifest = read_manifest(manifest_path)
        body, ctype = build_request({"x": x}, binary=True)
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(1) as pool:
            configs = (
                ("one_instance", "nodb", CpuOverlay(instance_count=1), quiet),
                ("one_instance_dynamic_batching", "db", CpuOverlay(instance_count=1), quiet),
                ("one_per_core", "nodb", CpuOverlay(), quiet),
                ("one_per_core_dynamic_batching", "db", CpuOverlay(), quiet),
                ("one_per_core_verbose_log", "nodb", CpuOverlay(), verbose),
            )
            for round_ in range(ROUNDS):  # interleaved rounds; the best of each: the machine is shared
                for label, endpoint, overlay, options in configs:
                    with LocalEndpoint(manifest, endpoint, overlay=overlay, server_options=options) as ep:
                        assert ep.server is not None
                        server = ep.server if label == "one_per_core" else None
                        _keep_best(
                            results, label, _measure(pool, ep.server.socket_path, body, ctype, server=server)
                        )
                        if label == "one_per_core":
                            front = _measure(pool, "", body, ctype, url=ep.url, endpoint=endpoint)
                            _keep_best(results, "one_per_core_through_front", front)
                    print(f"round {round_ + 1} {label}: {json.dumps(results[label])}", flush=True)
                _keep_best(results, "in_process_floor", _floor(Path(tmp) / "mlp.onnx", x))

    def tput(k: str, c: str) -> float:
        return results[k][c]["throughput_rps"]

    def p50(k: str, c: str) -> float:
        return results[k][c]["p50_ms"]

    ratios = {
        "c16_throughput_one_per_core_vs_one_instance": tput("one_per_core", "c16")
        / tput("one_instance", "c16"),
        "c16_throughput_dynamic_batching_vs_off_one_instance": tput("one_instance_dynamic_batching", "c16")
        / tput("one_instance", "c16"),
        "c1_p50_latency_dynamic_batching_vs_off_one_instance": p50("one_instance_dynamic_batching", "c1")
        / p50("one_instance", "c1"),
        "c16_throughput_one_per_core_dynamic_batching_vs_one_per_core": tput(
            "one_per_core_dynamic_batching", "c16"
        )
        / tput("one_per_core", "c16"),
        "c16_throughput_one_per_core_vs_in_process_floor": tput("one_per_core", "c16")
        / tput("in_process_floor", "c16"),
        "c1_p50_latency_one_instance_vs_in_process_floor": p50("one_instance", "c1")
        / p50("in_process_floor", "c1"),
        "c16_throughput_front_vs_direct": tput("one_per_core_through_front", "c16")
        / tput("one_per_core", "c16"),
        "c16_throughput_verbose_log_vs_off": tput("one_per_core_verbose_log", "c16")
        / tput("one_per_core", "c16"),
        "c16_client_cores_max": max(
            results[k]["c16"]["client_cores"] for k in results if k != "in_process_floor"
        ),
    }
    summary = [
        {
            "label": "one instance per core vs one instance, throughput at concurrency 16",
            "value": ratios["c16_throughput_one_per_core_vs_one_instance"],
            "unit": "x",
            "target": ">= 1.6x",
        },
        {
            "label": "dynamic batching on vs off (one instance), throughput at concurrency 16",
            "value": ratios["c16_throughput_dynamic_batching_vs_off_one_instance"],
            "unit": "x",
            "target": None,
        },
        {
            "label": "dynamic batching on vs off (one instance), p50 latency at concurrency 1",
            "value": ratios["c1_p50_latency_dynamic_batching_vs_off_one_instance"],
            "unit": "x",
            "target": None,
        },
        {
            "label": "local Triton (one per core) vs in-process onnxruntime floor, throughput at concurrency 16",
            "value": ratios["c16_throughput_one_per_core_vs_in_process_floor"],
            "unit": "x",
            "target": None,
        },
        {
            "label": "local Triton (one instance) vs in-process floor, p50 latency at concurrency 1",
            "value": ratios["c1_p50_latency_one_instance_vs_in_process_floor"],
            "unit": "x",
            "target": None,
        },
        {
            "label": "through the SageMaker Runtime front vs direct, throughput at concurrency 16",
            "value": ratios["c16_throughput_front_vs_direct"],
            "unit": "x",
            "target": None,  # a reference: it measures the CPU stand-ins, not what users deploy
        },
        {
            "label": "Triton verbose log (container default) vs off, throughput at concurrency 16",
            "value": ratios["c16_throughput_verbose_log_vs_off"],
            "unit": "x",
            "target": None,
        },
    ]
    report = {
        "name": "local",
        "command": ".venv/bin/python bench/local_bench.py",
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.system()}",
        "summary": summary,
        "benchmark": "local endpoint CPU settings (real tritonserver 2.51 from nvidia-pytriton, python-based onnxruntime)",
        "model": f"ONNX MLP {IN}-{HIDDEN}-{HIDDEN}-{OUT}, {ROWS} rows per request, binary+json payload",
        "environment": {
            "onnxruntime": onnxruntime.__version__,
            "tritonclient": getattr(tritonclient, "__version__", ""),
        },
        "requests": {"c1": C1_REQUESTS, "c16": C16_REQUESTS},
        "server_options": "log_verbose=0 (except one_per_core_verbose_log)",
        "load_average_before": [round(v, 2) for v in load_before],
        "results": results,
        "ratios": {k: round(v, 3) for k, v in ratios.items()},
        "wall_s": round(time.perf_counter() - t_start, 1),
    }
    write_report("local", report)
    return report


if __name__ == "__main__":
    main()
