"""MME cold start: the first request to a not-yet-loaded TargetModel of the example, split by cause.

For each of the example's small TargetModels (classifier_onnx, classifier_ts, the classifier ensemble)
a fresh multi-model endpoint loads it once, timed in two parts: ``stage`` (sha256 check, untar,
config parse, CPU overlay: ours, in this process) and ``server_load`` (``POST /models``: tritonserver
starts the python backend stubs, which import the stand-in backend and build the session). Two
variants side by side, in interleaved rounds (best of each kept; load average recorded):

- ``auto_complete``: the server's config auto-complete on (the earlier default): the python backend
  starts one extra throw-away stub per model to ask it for a config, and ends it after a fixed 1 s
  ``sleep`` (python_be.cc ``ModelState::Create`` -> ``StubLauncher::UpdateHealth``);
- ``no_auto_complete``: ``--disable-auto-complete-config``, what the local endpoint now passes when
  no python model served defines ``auto_complete_config``.

``stub_imports`` times, in a fresh interpreter, what each stub process imports (numpy, onnxruntime,
onnx for the opset check, torch) and an onnxruntime session of the model.

The example must be built: ``CDK_TRITON_BENCH_BUILD_OUT`` names a build output (its manifest.json),
otherwise ``cdk-triton build`` of build/models.yaml writes one to a temporary
directory first. Results: bench/results/local_cold.json. Run: ``.venv/bin/python -m bench.local_cold``.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGETS = ("classifier_onnx", "classifier_ts", "classifier")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))

_IMPORTS = """
import json, sys, time
t = [time.perf_counter()]
import numpy; t.append(time.perf_counter())
import onnxruntime as ort; t.append(time.perf_counter())
import onnx; t.append(time.perf_counter())
o = ort.SessionOptions(); o.intra_op_num_threads = 1
ort.InferenceSession(sys.argv[1], o, providers=["CPUExecutionProvider"]); t.append(time.perf_counter())
import torch; t.append(time.perf_counter())
names = ["numpy", "onnxruntime", "onnx", "onnxruntime_session", "torch"]
print(json.dumps({n: round(b - a, 3) for n, a, b in zip(names, t, t[1:])}))
"""


def _build_out(tmp: Path) -> Path:
    given = os.environ.get("CDK_TRITON_BENCH_BUILD_OUT")
    if given:
        return Path(given)
    out = tmp / "out"
    cmd = [sys.executable, "-m", "cdk_triton.cli", "build", "--config", str(ROOT / "build" / "models.yaml")]
    cmd += ["--out", str(out), "--no-progress"]
    subprocess.run(cmd, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return out


def _cold_load(manifest, target: str, auto_complete: bool) -> dict[str, float]:
    import cdk_triton.local.endpoint as endpoint_module
    import cdk_triton.local.mme as mme
    from cdk_triton.local import LocalEndpoint

    scan = endpoint_module.uses_auto_complete
    if auto_complete:
        endpoint_module.uses_auto_complete = lambda *a, **k: True  # type: ignore[assignment]
    stage = mme.ModelManager._stage
    spent: dict[str, float] = {}

    def timed_stage(self, t):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        try:
            return stage(self, t)
        finally:
            spent["stage"] = time.perf_counter() - t0

    mme.ModelManager._stage = timed_stage  # type: ignore[method-assign]
    try:
        with LocalEndpoint(manifest, "multi") as ep:
            assert ep.models is not None
            t0 = time.perf_counter()
            ep.models.load(target)
            total = time.perf_counter() - t0
    finally:
        mme.ModelManager._stage = stage  # type: ignore[method-assign]
        endpoint_module.uses_auto_complete = scan
    return {
        "first_load_s": round(total, 3),
        "stage_s": round(spent["stage"], 3),
        "server_load_s": round(total - spent["stage"], 3),
    }


def main() -> dict:
    from cdk_triton.config.manifest import read_manifest

    load_before = os.getloadavg()
    t_start = time.perf_counter()
    results: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="cdk-triton-cold-") as tmp:
        manifest = read_manifest(_build_out(Path(tmp)) / "manifest.json")
        for _ in range(ROUNDS):
            for target in TARGETS:
                for label, auto in (("auto_complete", True), ("no_auto_complete", False)):
                    new = _cold_load(manifest, target, auto)
                    old = results.setdefault(label, {}).get(target)
                    if old is None or new["first_load_s"] < old["first_load_s"]:
                        results[label][target] = new
                    print(f"{target} {label}: {new}", flush=True)
        entry = manifest.endpoint("multi").target_models["classifier_onnx"]
        import tarfile

        with tarfile.open(manifest.resolve(entry.local_path)) as tar:
            tar.extractall(tmp, filter="data")
        onnx_path = next(Path(tmp).rglob("model.onnx"))
        imports = json.loads(
            subprocess.run(
                [sys.executable, "-c", _IMPORTS, str(onnx_path)], capture_output=True, text=True, check=True
            ).stdout
        )
    load_after = os.getloadavg()
    summary = [
        {
            "label": f"MME first request to {t} (cold load), no auto-complete stub vs before",
            "value": results["no_auto_complete"][t]["first_load_s"]
            / results["auto_complete"][t]["first_load_s"],
            "unit": "x",
            "target": "<= 0.5x",
        }
        for t in TARGETS
    ]
    report = {
        "name": "local_cold",
        "command": ".venv/bin/python -m bench.local_cold",
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.system()}",
        "summary": summary,
        "rounds": ROUNDS,
        "load_average_before": [round(v, 2) for v in load_before],
        "load_average_after": [round(v, 2) for v in load_after],
        "results": results,
        "stub_imports_s": imports,
        "wall_s": round(time.perf_counter() - t_start, 1),
    }
    out = ROOT / "bench" / "results" / "local_cold.json"
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report["results"], indent=1), json.dumps(imports))
    print(f"wrote {out} in {report['wall_s']} s")
    return report


if __name__ == "__main__":
    main()
