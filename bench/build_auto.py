"""``--jobs auto`` vs ``--jobs 1`` on the same inputs, side by side in one run (issue 30): auto must never
make a build slower than a serial one.

Two fleets of tiny torch models (``bench.build_noop.declaration``): 120 exported to TorchScript (a
model's export ~0.02 s: a worker's start, ~3 s, is never repaid) and 96 exported to ONNX (~0.75 s
each: two workers repay theirs). Every build is ``cdk-triton build`` in a fresh process into a fresh
output directory, ``auto`` and ``1`` alternating, the median of ``--runs`` each; the outputs are checked
to be the same bytes. The builds share one temp cache home (``$XDG_CACHE_HOME``), empty at the start,
as on a new machine: the first ``auto`` build decides on the stated defaults per format, the later
ones on what the earlier builds measured (``builder/parallel.py``: ``choose_jobs``).

python -m bench.build_auto                       # 120 TorchScript + 96 ONNX models, median of 3
python -m bench.build_auto --runs 3 --onnx 0     # the TorchScript fleet only (quick)
"""

from __future__ import annotations

import argparse
import json
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
TARGET_TS = 1.0
TARGET_ONNX = 1.7


def _env(cache: Path) -> dict[str, str]:
    e = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONDONTWRITEBYTECODE", "CDK_TRITON_ARTIFACT_LOCATION")
    }
    return {**e, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(cache)}


def _build(decl: Path, out: Path, jobs: str, cache: Path) -> float:
    cmd = [sys.executable, "-m", "cdk_triton.cli", "build", "--config", str(decl), "--out", str(out)]
    cmd += ["--no-progress", "--jobs", jobs]
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(cache), cwd=ROOT)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return time.perf_counter() - t


def _decision(fmt: str, models: int, cache: Path) -> int:
    """What ``auto`` chooses now for this fleet with what the builds measured in ``cache``."""
    from cdk_triton.builder import parallel

    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    try:
        return parallel.choose_jobs([fmt] * models)
    finally:
        if old is None:
            del os.environ["XDG_CACHE_HOME"]
        else:
            os.environ["XDG_CACHE_HOME"] = old


def compare(tmp: Path, fmt: str, models: int, runs: int) -> dict[str, Any]:
    from bench.build_fleet import digests
    from bench.build_noop import declaration

    decl = declaration(tmp / f"{fmt}-decl", models, fmt)
    cache = tmp / f"{fmt}-cache"
    first = _decision(fmt, models, cache)  # nothing measured yet: the defaults
    auto, one = [], []
    for r in range(runs):
        auto.append(_build(decl, tmp / f"{fmt}-auto{r}", "auto", cache))
        one.append(_build(decl, tmp / f"{fmt}-one{r}", "1", cache))
    same = all(digests(tmp / f"{fmt}-auto{r}") == digests(tmp / f"{fmt}-one{0}") for r in range(runs))
    timings = json.loads((cache / "cdk-triton" / "export-timings.json").read_text())
    return {
        "format": fmt,
        "models": models,
        "runs": runs,
        "auto_seconds": auto,
        "jobs1_seconds": one,
        "auto_median": statistics.median(auto),
        "jobs1_median": statistics.median(one),
        "speedup": statistics.median(one) / statistics.median(auto),
        "auto_jobs_first_build": first,
        "auto_jobs_after": _decision(fmt, models, cache),
        "measured": timings,
        "identical": same,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=3, help="builds per side (median; default 3)")
    ap.add_argument("--torchscript", type=int, default=120, help="TorchScript models (default 120)")
    ap.add_argument("--onnx", type=int, default=96, help="ONNX models (default 96; 0: skip)")
    ap.add_argument("--no-write", action="store_true", help="print only; do not write bench/results")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from bench.build_common import write_result

    tmp = Path(tempfile.mkdtemp())
    try:
        rows = [compare(tmp, "torchscript", args.torchscript, args.runs)]
        if args.onnx:
            rows.append(compare(tmp, "onnx", args.onnx, args.runs))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    summary = [
        {
            "label": f"`--jobs auto` vs `--jobs 1`, {r['models']} tiny {'TorchScript' if r['format'] == 'torchscript' else 'ONNX'} "
            f"models (speedup, median of {r['runs']}; auto chose {r['auto_jobs_first_build']} then "
            f"{r['auto_jobs_after']} jobs)",
            "value": r["speedup"],
            "unit": "x",
            "target": f">= {TARGET_TS if r['format'] == 'torchscript' else TARGET_ONNX:g}x",
        }
        for r in rows
    ]
    for r in rows:
        if not r["identical"]:
            raise SystemExit(f"{r['format']}: --jobs auto and --jobs 1 wrote different bytes")
    if args.no_write:
        print(json.dumps({"summary": summary, "details": rows}, indent=2))
    else:
        write_result("build_auto", "python -m bench.build_auto", summary, {"comparisons": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
