"""The served example classifier (``build/models.yaml``'s classifier_onnx) on the local endpoint, by cause.

The model is the example's small ResNet (``build/example_models.py``, the declared kwargs and seed),
exported to ONNX and served as one SME endpoint per config variant (one image per request, FP32
[1, 3, 32, 32], binary+json), measured at concurrency 16 side by side in interleaved rounds (the best
of each kept: the machine may be shared; the load average before and after is recorded):

- ``naive``: one instance, no dynamic batching (the reference of issue 10.5);
- ``one_instance_batching``: one instance, dynamic batching as built (preferred 4, 8; 100 us);
- ``one_instance_batching_threads_per_core``: the same with one intra-op thread per core (the stand-in
  backend's thread pools do not spin);
- ``one_per_core``: one instance per core (the overlay's default), no batching;
- ``one_per_core_batching``: one instance per core, dynamic batching as built;
- ``*_through_front``: the best variant through the SageMaker Runtime front (127.0.0.1), vs direct
  (the namespace's Unix socket);
- ``*_through_front_thread_pool``: the same, with the handler in the front's thread pool (the path
  before the event-loop forward; MME requests still take it);
- ``in_process_floor``: the same model and inputs in onnxruntime in one process (one session per
  core, one intra-op thread each, one image per call).

For every measured variant the CPU milliseconds per request of each process are recorded
(``cpu_ms_per_request``: the load client, the front, tritonserver, the socket bridge, the backend
stubs), which is where a gap to the floor goes. Results: bench/results/local_example.json.
Run: ``.venv/bin/python -m bench.local_example`` (about two minutes on 2 cores).
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

REQUESTS, WARMUP = 3000, 200
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
BATCHING = {"preferred_batch_size": [4, 8], "max_queue_delay_microseconds": 100}  # as built


def _export(root: Path) -> Path:
    import torch

    sys.path.insert(0, str(ROOT / "build"))
    from example_models import resnet_classifier

    torch.manual_seed(0)
    net = resnet_classifier(num_classes=10, width=16, blocks=3)
    path = root / "classifier.onnx"
    torch.onnx.export(
        net,
        (torch.zeros(1, 3, 32, 32),),
        str(path),
        input_names=["PIXELS"],
        output_names=["LOGITS"],
        dynamic_axes={"PIXELS": {0: "b"}, "LOGITS": {0: "b"}},
        opset_version=17,
        dynamo=False,
        external_data=False,
    )
    return path


def _write_manifest(root: Path, onnx_path: Path) -> Path:
    """Two SME endpoints (``nodb`` / ``db``) serving classifier_onnx as built (batching off / on)."""
    config = {
        "name": "classifier_onnx",
        "platform": "onnxruntime_onnx",
        "max_batch_size": 8,
        "input": [{"name": "PIXELS", "data_type": "TYPE_FP32", "dims": [3, 32, 32]}],
        "output": [{"name": "LOGITS", "data_type": "TYPE_FP32", "dims": [10]}],
    }
    return write_onnx_endpoints(root, onnx_path, config, BATCHING)


def _measure(pool, ep, body: bytes, ctype: str, *, front: bool) -> dict:
    """c16 throughput and the CPU ms per request of every process (the front: this process)."""
    server = ep.server
    job = (server.socket_path, ep.url if front else "", ep.name, body, ctype, 16)
    pool.apply(load_job, (job + (WARMUP,),))
    result, cpu = cpu_by_role(server, lambda: pool.apply(load_job, (job + (REQUESTS,),)))
    assert result.errors == 0, result.first_error
    me = cpu.pop("this_process")
    if front:
        cpu["front"] = me
    out = result.summary()
    out["cpu_ms_per_request"] = {k: round(v / REQUESTS * 1e3, 3) for k, v in cpu.items()}
    out["cpu_ms_per_request"]["total"] = round(sum(cpu.values()) / REQUESTS * 1e3, 3)
    return out


def _floor(path: Path, x: np.ndarray) -> dict:
    """One image per ``session.run``, one session (one intra-op thread) per core, in this process."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = opts.inter_op_num_threads = 1
    workers = os.cpu_count() or 1
    sessions = [
        ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"]) for _ in range(workers)
    ]
    for s in sessions:
        for _ in range(WARMUP):
            s.run(["LOGITS"], {"PIXELS": x})
    return threaded_floor(sessions, lambda sess: sess.run(["LOGITS"], {"PIXELS": x}), REQUESTS)


def _keep_best(results: dict, label: str, new: dict) -> None:
    if label not in results or new["throughput_rps"] > results[label]["throughput_rps"]:
        results[label] = new


VARIANTS = (  # label, endpoint, instance_count (None: one per core), intra-op threads
    ("naive", "nodb", 1, 1),
    ("one_instance_batching", "db", 1, 1),
    ("one_instance_batching_threads_per_core", "db", 1, os.cpu_count() or 1),
    ("one_per_core", "nodb", None, 1),
    ("one_per_core_batching", "db", None, 1),
)


def main() -> dict:
    import onnxruntime

    from cdk_triton.config.manifest import read_manifest
    from cdk_triton.config.server_options import ServerOptions
    from cdk_triton.local import CpuOverlay, LocalEndpoint, build_request

    load_before = os.getloadavg()
    t_start = time.perf_counter()
    results: dict = {}
    with tempfile.TemporaryDirectory(prefix="cdk-triton-bench-") as tmp:
        onnx_path = _export(Path(tmp))
        manifest = read_manifest(_write_manifest(Path(tmp), onnx_path))
        x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
        body, ctype = build_request({"PIXELS": x}, binary=True)
        quiet = ServerOptions(log_verbose=0)
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            for round_ in range(ROUNDS):
                for label, endpoint, count, threads in VARIANTS:
                    overlay = CpuOverlay(instance_count=count, intra_op_threads=threads)
                    with LocalEndpoint(manifest, endpoint, overlay=overlay, server_options=quiet) as ep:
                        _keep_best(results, label, _measure(pool, ep, body, ctype, front=False))
                        if label == "one_per_core_batching":
                            front = _measure(pool, ep, body, ctype, front=True)
                            _keep_best(results, f"{label}_through_front", front)
                            ep.handle_invocation_async = None  # type: ignore[method-assign,assignment]
                            pooled = _measure(pool, ep, body, ctype, front=True)  # the thread-pool path
                            _keep_best(results, f"{label}_through_front_thread_pool", pooled)
                    print(f"round {round_ + 1} {label}: {json.dumps(results[label])}", flush=True)
                _keep_best(results, "in_process_floor", _floor(onnx_path, x))
    load_after = os.getloadavg()

    def tput(k: str) -> float:
        return results[k]["throughput_rps"]

    best = max((v[0] for v in VARIANTS), key=tput)
    ratios = {
        "c16_best_vs_naive": tput(best) / tput("naive"),
        "c16_one_instance_batching_vs_naive": tput("one_instance_batching") / tput("naive"),
        "c16_one_per_core_vs_naive": tput("one_per_core") / tput("naive"),
        "c16_front_vs_direct": tput("one_per_core_batching_through_front") / tput("one_per_core_batching"),
        "c16_front_thread_pool_vs_direct": tput("one_per_core_batching_through_front_thread_pool")
        / tput("one_per_core_batching"),
        "c16_best_vs_in_process_floor": tput(best) / tput("in_process_floor"),
    }
    summary = [
        {
            "label": f"example classifier: best local variant ({best}) vs naive (one instance, no batching), "
            "throughput at concurrency 16",
            "value": ratios["c16_best_vs_naive"],
            "unit": "x",
            "target": ">= 1.5x",
        },
        {
            "label": "example classifier: dynamic batching (one instance) vs naive, throughput at concurrency 16",
            "value": ratios["c16_one_instance_batching_vs_naive"],
            "unit": "x",
            "target": None,
        },
        {
            "label": "example classifier: through the SageMaker Runtime front vs direct, throughput at concurrency 16",
            "value": ratios["c16_front_vs_direct"],
            "unit": "x",
            "target": None,  # a reference: it measures the CPU stand-ins, not what users deploy
        },
        {
            "label": "example classifier: best local variant vs in-process onnxruntime floor, throughput at concurrency 16",
            "value": ratios["c16_best_vs_in_process_floor"],
            "unit": "x",
            "target": None,  # a reference: it measures the CPU stand-ins, not what users deploy
        },
    ]
    report = {
        "name": "local_example",
        "command": ".venv/bin/python -m bench.local_example",
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.system()}",
        "summary": summary,
        "model": "example classifier_onnx (small ResNet, width 16, 3 blocks), 1 image per request, binary+json",
        "environment": {"onnxruntime": onnxruntime.__version__},
        "requests": REQUESTS,
        "rounds": ROUNDS,
        "load_average_before": [round(v, 2) for v in load_before],
        "load_average_after": [round(v, 2) for v in load_after],
        "results": results,
        "ratios": {k: round(v, 3) for k, v in ratios.items()},
        "wall_s": round(time.perf_counter() - t_start, 1),
    }
    write_report("local_example", report)
    return report


if __name__ == "__main__":
    main()
