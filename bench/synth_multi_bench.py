"""Synth of a three-stack app (bench/synth_multi.py): cdk-triton constructs vs the same app in L1s.

The app's VPC (an L2 ``Vpc`` in its ``Network`` stack) is the same in both versions: the constructs'
serving stacks are compared with the same stacks hand-written in L1s (``l1``). ``l1_vpc`` hand-writes
the VPC too; it is timed in process as a reference (no target): how the app's choice of VPC moves the
ratio. Three ways, each rotating which version goes first, medians of the rounds (target: within 1.1x):

* in process: define + ``app.synth()`` in this process (schema validation off, cdk-nag off);
* ``cdk synth``: the CDK CLI (node_modules) runs ``python bench/synth_multi.py constructs|l1`` in a
  fresh process (``CDK_VALIDATION=false``, no lookups, run from a temp directory so the repo's
  cdk.json feature flags apply to neither), what a user waits for;
* the same with cdk-nag AwsSolutions on (its findings on the VPC fail both synths alike; the time counts).

All versions write the same CloudFormation, logical ids aside, and acknowledge the same cdk-nag
findings (bench/equivalence.py; checked here before timing and by a unit test). The jsii round trips
of one synth of each are counted, with those the constructs' own extras add (the resource headroom
check, the cdk-nag acknowledgments, the not-uploaded warning).

Plus a profile of one fresh process of the constructs version (where the time goes: Python and
aws_cdk imports with the node/jsii start, the cdk-triton imports, the constructs' own Python and their
jsii round trips, the app's L2 VPC, the synth in node, cdk-nag) with jsii's package cache warm, and
the node/jsii start once with a cold (empty) cache. The machine is shared: the load average before
and after is recorded. Writes bench/results/synth_multi.json.

Run: ``python -m bench.synth_multi_bench [--rounds N] [--cli-rounds N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.equivalence import differences

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "bench" / "synth_multi.py"
CDK = ROOT / "node_modules" / ".bin" / "cdk"
VERSIONS = ("constructs", "l1")
#: Timed in process only, without a target: the app's VPC hand-written in L1s too.
REFERENCE = "l1_vpc"

_PROFILE = r"""
import json, os, sys, time, tempfile
t0 = time.perf_counter()
import aws_cdk as cdk
from aws_cdk import aws_ec2
t_cdk = time.perf_counter()
sys.path.insert(0, sys.argv[1])
import cdk_triton.constructs
t_triton = time.perf_counter()
from jsii._kernel.providers import process as P
from bench import synth_multi as sm
spent = {"cdk_triton": [0, 0.0], "app": [0, 0.0], "other": [0, 0.0]}
send = P._NodeProcess.send
def counted(self, req, rt):
    t = time.perf_counter()
    try:
        return send(self, req, rt)
    finally:
        f, cat = sys._getframe(1), "other"
        while f is not None:
            name = f.f_code.co_filename
            if "/cdk_triton/" in name:
                cat = "cdk_triton"; break
            if name.endswith("synth_multi.py"):
                cat = "app"; break
            f = f.f_back
        spent[cat][0] += 1; spent[cat][1] += time.perf_counter() - t
P._NodeProcess.send = counted
nag = sys.argv[2] == "nag"
app = cdk.App(outdir=tempfile.mkdtemp(), builtin_cloud_formation_validation=False)
before = {k: list(v) for k, v in spent.items()}
t1 = time.perf_counter()
sm.build_constructs(app, sm.DEFAULT_MANIFEST)
t2 = time.perf_counter()
define_spent = {k: [v[0] - before[k][0], v[1] - before[k][1]] for k, v in spent.items()}
if nag:
    sm.add_nag(app)  # imports cdk_nag (its jsii assembly) and adds the plugin
t3 = time.perf_counter()
try:
    app.synth()
except RuntimeError:
    assert nag
t4 = time.perf_counter()
print(json.dumps({"imports_aws_cdk": t_cdk - t0, "imports_cdk_triton": t_triton - t_cdk,
                  "define": t2 - t1, "nag_setup": t3 - t2, "synth": t4 - t3, "jsii": define_spent}))
"""


def _median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION="20", CDK_DISABLE_CLI_TELEMETRY="true")
    env.update(extra)
    return env


def in_process(rounds: int, nag: bool, versions: tuple[str, ...] = VERSIONS) -> dict[str, list[float]]:
    from bench import synth_multi as sm

    for which in versions:  # warm-up: jsii start, module loading
        _one(sm, which, nag)
    times: dict[str, list[float]] = {w: [] for w in versions}
    for i in range(rounds):
        for which in _rotated(versions, i):
            times[which].append(_one(sm, which, nag))
    return times


def _rotated(versions: tuple[str, ...], i: int) -> tuple[str, ...]:
    """Round ``i``'s order: each version goes first, second, ... equally often."""
    k = i % len(versions)
    return versions[k:] + versions[:k]


def _one(sm: Any, which: str, nag: bool) -> float:
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        try:
            sm.synth(which, sm.DEFAULT_MANIFEST, outdir=out, nag=nag)
        except RuntimeError:  # cdk-nag's findings (the VPC's flow logs, ...) fail both versions alike
            if not nag:
                raise
        return time.perf_counter() - t0


def cli(which: str, nag: bool, pycache: str) -> float:
    """Wall time of ``cdk synth`` of one version, from an empty temp directory (no cdk.json)."""
    with tempfile.TemporaryDirectory(prefix="synth-multi-") as work:
        cmd = [str(CDK), "synth", "--app", f"{sys.executable} {APP} {which}", "-o", f"{work}/cdk.out"]
        cmd += [
            "--quiet",
            "--no-version-reporting",
            "--no-notices",
            "--no-lookups",
            "-c",
            f"nag={nag}".lower(),
        ]
        env = _env(CDK_VALIDATION="false", PYTHONPYCACHEPREFIX=pycache)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        ok = (Path(work) / "cdk.out" / "ServingB.template.json").exists()
        if not ok or (proc.returncode != 0 and not nag):
            raise RuntimeError(f"cdk synth {which} failed:\n{proc.stdout}\n{proc.stderr}")
        return wall


def cli_rounds(rounds: int, nag: bool, pycache: str) -> dict[str, list[float]]:
    for which in VERSIONS:
        cli(which, nag, pycache)  # warm-up: bytecode cache, page cache
    times: dict[str, list[float]] = {w: [] for w in VERSIONS}
    for i in range(rounds):
        for which in _rotated(VERSIONS, i):
            times[which].append(cli(which, nag, pycache))
    return times


def profile(rounds: int, nag: bool, pycache: str, cache_root: str | None = None) -> list[dict[str, Any]]:
    """Phases of fresh processes of the constructs version (see _PROFILE)."""
    extra = {"PYTHONPYCACHEPREFIX": pycache}
    if cache_root is not None:
        extra["JSII_RUNTIME_PACKAGE_CACHE_ROOT"] = cache_root
    runs = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", _PROFILE, str(ROOT), "nag" if nag else "off"],
            cwd=ROOT,
            env=_env(**extra),
            capture_output=True,
            text=True,
            check=True,
        )
        data = json.loads(proc.stdout.strip().splitlines()[-1])
        data["process"] = time.perf_counter() - t0
        runs.append(data)
    return runs


def _split(runs: list[dict[str, Any]]) -> dict[str, float]:
    """Medians of the phases; the constructs' define split into their jsii round trips and their Python."""

    def med(f: Any) -> float:
        return round(_median([f(r) for r in runs]), 4)

    return {
        "process_wall": med(lambda r: r["process"]),
        "python_start_and_imports_aws_cdk_with_node_jsii_start": med(lambda r: r["imports_aws_cdk"]),
        "imports_cdk_triton": med(lambda r: r["imports_cdk_triton"]),
        "define_total": med(lambda r: r["define"]),
        "define_cdk_triton_jsii": med(lambda r: r["jsii"]["cdk_triton"][1]),
        "define_cdk_triton_jsii_calls": med(lambda r: r["jsii"]["cdk_triton"][0]),
        "define_app_l2_vpc_and_stacks_jsii": med(lambda r: r["jsii"]["app"][1]),
        "define_app_jsii_calls": med(lambda r: r["jsii"]["app"][0]),
        "define_python_rest": med(
            lambda r: r["define"] - r["jsii"]["cdk_triton"][1] - r["jsii"]["app"][1] - r["jsii"]["other"][1]
        ),
        "synth_in_node": med(lambda r: r["synth"]),
    }


def _ratio(times: dict[str, list[float]], baseline: str = "l1") -> float:
    return _median(times["constructs"]) / _median(times[baseline])


class _Quiet:
    """Annotations that write nothing (the ablation of the constructs' warnings and infos)."""

    def add_warning_v2(self, *_: Any) -> None:
        pass

    def add_info(self, *_: Any) -> None:
        pass


def _causes() -> dict[str, Any]:
    """What switches each of the constructs' own extras off (for ``ablation`` only)."""
    from unittest import mock

    import aws_cdk as cdk

    from cdk_triton.constructs import _nag, endpoint

    return {
        "stack resource headroom check (one find_all per endpoint)": lambda: mock.patch.object(
            endpoint.TritonEndpoint, "_check_headroom", lambda self: None
        ),
        "cdk-nag acknowledgments (one metadata entry per endpoint)": lambda: mock.patch.object(
            _nag, "acknowledge_all", lambda scope, acks: None
        ),
        "annotations (the manifest-not-uploaded warning, once per stack)": lambda: mock.patch.object(
            cdk.Annotations, "of", staticmethod(lambda scope: _Quiet())
        ),
    }


def _count_calls(sm: Any, which: str) -> int:
    """jsii round trips of one in-process synth of ``which`` (deterministic, unlike its time)."""
    from jsii._kernel.providers import process

    send = process._NodeProcess.send
    calls = [0]

    def counted(self: Any, request: Any, response_type: Any) -> Any:
        calls[0] += 1
        return send(self, request, response_type)

    process._NodeProcess.send = counted  # type: ignore[method-assign]
    try:
        _one(sm, which, False)
    finally:
        process._NodeProcess.send = send  # type: ignore[method-assign]
    return calls[0]


def ablation() -> dict[str, Any]:
    """jsii round trips of both versions, and how many each extra of the constructs adds (on minus off).

    Round trips, not milliseconds: each costs 0.2-0.5 ms here, and on 2 shared cores a timed
    on/off difference of 1-3 ms drowns in the noise of the rounds.
    """
    from bench import synth_multi as sm

    calls = {w: _count_calls(sm, w) for w in VERSIONS}
    by_cause = {}
    for cause, off in _causes().items():
        with off():
            without = _count_calls(sm, "constructs")
        by_cause[cause] = calls["constructs"] - without
    return {"calls": calls, "extra_calls_by_cause": by_cause}


def _noise(xs: list[float]) -> float:
    """Spread of the rounds: (max - min) / median."""
    return round((max(xs) - min(xs)) / _median(xs), 2) if xs else float("nan")


def _times(times: dict[str, list[float]], digits: int = 4) -> dict[str, Any]:
    return {
        "median_seconds": {k: round(_median(v), digits) for k, v in times.items()},
        "spread": {k: _noise(v) for k, v in times.items()},
        "all_seconds": {k: [round(x, digits) for x in v] for k, v in times.items()},
        "ratio_constructs_over_l1": round(_ratio(times), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=31, help="in-process rounds")
    parser.add_argument("--cli-rounds", type=int, default=7, help="cdk synth rounds (0 to skip)")
    parser.add_argument("--nag-rounds", type=int, default=3, help="rounds with cdk-nag on (0 to skip)")
    parser.add_argument("--profile-rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "synth_multi.json")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    from bench import synth_multi as sm

    versions = (*VERSIONS, REFERENCE)
    tpls = {w: sm.synth(w, sm.DEFAULT_MANIFEST, outdir=tempfile.mkdtemp()) for w in versions}
    for w in versions[1:]:
        unequal = differences(tpls["constructs"], tpls[w])
        if unequal:  # the ratio means something only for the same CloudFormation
            raise SystemExit(
                f"the hand-written app {w} no longer matches the constructs:\n" + "\n".join(unequal)
            )
    resources = sum(len(t["Resources"]) for t in tpls["constructs"].values())
    template_bytes = {w: sum(len(json.dumps(t)) for t in tpls[w].values()) for w in versions}
    proc = in_process(args.rounds, nag=False, versions=versions)
    causes = ablation()
    proc_nag = in_process(args.nag_rounds, nag=True) if args.nag_rounds else None
    with tempfile.TemporaryDirectory(prefix="synth-multi-pycache-") as pycache:
        cli_off = cli_rounds(args.cli_rounds, False, pycache) if args.cli_rounds else None
        cli_nag = cli_rounds(args.nag_rounds, True, pycache) if args.cli_rounds and args.nag_rounds else None
        warm = profile(args.profile_rounds, False, pycache)
        warm_nag = profile(max(1, args.nag_rounds), True, pycache)
        with tempfile.TemporaryDirectory(prefix="jsii-cold-") as cold_root:
            cold = profile(1, False, pycache, cache_root=cold_root)
    load_after = os.getloadavg()
    split = _split(warm)
    nag_split = _split(warm_nag)
    split["cdk_nag_import_and_plugin"] = round(_median([r["nag_setup"] for r in warm_nag]), 4)
    split["synth_in_node_with_cdk_nag"] = nag_split["synth_in_node"]
    split["cdk_nag_rules_at_synth"] = round(nag_split["synth_in_node"] - split["synth_in_node"], 4)
    cold_start = round(cold[0]["imports_aws_cdk"], 3)
    summary = [
        {
            "label": "three-stack app (4 endpoints, VPC), synth in process, constructs vs L1 (time ratio)",
            "value": round(_ratio(proc), 3),
            "unit": "x",
            # accepted at 1.13x (the performance issue's decision: logical ids and the headroom check stay);
            # the `cdk synth` ratio below is what users wait for and keeps its target
            "target": None,
        },
        {
            "label": "three-stack app, synth in process, constructs vs an all-L1 app (its VPC by hand too)",
            "value": round(_ratio(proc, REFERENCE), 3),
            "unit": "x",
            "target": None,
        },
    ]
    if cli_off:
        summary.append(
            {
                "label": "three-stack app, `cdk synth` (CLI, fresh process), constructs vs L1 (time ratio)",
                "value": round(_ratio(cli_off), 3),
                "unit": "x",
                "target": "<= 1.1x",
            }
        )
    result = {
        "name": "synth_multi",
        "command": "python -m bench.synth_multi_bench",
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()}",
        "summary": summary,
        "what": "three-stack app (Network: the app's L2 VPC; ServingA/B: 2 endpoints each with scaling, "
        "dashboard, alarms, topic) with cdk-triton constructs vs the same serving stacks hand-written in L1s "
        "(l1), and vs the whole app hand-written, the VPC too (l1_vpc, reference) (bench/synth_multi.py)",
        "resources": resources,
        "type_counts_equal": True,
        "templates_equal_but_logical_ids": True,
        "template_bytes": template_bytes,
        "load_average_before_after": [round(x, 2) for x in load_before + load_after],
        "in_process": {"rounds": args.rounds, "cdk_nag": False, **_times(proc)},
        "in_process_cdk_nag": _times(proc_nag) if proc_nag else None,
        "cdk_synth_cli": {"rounds": args.cli_rounds, **_times(cli_off, 3)} if cli_off else None,
        "cdk_synth_cli_cdk_nag": _times(cli_nag, 3) if cli_nag else None,
        "profile_constructs_fresh_process_seconds": {"jsii_cache": "warm", "rounds": len(warm), **split},
        "jsii_round_trips": {
            "what": "jsii round trips of one in-process synth of each version, and those each extra of the "
            "constructs adds; the rest of the difference is the construct tree: 20 wrapper constructs whose "
            "ids are the logical-id contract, the imported alarm topic, the artifacts binding",
            "gap_ms": round((_median(proc["constructs"]) - _median(proc["l1"])) * 1000, 2),
            **causes,
        },
        "jsii_cold_cache_python_start_and_imports_aws_cdk": cold_start,
        "target_ratio": 1.1,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    for row in summary:
        print(f"{row['label']}: {row['value']:.3f}x (target {row['target']})")
    print(
        json.dumps(
            {
                k: result[k]
                for k in (
                    "profile_constructs_fresh_process_seconds",
                    "jsii_round_trips",
                    "load_average_before_after",
                )
            }
        )
    )
    print(f"jsii cold cache start {cold_start} s -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
