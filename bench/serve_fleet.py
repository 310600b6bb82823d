"""`cdk-triton serve` of a fleet-sized MME: how long until it is ready, and what of that grows with N.

Writes a manifest of N tiny TargetModels (python backend, ~600-byte archives; ``write_fleet``), then,
in this process, splits the start of a ``LocalEndpoint`` into its parts: reading the manifest,
constructing the endpoint (option and response-cache checks over every TargetModel), and ``start()``
(tritonserver with an empty repository, the front); then the first request to one TargetModel (a
cold load: sha256 check, untar, ``POST /models``). Models load on their first request, so nothing else
should grow with N. Side by side, the auto-complete scan as it was (every archive opened) and as it is
(one archive per distinct python file); "before" = ready less the new scan plus the old one.
Writes bench/results/serve_fleet.json.

Run: ``python -m bench.serve_fleet [--models 5000] [--baseline 50]``.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import platform
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "serve_fleet.json"

MODEL_PY = b"""import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        out = []
        for r in requests:
            raw = pb_utils.get_input_tensor_by_name(r, "RAW").as_numpy()
            out.append(pb_utils.InferenceResponse([pb_utils.Tensor("X", raw.astype(np.float32) * 2.0)]))
        return out
"""


def _config(name: str) -> tuple[bytes, dict[str, Any]]:
    text = (
        f'name: "{name}"\nbackend: "python"\nmax_batch_size: 8\n'
        'input {\n  name: "RAW"\n  data_type: TYPE_UINT8\n  dims: 4\n}\n'
        'output {\n  name: "X"\n  data_type: TYPE_FP32\n  dims: 4\n}\n'
        "instance_group {\n  count: 1\n  kind: KIND_CPU\n}\n"
    )
    as_dict = {
        "name": name,
        "backend": "python",
        "max_batch_size": 8,
        "input": [{"name": "RAW", "data_type": "TYPE_UINT8", "dims": ["4"]}],
        "output": [{"name": "X", "data_type": "TYPE_FP32", "dims": ["4"]}],
        "instance_group": [{"count": 1, "kind": "KIND_CPU"}],
    }
    return text.encode(), as_dict


def _archive(name: str, config: bytes) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=1) as tar:
        for rel, data in ((f"{name}/config.pbtxt", config), (f"{name}/1/model.py", MODEL_PY)):
            info = tarfile.TarInfo(rel)
            info.size, info.mtime = len(data), 0
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def write_fleet(root: Path, n: int, *, endpoint: str = "fleet") -> Path:
    """A build output of ``n`` tiny python-backend TargetModels behind the MME ``endpoint``: its manifest."""
    sha = lambda b: hashlib.sha256(b).hexdigest()  # noqa: E731
    mme = root / "mme" / endpoint
    mme.mkdir(parents=True, exist_ok=True)
    models: dict[str, Any] = {}
    targets: dict[str, Any] = {}
    for i in range(n):
        name = f"m{i:05d}"
        config, as_dict = _config(name)
        data = _archive(name, config)
        digest = sha(data)
        archive = f"{name}-{digest[:12]}.tar.gz"
        (mme / archive).write_bytes(data)
        models[name] = {
            "name": name,
            "format": "python",
            "platform": None,
            "backend": "python",
            "config": as_dict,
            "config_sha256": sha(config),
            "files": {"config.pbtxt": sha(config), "1/model.py": sha(MODEL_PY)},
            "steps": [],
        }
        targets[name] = {
            "logical_name": name,
            "target_model": archive,
            "model": name,
            "models": [name],
            "local_path": f"mme/{endpoint}/{archive}",
            "sha256": digest,
            "size_bytes": len(data),
            "s3_uri": f"s3://bucket/cdk-triton/mme/{endpoint}/{archive}",
        }
    manifest = {
        "schema_version": 1,
        "triton_version": "24.09",
        "uploaded": False,
        "artifact_location": {"bucket": "bucket", "prefix": "cdk-triton/"},
        "tool_versions": {},
        "models": models,
        "endpoints": {
            endpoint: {
                "name": endpoint,
                "mode": "MultiModel",
                "instance_types": ["ml.g5.xlarge"],
                "s3_prefix": f"s3://bucket/cdk-triton/mme/{endpoint}/",
                "target_models": targets,
            }
        },
    }
    path = root / "manifest.json"
    path.write_text(json.dumps(manifest, indent=1))
    return path


def measure(manifest_path: Path, endpoint: str = "fleet") -> dict[str, float]:
    """Seconds of each part of a start, and of the first request to one TargetModel."""
    from cdk_triton.config.manifest import read_manifest
    from cdk_triton.local.endpoint import LocalEndpoint
    from cdk_triton.local.overlay import CpuOverlay
    from cdk_triton.local.repository import auto_complete_archives, uses_auto_complete

    t0 = time.perf_counter()
    manifest = read_manifest(manifest_path)
    t1 = time.perf_counter()
    ep = LocalEndpoint(manifest, endpoint, overlay=CpuOverlay(instance_count=1))
    t2 = time.perf_counter()
    ep.start()
    t3 = time.perf_counter()
    try:
        first = sorted(manifest.endpoints[endpoint].target_models)[-1]
        body = json.dumps(
            {"inputs": [{"name": "RAW", "shape": [1, 4], "datatype": "UINT8", "data": [1, 2, 3, 4]}]}
        )
        status, _, reply = ep.invoke(body.encode(), "application/json", target_model=first)
        t4 = time.perf_counter()
        if status != 200:
            raise RuntimeError(f"first request answered {status}: {reply[:300]!r}")
    finally:
        ep.stop()
    entry = manifest.endpoints[endpoint]
    s0 = time.perf_counter()
    uses_auto_complete(archives=tuple(manifest.resolve(t.local_path) for t in entry.target_models.values()))
    s1 = time.perf_counter()
    uses_auto_complete(archives=auto_complete_archives(manifest, entry))
    s2 = time.perf_counter()
    return {
        "scan_every_archive_s": s1 - s0,  # what a start did before: open every archive
        "scan_distinct_python_files_s": s2 - s1,  # what it does now (included in start_s)
        "read_manifest_s": t1 - t0,
        "construct_s": t2 - t1,
        "start_s": t3 - t2,
        "ready_s": t3 - t0,
        "first_request_s": t4 - t3,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=5000)
    parser.add_argument("--baseline", type=int, default=50)
    parser.add_argument("--no-write", action="store_true", help="print only (no results file)")
    args = parser.parse_args(argv)
    rows = {}
    with tempfile.TemporaryDirectory(prefix="cdk-triton-serve-fleet-") as tmp:
        measure(write_fleet(Path(tmp) / "warm-up", 2))  # first-start costs (imports, libraries) left out
        for n in (args.baseline, args.models):
            t = time.perf_counter()
            path = write_fleet(Path(tmp) / str(n), n)
            written = time.perf_counter() - t
            rows[n] = measure(path)
            parts = ", ".join(f"{k} {v:.2f} s" for k, v in rows[n].items())
            print(f"N={n:>5} (archives written in {written:.1f} s): {parts}", flush=True)
    small, big = rows[args.baseline], rows[args.models]
    ratio = big["ready_s"] / small["ready_s"]
    print(
        f"ready: {big['ready_s']:.2f} s at {args.models} vs {small['ready_s']:.2f} s at {args.baseline}: {ratio:.2f}x"
    )
    if args.no_write:
        return 0
    before = big["ready_s"] - big["scan_distinct_python_files_s"] + big["scan_every_archive_s"]
    print(f"before (every archive opened at start): ready in about {before:.2f} s at {args.models}")
    summary = [
        {
            "label": f"serve ready, {args.models:,} TargetModels, every archive opened at start (before)",
            "value": before,
            "unit": "s",
            "target": "",
        },
        {
            "label": f"serve ready, {args.models:,} TargetModels",
            "value": big["ready_s"],
            "unit": "s",
            "target": "seconds",
        },
        {
            "label": f"serve ready, {args.models:,} / {args.baseline} TargetModels",
            "value": ratio,
            "unit": "x",
            "target": "",
        },
        {
            "label": f"first request (cold load), {args.models:,} TargetModels",
            "value": big["first_request_s"],
            "unit": "s",
            "target": "",
        },
    ]
    result = {
        "name": "serve_fleet",
        "command": "python -m bench.serve_fleet",
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}",
        "rows": {str(k): v for k, v in rows.items()},
        "summary": summary,
    }
    tmp_out = RESULTS.with_suffix(".json.tmp")
    tmp_out.write_text(json.dumps(result, indent=1) + "\n")
    tmp_out.replace(RESULTS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
