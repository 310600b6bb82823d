"""A no-op `cdk-triton build` in a fresh process vs the floor of what it must do.

The floor (``python bench/floor_noop.py CONFIG OUT``, a bare script): start Python, parse models.yaml
with the build's YAML loader (libyaml's CSafeLoader where installed), read the manifest, stat every
output file. The benchmark (``python -m bench.build_floor``)
times both in fresh processes (median of --runs) for the example (build/models.yaml, built once into
a temp dir) and for 50 declared models, and splits the build's import time (python -X importtime).

python -m bench.build_floor --runs 7 --models 50
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "build" / "models.yaml"
TARGET = 3.0  # a no-op build may take at most 3x the floor
#: the floor as a bare script (yaml with the build's loader, json, os; not this module and its imports)
FLOOR_SCRIPT = Path(__file__).resolve().parent / "floor_noop.py"


def floor(config: Path, out: Path) -> int:
    """What a no-op build cannot avoid: the declaration, the manifest, a stat of every output."""
    import yaml

    decl = yaml.load(config.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506
    manifest = json.loads((out / "manifest.json").read_text())
    n = 0
    for dirpath, _, filenames in os.walk(out):
        for f in filenames:
            os.stat(os.path.join(dirpath, f))
            n += 1
    return len(decl["models"]) + len(manifest["models"]) + n


def _cli(config: Path, out: Path) -> list[str]:
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
    ]


def _env() -> dict[str, str]:
    """This checkout first; bytecode cached as in an installed package (the first run writes it)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(ROOT)}


def _median_seconds(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env=_env(), cwd=ROOT)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def import_split(config: Path, out: Path, top: int = 8) -> dict[str, float]:
    """Import time (ms, self time summed) per package of a no-op build (python -X importtime)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *_cli(config, out)[1:]],
        check=True,
        capture_output=True,
        text=True,
        env=_env(),
        cwd=ROOT,
    )
    per: dict[str, float] = defaultdict(float)
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+)\s+\|\s+\d+\s+\|\s*(\S+)", line)
        if m:  # self time, by package (cdk_triton by subpackage)
            parts = m.group(2).split(".")
            per[".".join(parts[:2]) if parts[0] == "cdk_triton" else parts[0]] += int(m.group(1)) / 1000
    ranked = sorted(per.items(), key=lambda kv: -kv[1])
    return {k: round(v, 1) for k, v in ranked[:top]} | {"total": round(sum(per.values()), 1)}


def measure(config: Path, out: Path, runs: int) -> dict[str, float]:
    subprocess.run(_cli(config, out), check=True, capture_output=True, env=_env(), cwd=ROOT)  # full build
    noop = _median_seconds(_cli(config, out), runs)
    base = _median_seconds([sys.executable, str(FLOOR_SCRIPT), str(config), str(out)], runs)
    return {"noop_seconds": noop, "floor_seconds": base, "ratio": noop / base}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--floor", nargs=2, metavar=("CONFIG", "OUT"), help="run the floor itself")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--models", type=int, default=50)
    args = ap.parse_args(argv)
    if args.floor:
        floor(Path(args.floor[0]), Path(args.floor[1]))
        return 0
    sys.path.insert(0, str(ROOT))
    from bench.build_common import write_result
    from bench.build_noop import declaration

    tmp = Path(tempfile.mkdtemp())
    try:
        example = measure(EXAMPLE, tmp / "example-out", args.runs)
        split = import_split(EXAMPLE, tmp / "example-out")
        many = measure(declaration(tmp / "many", args.models, "onnx"), tmp / "many-out", args.runs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    summary = [
        {
            "label": "no-op `cdk-triton build` / floor, the example",
            "value": example["ratio"],
            "unit": "x",
            "target": f"<= {TARGET:g}x",
        },
        {
            "label": f"no-op `cdk-triton build` / floor, {args.models} models",
            "value": many["ratio"],
            "unit": "x",
            "target": f"<= {TARGET:g}x",
        },
        {
            "label": "no-op `cdk-triton build`, the example",
            "value": example["noop_seconds"],
            "unit": "s",
            "target": None,
        },
    ]
    details = {"runs": args.runs, "example": example, f"models_{args.models}": many, "import_ms": split}
    write_result(
        "build_floor",
        f"python -m bench.build_floor --runs {args.runs} --models {args.models}",
        summary,
        details,
    )
    return 0 if max(example["ratio"], many["ratio"]) <= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
