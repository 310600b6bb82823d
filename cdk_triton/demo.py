"""`cdk-triton demo`: the whole path offline, on the example in this repository.

declare (build/models.yaml) -> build (build/out/manifest.json) -> synth (app.py, cdk-nag as a
validation plugin) -> cfn-lint every template -> serve each endpoint on a real local Triton
server -> invoke every model with its sample and compare with the eager model's outputs.

Stages whose layer is not installed are reported as missing rather than failing silently.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from cdk_triton.config.manifest import read_manifest
from cdk_triton.errors import CdkTritonError


@dataclass
class StageReport:
    name: str
    status: str = "missing"  # ok | failed | missing | skipped
    detail: list[str] = field(default_factory=list)
    seconds: float = 0.0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("demo", help="build, synthesize, check, serve and invoke the example app offline")
    p.add_argument("--root", default=".", help="repository root holding app.py and build/ (default: .)")
    p.add_argument("--skip-serve", action="store_true", help="stop after synth and checks")
    p.set_defaults(func=run_demo)


def _have(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _stage_build(root: Path, rep: StageReport) -> Path | None:
    manifest_path = root / "build" / "out" / "manifest.json"
    if not _have("cdk_triton.builder"):
        rep.detail.append("cdk_triton.builder is not part of this version")
        return manifest_path if manifest_path.is_file() else None
    from cdk_triton.builder import run_build

    result = run_build(root / "build" / "models.yaml", out_dir=root / "build" / "out", progress=True)
    rep.status = "ok"
    rep.detail.append(f"manifest: {result.manifest_path}")
    manifest = read_manifest(result.manifest_path)
    for name, entry in sorted(manifest.endpoints.items()):
        paths = (
            [entry.local_path] if entry.local_path else [t.local_path for t in entry.target_models.values()]
        )
        where = sorted(
            {str(manifest.resolve(p).parent if entry.is_multi_model else manifest.resolve(p)) for p in paths}
        )
        rep.detail.append(
            f"endpoint {name} ({entry.mode}): {', '.join(where)} -> {entry.s3_uri or entry.s3_prefix}"
        )
    return Path(result.manifest_path)


def _stage_synth(root: Path, manifest: Path, rep: StageReport) -> list[Path]:
    out = root / "cdk.out"
    shutil.rmtree(out, ignore_errors=True)  # a stale validation report can fail a later command
    cdk = root / "node_modules" / ".bin" / "cdk"
    if not cdk.exists():
        rep.status = "failed"
        rep.detail.append("the CDK CLI is not installed: run `npm ci` (make install does)")
        return []
    env = {**os.environ, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
    cmd = [str(cdk), "synth", "--all", "--quiet", "-o", str(out), "-c", f"manifest={manifest}"]
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        rep.status = "failed"
        rep.detail.append("cdk synth failed:\n" + (proc.stdout + proc.stderr)[-4000:])
        return []
    templates = sorted(out.glob("*.template.json"))
    rep.status = "ok"
    rep.detail.append(
        f"{len(templates)} templates in {out} (cdk-nag AwsSolutions ran as a validation plugin)"
    )
    return templates


def _stage_lint(templates: list[Path], rep: StageReport) -> None:
    if not templates:
        rep.detail.append("no templates")
        return
    cfn_lint = Path(sys.executable).with_name("cfn-lint")
    cmd = [str(cfn_lint)] if cfn_lint.exists() else ["cfn-lint"]
    proc = subprocess.run(
        [*cmd, "--format", "parseable", *map(str, templates)], capture_output=True, text=True
    )
    findings = [line for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode != 0 or findings:
        rep.status = "failed"
        rep.detail += findings[:50] or [proc.stderr[-2000:]]
    else:
        rep.status = "ok"
        rep.detail.append(f"cfn-lint: 0 errors, 0 warnings over {len(templates)} templates")


def _stage_serve(manifest_path: Path, rep: StageReport) -> None:
    if not _have("cdk_triton.local"):
        rep.detail.append("cdk_triton.local is not part of this version")
        return
    from cdk_triton.local import LocalEndpoint, invoke_sample

    manifest = read_manifest(manifest_path)
    failures = 0
    for name, entry in sorted(manifest.endpoints.items()):
        started = time.perf_counter()
        with LocalEndpoint(manifest, name) as endpoint:
            rep.detail.append(
                f"endpoint {name} ({entry.mode}) served at {endpoint.url} "
                f"in {time.perf_counter() - started:.1f} s"
            )
            targets = sorted(entry.target_models) if entry.is_multi_model else [None]
            for target in targets:
                for binary in (False, True):
                    result = invoke_sample(endpoint, target_model=target, binary=binary)
                    rep.detail.append(
                        f"  {target or entry.default_model} [{'binary+json' if binary else 'json'}]: {result}"
                    )
                    failures += 0 if getattr(result, "ok", False) else 1
    rep.status = "ok" if failures == 0 else "failed"


def run_demo(args: argparse.Namespace) -> int:
    root = Path(args.root).resolve()
    stages = [
        StageReport("build"),
        StageReport("synth + cdk-nag"),
        StageReport("cfn-lint"),
        StageReport("serve + invoke"),
    ]
    build, synth, lint, serve = stages
    t0 = time.perf_counter()
    try:
        manifest = _stage_build(root, build)
        build.seconds = time.perf_counter() - t0
        if manifest is None:
            manifest = root / "tests" / "fixtures" / "manifests" / "example.json"
            build.detail.append(f"synthesizing from the fixture manifest {manifest} instead")
        t1 = time.perf_counter()
        templates = _stage_synth(root, manifest, synth)
        synth.seconds = time.perf_counter() - t1
        t2 = time.perf_counter()
        _stage_lint(templates, lint)
        lint.seconds = time.perf_counter() - t2
        if not args.skip_serve and build.status == "ok":
            t3 = time.perf_counter()
            _stage_serve(manifest, serve)
            serve.seconds = time.perf_counter() - t3
        elif args.skip_serve:
            serve.status = "skipped"
            serve.detail.append("--skip-serve")
    except CdkTritonError as exc:
        current = next((s for s in stages if s.status == "missing" and not s.detail), stages[-1])
        current.status = "failed"
        current.detail.append(str(exc))
    print("\n== cdk-triton demo ==")
    for s in stages:
        print(f"[{s.status:>7}] {s.name} ({s.seconds:.1f} s)")
        for line in s.detail:
            print(f"          {line}")
    summary = {s.name: s.status for s in stages}
    (root / "build" / "out").mkdir(parents=True, exist_ok=True)
    (root / "build" / "out" / "demo-summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    missing = [s.name for s in stages if s.status == "missing"]
    if missing:
        print(f"not yet available in this version: {', '.join(missing)}")
    return 1 if any(s.status == "failed" for s in stages) else 0
