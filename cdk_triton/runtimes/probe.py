"""Load built artifacts in a Triton release's own runtime and run their samples: the script the
release-runtime check (:mod:`cdk_triton.builder.target_runtime`) runs *inside* that release's environment.

Standalone on purpose: it runs with the environment's interpreter, which has numpy and the runtimes
(torch / onnxruntime / tensorrt) and not cdk_triton, so it imports nothing of this package.

Usage: ``python probe.py <job.json> <results.jsonl>`` (or ``--serve``: jobs named on stdin, one warm process). The job lists items ``{name,
runtime, artifact, request, response, tolerances: {output: [atol, rtol]}}``; for each item one line
``{"name", "event": "begin"}`` is appended before it runs and one result line after, so the caller can
tell which model a crash of the runtime (a segfault in an old libtorch) happened in. The first line,
``{"event": "versions", ...}``, names the versions the environment imports (the caller verifies them).
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
import time
from typing import Any

#: KServe v2 datatype -> numpy dtype name
_DTYPES = {
    "BOOL": "bool",
    "UINT8": "uint8",
    "UINT16": "uint16",
    "UINT32": "uint32",
    "UINT64": "uint64",
    "INT8": "int8",
    "INT16": "int16",
    "INT32": "int32",
    "INT64": "int64",
    "FP16": "float16",
    "FP32": "float32",
    "FP64": "float64",
    "BF16": "float32",
}

#: the operator or symbol a load error names: TorchScript's "Unknown builtin op: aten::x", ONNX Runtime's
#: "Could not find an implementation for X(13) node", "No Op registered for X with domain_version"
_OPERATOR = (
    re.compile(r"Unknown builtin op: ([\w:.]*\w)"),
    re.compile(r"Could not find an implementation for (\w+\(\d+\))"),
    re.compile(r"No Op registered for (\w+)"),
    re.compile(r"Unknown type name '([\w.:]+)'"),
    re.compile(r"object has no attribute '?(\w+)'?"),
)


def _tensors(body: dict[str, Any], key: str) -> list[tuple[str, Any]]:
    import numpy as np

    out = []
    for t in body.get(key, []):
        dt = t.get("datatype", "FP32")
        if dt == "BYTES":
            arr = np.array([str(v).encode() for v in t["data"]], dtype=object).reshape(t["shape"])
        else:
            arr = np.array(t["data"], dtype=_DTYPES[dt]).reshape(t["shape"])
        out.append((t["name"], arr))
    return out


def operator_of(text: str) -> str | None:
    """The operator a runtime's error text names, or None."""
    for pattern in _OPERATOR:
        m = pattern.search(text)
        if m:
            return m.group(1)
    return None


def _load_torchscript(artifact: str) -> Any:
    import torch

    module = torch.jit.load(artifact, map_location="cpu")
    module.eval()
    return module


def _run_torchscript(module: Any, inputs: list[tuple[str, Any]], names: list[str]) -> dict[str, Any]:
    import torch

    args = [torch.from_numpy(a) for _, a in inputs]
    with torch.inference_mode():
        out = module(*args)
    if isinstance(out, dict):
        return {k: v.numpy() for k, v in out.items()}
    seq = list(out) if isinstance(out, (tuple, list)) else [out]
    return {n: v.detach().numpy() for n, v in zip(names, seq, strict=False)}


def _load_onnx(artifact: str) -> Any:
    import onnxruntime

    return onnxruntime.InferenceSession(artifact, providers=["CPUExecutionProvider"])


def _run_onnx(session: Any, inputs: list[tuple[str, Any]], names: list[str]) -> dict[str, Any]:
    got = session.run(names, dict(inputs))
    return dict(zip(names, got, strict=True))


def _load_tensorrt(artifact: str) -> Any:
    import tensorrt as trt

    with open(artifact, "rb") as fh:
        engine = trt.Runtime(trt.Logger(trt.Logger.ERROR)).deserialize_cuda_engine(fh.read())
    if engine is None:
        raise RuntimeError("the TensorRT runtime could not deserialize the plan (another TensorRT or GPU)")
    return engine


def _run_tensorrt(engine: Any, inputs: list[tuple[str, Any]], names: list[str]) -> dict[str, Any]:
    import numpy as np
    import tensorrt as trt
    import torch

    context = engine.create_execution_context()
    keep = []
    for name, arr in inputs:
        t = torch.from_numpy(arr).cuda().contiguous()
        keep.append(t)
        context.set_input_shape(name, tuple(arr.shape))
        context.set_tensor_address(name, t.data_ptr())
    outs = {}
    for name in names:
        host = np.empty(
            tuple(context.get_tensor_shape(name)), dtype=trt.nptype(engine.get_tensor_dtype(name))
        )
        outs[name] = torch.from_numpy(host).cuda()
        context.set_tensor_address(name, outs[name].data_ptr())
    stream = torch.cuda.Stream()
    if not context.execute_async_v3(stream.cuda_stream):
        raise RuntimeError("TensorRT execute_async_v3 failed")
    stream.synchronize()
    return {n: t.cpu().numpy() for n, t in outs.items()}


#: runtime -> (load the artifact, run it on the inputs for the named outputs)
_RUNTIMES = {
    "libtorch": (_load_torchscript, _run_torchscript),
    "onnxruntime": (_load_onnx, _run_onnx),
    "tensorrt": (_load_tensorrt, _run_tensorrt),
}


def check(item: dict[str, Any]) -> dict[str, Any]:
    """Load and run one item; the result line (status passed / failed, max_abs_diff, stage, error, operator)."""
    import numpy as np

    with open(item["request"], encoding="utf-8") as fh:
        inputs = _tensors(json.load(fh), "inputs")
    with open(item["response"], encoding="utf-8") as fh:
        expected = dict(_tensors(json.load(fh), "outputs"))
    names = list(expected)
    load, run = _RUNTIMES[item["runtime"]]
    stage = "load"
    try:
        loaded = load(item["artifact"])
        stage = "run"
        got = run(loaded, inputs, names)
    except Exception as exc:  # the runtime's own words are the finding
        text = f"{type(exc).__name__}: {exc}".strip()
        return {"status": "failed", "stage": stage, "error": text[:2000], "operator": operator_of(text)}
    worst = 0.0
    for name, e in expected.items():
        if name not in got:
            return {"status": "failed", "stage": "match", "error": f"no output '{name}'", "operator": None}
        a = np.asarray(got[name])
        if a.shape != e.shape:
            return {
                "status": "failed",
                "stage": "match",
                "error": f"output '{name}' has shape {list(a.shape)}, expected {list(e.shape)}",
                "operator": None,
            }
        if e.dtype == object:
            if not np.array_equal(a, e):
                return {
                    "status": "failed",
                    "stage": "match",
                    "error": f"output '{name}' differs",
                    "operator": None,
                }
            continue
        atol, rtol = item["tolerances"].get(name, [1e-4, 1e-3])
        ef, af = e.astype(np.float64), a.astype(np.float64)
        diff = np.abs(ef - af)
        big = float(diff.max()) if diff.size else 0.0
        worst = max(worst, big)
        if diff.size and bool((diff > atol + rtol * np.abs(ef)).any()):
            return {
                "status": "failed",
                "stage": "match",
                "max_abs_diff": big,
                "error": f"output '{name}' differs from the expected output by up to {big:.3g} "
                f"(tolerance atol={atol:g} rtol={rtol:g})",
                "operator": None,
            }
    return {"status": "passed", "max_abs_diff": worst}


def versions() -> dict[str, str]:
    """The versions of the runtimes importable here (the environment's verification)."""
    out = {}
    for module in ("torch", "onnxruntime", "tensorrt", "numpy"):
        try:
            out[module] = str(__import__(module).__version__)
        except Exception:  # noqa: S112 - a runtime the environment does not hold
            continue
    return out


def run_job(job_path: str, results_path: str, found: dict[str, str]) -> None:
    """Check every item of the job file, appending the versions line and each model's lines to ``results_path``."""
    with open(job_path, encoding="utf-8") as fh:
        job = json.load(fh)
    with open(results_path, "a", encoding="utf-8") as out:
        # what this environment imports, first: the caller's verification of the environment (no second start)
        out.write(json.dumps({"event": "versions", **found}) + "\n")
        out.flush()
        for item in job["items"]:
            out.write(json.dumps({"name": item["name"], "event": "begin"}) + "\n")
            out.flush()
            started = time.process_time()
            result = check(item)
            # the CPU seconds of its load, run and comparison (every thread of this process; not the wall
            # time, which the build's export beside it stretches)
            result["cpu_seconds"] = round(time.process_time() - started, 6)
            out.write(json.dumps({"name": item["name"], "event": "end", **result}) + "\n")
            out.flush()


def warm_up() -> None:
    """Pay the runtimes' one-time costs before the first model: TorchScript's first calls initialise its
    graph executor (~35 ms here), as the build's own torch is by its export before parity runs."""
    try:
        import torch
    except ImportError:
        return

    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x @ x.t() + 1.0).softmax(-1)

    scripted = torch.jit.script(f)
    with torch.inference_mode():
        for _ in range(3):  # the profiling executor optimises after its profiling runs
            scripted(torch.ones(2, 2))


def serve() -> int:
    """``--serve``: import the runtimes now, print the versions line, then run each job named on stdin
    (``<job.json> <results.jsonl>``), printing ``done`` after each; exit at EOF (the build started this
    process before its export, so the imports and the warm-up overlap the export)."""
    found = versions()
    with contextlib.suppress(Exception):  # never fatal: a runtime that cannot run this fails on the models
        warm_up()
    print(json.dumps(found, sort_keys=True), flush=True)
    for line in sys.stdin:
        parts = line.split()
        if len(parts) != 2:
            continue
        run_job(parts[0], parts[1], found)
        print("done", flush=True)
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--versions"]:
        print(json.dumps(versions(), sort_keys=True))
        return 0
    if argv[:1] == ["--serve"]:
        return serve()
    job_path, results_path = argv
    run_job(job_path, results_path, versions())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
