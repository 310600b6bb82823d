"""The release-runtime check on the example: cold (its environment created from the package index) and warm
(the environment found), against today's parity time in the same build.

python -m bench.target_runtime [--no-cold]

One build of the example with the check on (the environment in a fresh runtimes folder: created, cold), then
a build of a fresh output with the environment found (warm: every model probed), then an incremental build
(the recorded results re-used). The check step's own time is measured inside each build (the step wrapped):
since the probe is handed each model as it is exported, that is what the build still waits for after its
export. The probe's CPU seconds (its load, run and comparison per model, in the release's runtime, beside
the export) are read from its result lines, and parity is measured in the same build (the exported
artifact's loads, sample runs and comparisons, the eager reference runs). What the check adds to the whole
build is measured too, as a user meets it: ``cdk-triton build --force`` of the example in a fresh process with
the check off and on (``CDK_TRITON_TARGET_RUNTIME``), alternated (--pairs), after one warm-up of each; the median
of the pairs' wall-time ratios and differences (a pair shares the machine's state, so its ratio drifts less
than the single times).
The cold line also records what the environment downloaded (pip's own "Downloading ... (N MB)" lines) and
its size on disk.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.build_common import write_result
from cdk_triton.builder import steps, target_runtime
from cdk_triton.builder.export import artifact
from cdk_triton.builder.target_runtime import check_target_runtimes
from cdk_triton.config import target_runtime as rules
from cdk_triton.config.manifest import read_manifest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "build" / "models.yaml"


class Clock:
    """Seconds spent in the check step and in parity, per build."""

    def __init__(self) -> None:
        self.check = 0.0
        self.parity = 0.0
        self.load = 0.0  # loading artifacts in this process (parity's runners; also the export's own checks)
        self.reference = 0.0  # the eager model's runs parity compares with (and its determinism check)
        self.probe = 0.0  # the probe's CPU seconds in the release's runtime (its result lines)

    def reset(self) -> None:
        self.check = self.parity = self.load = self.reference = self.probe = 0.0


def instrument(clock: Clock) -> None:
    """Wrap the check step (in ``steps.STEPS``) and parity (the artifact's runs and ``compare``)."""

    def step(ctx: Any) -> Any:
        t = time.perf_counter()
        try:
            return check_target_runtimes(ctx)
        finally:
            clock.check += time.perf_counter() - t

    steps.STEPS = tuple(step if s is check_target_runtimes else s for s in steps.STEPS)
    read_results = target_runtime._read_results

    def results(path: Path) -> Any:  # the probe's CPU seconds per model, from its result lines
        versions, found, begun = read_results(path)
        clock.probe += sum(float(line.get("cpu_seconds", 0.0)) for line in found.values())
        return versions, found, begun

    target_runtime._read_results = results  # type: ignore[assignment]
    compare, other, export = artifact.compare, artifact._parity_at_other_size, artifact.export_model

    def timed(fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                clock.parity += time.perf_counter() - t

        return run

    def export_model(ctx: Any, m: Any, tmp: Path, *, write: Any, after: Any = None) -> Any:
        def write_timed(*a: Any, **k: Any) -> Any:
            written = write(*a, **k)
            object.__setattr__(written, "runner", timed(written.runner))  # the artifact's sample runs
            return written

        return export(ctx, m, tmp, write=write_timed, after=after)

    import onnxruntime
    import torch

    # loading the artifact for parity: torch.jit.load / an ONNX Runtime session (the check loads them too)
    jit_load, session = torch.jit.load, onnxruntime.InferenceSession

    def loads(fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                clock.load += time.perf_counter() - t

        return run

    torch.jit.load = loads(jit_load)  # type: ignore[assignment]
    onnxruntime.InferenceSession = loads(session)  # type: ignore[misc]
    guarded = artifact.guarded

    def reference(runner: Any, m: Any) -> Any:  # the eager reference's runs (expected outputs, determinism)
        run = guarded(runner, m)

        def timed_run(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return run(*a, **k)
            finally:
                clock.reference += time.perf_counter() - t

        return timed_run

    artifact.guarded = reference  # type: ignore[assignment]
    artifact.compare = timed(compare)  # type: ignore[assignment]
    artifact._parity_at_other_size = timed(other)  # type: ignore[assignment]
    artifact.export_model = export_model  # type: ignore[assignment]


def downloaded_mb(log: Path) -> float:
    """The MB pip reported downloading in an environment's creation log."""
    total = 0.0
    scale = {"kB": 1e-3, "MB": 1.0, "GB": 1e3}
    for value, unit in re.findall(
        r"Downloading \S+ \(([\d.]+) (kB|MB|GB)\)", log.read_text("utf-8", "replace")
    ):
        total += float(value) * scale[unit]
    return total


def disk_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink()) / 1e6


def build(out: Path, clock: Clock, *, target_runtime: bool = True, **kw: Any) -> dict[str, float]:
    from cdk_triton.builder import run_build

    clock.reset()
    t = time.perf_counter()
    run_build(EXAMPLE, out_dir=out, progress=False, jobs=1, target_runtime=target_runtime, **kw)
    return {
        "build_s": time.perf_counter() - t,
        "check_s": clock.check,
        "probe_s": clock.probe,
        "parity_s": clock.parity,
        "parity_with_loads_s": clock.parity + clock.load,
        "parity_whole_s": clock.parity + clock.load + clock.reference,
    }


def whole_builds(tmp: Path, pairs: int, runs: dict[str, dict[str, float]]) -> tuple[list[float], list[float]]:
    """``cdk-triton build --force`` of the example in fresh processes, the check off then on, ``pairs``
    times after a warm-up of each: (on minus off, on / off) per pair, wall seconds."""
    import subprocess
    import sys

    def timed(on: bool, out: Path) -> float:
        env = {**os.environ, rules.SWITCH_VARIABLE: "on" if on else "off"}
        command = [
            sys.executable,
            "-m",
            "cdk_triton.cli",
            "build",
            "--config",
            str(EXAMPLE),
            "--out",
            str(out),
            "--force",
        ]
        t = time.perf_counter()
        subprocess.run(command, env=env, check=True, capture_output=True, cwd=ROOT)
        return time.perf_counter() - t

    timed(False, tmp / "whole-off")
    timed(True, tmp / "whole-on")
    added, ratios = [], []
    for i in range(pairs):
        off, on = timed(False, tmp / "whole-off"), timed(True, tmp / "whole-on")
        added.append(on - off)
        ratios.append(on / off)
        runs[f"pair-{i}"] = {"off_s": off, "on_s": on}
    return added, ratios


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--no-cold", action="store_true", help="skip the cold run (the ~3 GB download)")
    ap.add_argument("--pairs", type=int, default=7, help="whole builds with the check off and on, alternated")
    args = ap.parse_args(argv)
    clock = Clock()
    instrument(clock)
    tmp = Path(tempfile.mkdtemp(prefix="bench-target-runtime-"))
    runs: dict[str, dict[str, float]] = {}
    cold: dict[str, Any] = {}
    try:
        if not args.no_cold:
            os.environ[rules.ROOT_VARIABLE] = str(tmp / "runtimes")  # nothing there: created now
            runs["cold"] = build(tmp / "cold", clock)
            (env_dir,) = [
                p for p in (tmp / "runtimes").iterdir() if p.is_dir() and not p.name.startswith(".")
            ]
            cold = {
                "environment": env_dir.name,
                "downloaded_mb": round(downloaded_mb(env_dir.with_name(env_dir.name + ".log")), 1),
                "installed_mb": round(disk_mb(env_dir), 1),
            }
        else:
            os.environ.pop(rules.ROOT_VARIABLE, None)  # the user's environments (created before)
        runs["warm"] = build(tmp / "warm", clock, force=True)  # every model exported and probed again
        runs["incremental"] = build(tmp / "warm", clock)  # the recorded results re-used
        added, ratios = whole_builds(tmp, args.pairs, runs)
        checks = {
            n: e.target_runtime.to_dict()
            for n, e in read_manifest(tmp / "warm").models.items()
            if e.target_runtime
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    warm = runs["warm"]
    ratio = warm["check_s"] / warm["parity_s"] if warm["parity_s"] else float("nan")
    ratio_loads = (
        warm["check_s"] / warm["parity_with_loads_s"] if warm["parity_with_loads_s"] else float("nan")
    )
    whole = warm["parity_whole_s"]
    ratio_whole = warm["check_s"] / whole if whole else float("nan")
    added_s = statistics.median(added) if added else float("nan")
    ratio_s = statistics.median(ratios) if ratios else float("nan")
    summary = [
        {"label": "release-runtime check, warm: what the build waits for after its export (4 models probed)", "value": warm["check_s"], "unit": "s", "target": None},
        {"label": "the probe's CPU seconds in the release's runtime (loads, runs, comparisons; beside the export)", "value": warm["probe_s"], "unit": "s", "target": None},
        {"label": "parity in the same build (artifact sample runs + comparisons)", "value": warm["parity_s"], "unit": "s", "target": None},
        {"label": "warm check / parity", "value": ratio, "unit": "x", "target": None},
        {"label": "parity with the artifacts' loads (torch.jit.load, ONNX Runtime sessions)", "value": warm["parity_with_loads_s"], "unit": "s", "target": None},
        {"label": "warm check / parity with the loads", "value": ratio_loads, "unit": "x", "target": None},
        {"label": "parity, whole (eager reference runs + artifact loads, runs and comparisons)", "value": whole, "unit": "s", "target": None},
        {"label": "warm check / whole parity", "value": ratio_whole, "unit": "x", "target": 1.5},
        {"label": "the probe's CPU seconds / whole parity (the work, wherever it runs)", "value": warm["probe_s"] / whole if whole else float("nan"), "unit": "x", "target": None},
        {"label": f"`cdk-triton build --force`, check on / off, wall time (median of {len(ratios)} alternated pairs; {min(ratios, default=0):.3f}-{max(ratios, default=0):.3f}x)", "value": ratio_s, "unit": "x", "target": None},
        {"label": f"`cdk-triton build --force`, check on minus off (median of the pairs; {min(added, default=0):+.2f} to {max(added, default=0):+.2f} s)", "value": added_s, "unit": "s", "target": None},
        {"label": "`cdk-triton build --force`, check on minus off / whole parity", "value": added_s / whole if whole else float("nan"), "unit": "x", "target": None},
        {"label": "warm check / the whole warm build", "value": warm["check_s"] / warm["build_s"], "unit": "x", "target": None},
        {"label": "release-runtime check, incremental (results re-used)", "value": runs["incremental"]["check_s"], "unit": "s", "target": None},
    ]  # fmt: skip
    if "cold" in runs:
        summary += [
            {"label": "release-runtime check, cold (environment created)", "value": runs["cold"]["check_s"], "unit": "s", "target": None},
            {"label": "cold: downloaded from the package index", "value": cold["downloaded_mb"], "unit": "MB", "target": None},
            {"label": "cold: environment on disk", "value": cold["installed_mb"], "unit": "MB", "target": None},
        ]  # fmt: skip
    write_result(
        "target_runtime",
        "python -m bench.target_runtime",
        summary,
        {"runs": runs, "cold": cold, "checks": checks},
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
