"""Fleet builds, side by side in one run: ``--jobs 2`` vs ``--jobs 1``, N shards built one after another
(then merged) vs one build, and the no-op rebuild of a 1,000-model fleet vs a bare floor script.

Every build runs as a user runs it: ``cdk-triton build`` in a fresh process. The --jobs and shard
comparisons build tiny torch models exported to ONNX (export-bound, as real fleets are); the no-op
fleet is tiny ONNX files (a few KB each) behind one multi-model endpoint. Each comparison checks that
the outputs are the same bytes (sha256 of every file under out/).

python -m bench.build_fleet                 # 96 exported models, 4 shards, a 1,000-model no-op fleet
python -m bench.build_fleet --quick         # 8 / 2 / 24 (the test suite runs this once)
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FLOOR = Path(__file__).resolve().parent / "floor_noop.py"
JOBS_TARGET = 1.7
SHARDS_TARGET = 1.1
NOOP_TARGET = 3.0


def onnx_fleet(root: Path, n: int) -> Path:
    """``n`` tiny ONNX files (x FP32 [-1, 16] -> y FP32 [-1, 8], distinct weights) behind one MME."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    root.mkdir(parents=True, exist_ok=True)
    lines = ["triton_version: '24.09'", "artifact_location: s3://bench-bucket/fleet/"]
    # the benchmark's acknowledgment of 24.09's critical NVIDIA advisories (nothing it builds is deployed)
    lines += ["acknowledged_advisories:"] + [
        f"  {cve}: 'benchmark: built to be timed, never deployed'"
        for cve in ("CVE-2025-23310", "CVE-2025-23311", "CVE-2025-23316", "CVE-2025-23317", "CVE-2026-24207")
    ]
    lines.append("models:")
    for i in range(n):
        rng = np.random.default_rng(i)
        w = numpy_helper.from_array(rng.standard_normal((16, 8)).astype(np.float32), "w")
        b = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b")
        graph = helper.make_graph(
            [helper.make_node("Gemm", ["x", "w", "b"], ["h"]), helper.make_node("Tanh", ["h"], ["y"])],
            f"m{i:04d}",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 16])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8])],
            [w, b],
        )
        onnx.save(
            helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8),
            str(root / f"m{i:04d}.onnx"),
        )
        lines += [
            f"  - name: m{i:04d}",
            "    format: onnx",
            f"    source: {{onnx: m{i:04d}.onnx}}",
            "    inputs: [{name: x, dtype: FP32, shape: [16]}]",
            "    outputs: [{name: y, dtype: FP32, shape: [8]}]",
            "    max_batch_size: 8",
        ]
    lines += ["endpoints:", "  - name: fleet", "    mode: MultiModel", "    instance_types: [ml.g5.xlarge]"]
    lines.append(f"    models: [{', '.join(f'm{i:04d}' for i in range(n))}]")
    path = root / "models.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def env() -> dict[str, str]:
    """This checkout first; bytecode cached as in an installed package; no outside artifact location."""
    e = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONDONTWRITEBYTECODE", "CDK_TRITON_ARTIFACT_LOCATION")
    }
    return {**e, "PYTHONPATH": str(ROOT)}


def cli(config: Path, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "cdk_triton.cli",
        "build",
        "--config",
        str(config),
        "--out",
        str(out),
        "--no-progress",
        *extra,
    ]


def run(cmd: list[str]) -> float:
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env(), cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return time.perf_counter() - t


def digests(out: Path) -> dict[str, str]:
    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }


def jobs_and_shards(tmp: Path, models: int, shards: int) -> dict[str, Any]:
    """One build with --jobs 1 and one with --jobs 2; ``shards`` shard builds (--jobs 1) then a merge."""
    from bench.build_noop import declaration

    decl = declaration(tmp / "decl", models, "onnx")
    one = run(cli(decl, tmp / "jobs1", "--jobs", "1"))
    two = run(cli(decl, tmp / "jobs2", "--jobs", "2"))
    per_shard = [
        run(cli(decl, tmp / f"shard{i}", "--jobs", "1", "--shard", f"{i}/{shards}")) for i in range(shards)
    ]
    merges = [
        a for i in range(shards) for a in ("--merge-manifest", str(tmp / f"shard{i}" / "manifest.json"))
    ]
    merge = run(cli(decl, tmp / "merged", "--jobs", "1", *merges))
    reference = digests(tmp / "jobs1")
    return {
        "models": models,
        "shards": shards,
        "jobs1_seconds": one,
        "jobs2_seconds": two,
        "speedup": one / two,
        "shard_seconds": per_shard,
        "merge_seconds": merge,
        "shards_work_ratio": (sum(per_shard) + merge) / one,
        "jobs_identical": digests(tmp / "jobs2") == reference,
        "shards_identical": digests(tmp / "merged") == reference,
        "files": len(reference),
    }


def median_seconds(cmd: list[str], runs: int) -> float:
    return statistics.median(run(cmd) for _ in range(runs))


def noop(config: Path, out: Path, runs: int, *, build: bool = True) -> dict[str, float]:
    """A full build (--jobs auto), then the median no-op rebuild vs the bare floor script."""
    full = run(cli(config, out)) if build else 0.0
    rebuild = median_seconds(cli(config, out), runs)
    floor = median_seconds([sys.executable, str(FLOOR), str(config), str(out)], runs)
    return {"full_seconds": full, "noop_seconds": rebuild, "floor_seconds": floor, "ratio": rebuild / floor}


def import_split(config: Path, out: Path, top: int = 8) -> dict[str, float]:
    """Self import time (ms) by package of a no-op build (python -X importtime), the floor's beside it."""
    from bench.build_floor import import_split as split

    build = split(config, out, top)
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", str(FLOOR), str(config), str(out)],
        capture_output=True,
        text=True,
        env=env(),
        cwd=ROOT,
    )
    floor_ms = 0.0
    for line in proc.stderr.splitlines():
        head = line.split("|")[0]
        if head.startswith("import time:") and head.split(":")[1].strip().isdigit():
            floor_ms += int(head.split(":")[1]) / 1000
    return {**build, "floor_total": round(floor_ms, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument(
        "--quick", action="store_true", help="8 exported models, 2 shards, a 24-model no-op fleet"
    )
    ap.add_argument(
        "--models", type=int, default=None, help="exported models for --jobs and shards (default 96)"
    )
    ap.add_argument("--shards", type=int, default=None, help="default 4")
    ap.add_argument("--fleet", type=int, default=None, help="models of the no-op fleet (default 1000)")
    ap.add_argument("--runs", type=int, default=None, help="fresh processes per no-op median (default 7)")
    ap.add_argument("--no-write", action="store_true", help="print only; do not write bench/results")
    args = ap.parse_args(argv)
    models = args.models or (8 if args.quick else 96)
    shards = args.shards or (2 if args.quick else 4)
    fleet = args.fleet or (24 if args.quick else 1000)
    runs = args.runs or (3 if args.quick else 7)
    sys.path.insert(0, str(ROOT))
    from bench.build_common import write_result

    tmp = Path(tempfile.mkdtemp())
    try:
        build = jobs_and_shards(tmp / "exported", models, shards)
        decl = onnx_fleet(tmp / "fleet", fleet)
        many = noop(decl, tmp / "fleet-out", runs)
        example = noop(ROOT / "build" / "models.yaml", tmp / "example-out", runs)
        split = import_split(decl, tmp / "fleet-out")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"import time of a no-op build of {fleet} models (ms, self, by package): {split}")
    summary = [
        {
            "label": f"`--jobs 2` vs `--jobs 1`, {models} exported ONNX models (speedup)",
            "value": build["speedup"],
            "unit": "x",
            "target": f">= {JOBS_TARGET:g}x",
        },
        {
            "label": f"{shards} shards one after another + merge vs one build, {models} models (work)",
            "value": build["shards_work_ratio"],
            "unit": "x",
            "target": f"<= {SHARDS_TARGET:g}x",
        },
        {
            "label": f"no-op `cdk-triton build` / bare floor, {fleet} models",
            "value": many["ratio"],
            "unit": "x",
            "target": f"<= {NOOP_TARGET:g}x",
        },
        {
            "label": "no-op `cdk-triton build` / bare floor, the example",
            "value": example["ratio"],
            "unit": "x",
            "target": f"<= {NOOP_TARGET:g}x",
        },
        {
            "label": f"no-op rebuild, {fleet} models",
            "value": many["noop_seconds"],
            "unit": "s",
            "target": None,
        },
        {
            "label": f"full build, {fleet} ONNX files (`--jobs auto`)",
            "value": many["full_seconds"],
            "unit": "s",
            "target": None,
        },
    ]
    details = {"exported": build, f"noop_{fleet}": many, "noop_example": example, "import_ms": split}
    command = "python -m bench.build_fleet" + (" --quick" if args.quick else "")
    if args.no_write:
        import json

        print(json.dumps({"summary": summary, "details": details}, indent=2))
    else:
        write_result("build_fleet", command, summary, details)
    if not (build["jobs_identical"] and build["shards_identical"]):
        print("outputs differ between --jobs 1, --jobs 2 and the merged shards", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
