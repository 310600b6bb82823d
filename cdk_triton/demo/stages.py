"""The demo's stages: build, synth + cdk-nag (app, pipeline, promotion), cfn-lint, serve + invoke.

:func:`run_demo` runs them on a repository root and returns one :class:`StageReport` per stage
(also written to ``build/out/demo-summary.json``); ``commands.py`` prints them. Stages whose layer is
not installed are reported as missing rather than failing silently.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdk_triton.config.manifest import read_manifest
from cdk_triton.errors import CdkTritonError


@dataclass
class StageReport:
    """One stage of the demo: its status, what it did (``detail`` lines) and how long it took."""

    name: str
    status: str = "missing"  # ok | failed | missing | skipped
    detail: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass(frozen=True, kw_only=True, slots=True)
class DemoReport:
    """Every stage of one demo run, and the summary file written."""

    stages: tuple[StageReport, ...]
    summary_path: Path

    @property
    def missing(self) -> list[str]:
        """Stages whose layer is not part of this version."""
        return [s.name for s in self.stages if s.status == "missing"]

    @property
    def failed(self) -> bool:
        return any(s.status == "failed" for s in self.stages)


@contextlib.contextmanager
def _timed(stage: StageReport) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        stage.seconds += time.perf_counter() - started


def _have(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


#: the text example's declaration (a BERT pipeline with a tokenizers environment), built and served beside
#: the main one; its wheels come from the repository's .wheelhouse (make install fills it)
TEXT_DECLARATION = Path("build") / "examples" / "text" / "models.yaml"


def _stage_build(
    root: Path,
    rep: StageReport,
    declaration: Path | None = None,
    *,
    verbose: bool = False,
    shown: set[str] | None = None,
) -> Path | None:
    declaration = root / (declaration or Path("build") / "models.yaml")
    manifest_path = declaration.parent / "out" / "manifest.json"
    if not _have("cdk_triton.builder"):
        rep.detail.append("cdk_triton.builder is not part of this version")
        return manifest_path if manifest_path.is_file() else None
    from cdk_triton.builder import run_build

    result = run_build(
        declaration, out_dir=declaration.parent / "out", progress=True, verbose=verbose, shown_warnings=shown
    )
    rep.status = "ok"
    rep.detail.append(f"manifest: {result.manifest_path}")
    manifest = read_manifest(result.manifest_path)
    for name, entry in sorted(manifest.endpoints.items()):
        paths = (
            [entry.local_path] if entry.local_path else [t.local_path for t in entry.target_models.values()]
        )
        where = sorted(
            {
                str(manifest.resolve(p).parent if entry.per_model_archives else manifest.resolve(p))
                for p in paths
            }
        )
        rep.detail.append(
            f"endpoint {name} ({entry.mode}): {', '.join(where)} -> {entry.s3_uri or entry.s3_prefix}"
        )
    return Path(result.manifest_path)


#: what CDK Pipelines itself generates and cfn-lint flags: a DependsOn on the pipeline role that a GetAtt
#: already implies (W3005), and the deploy actions' role given as a cross-stack ARN (E3703)
PIPELINE_GENERATED_FINDINGS = ("W3005", "E3703")


def _stage_synth(
    root: Path, manifest: Path, rep: StageReport, *, app: str | None = None, out_name: str = "cdk.out"
) -> list[Path]:
    out = root / out_name
    shutil.rmtree(out, ignore_errors=True)  # a stale validation report can fail a later command
    cdk = root / "node_modules" / ".bin" / "cdk"
    if not cdk.exists():
        rep.status = "failed"
        rep.detail.append("the CDK CLI is not installed: run `npm ci` (make install does)")
        return []
    env = {**os.environ, "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20"}
    cmd = [str(cdk), "synth", "--all", "--quiet", "-o", str(out), "-c", f"manifest={manifest}"]
    if app:
        cmd += ["--app", app]
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        rep.status = "failed"
        rep.detail.append("cdk synth failed:\n" + (proc.stdout + proc.stderr)[-4000:])
        return []
    templates = sorted(out.rglob("*.template.json"))  # stage assemblies of a pipeline sit in subfolders
    rep.status = "ok"
    rep.detail.append(
        f"{len(templates)} templates in {out} (cdk-nag AwsSolutions ran as a validation plugin)"
    )
    return templates


def _stage_lint(templates: list[Path], rep: StageReport, *, ignore: tuple[str, ...] = ()) -> None:
    if not templates:
        rep.detail.append("no templates")
        return
    cfn_lint = Path(sys.executable).with_name("cfn-lint")
    cmd = [str(cfn_lint)] if cfn_lint.exists() else ["cfn-lint"]
    if ignore:
        cmd += ["--ignore-checks", *ignore]
    proc = subprocess.run(
        [*cmd, "--format", "parseable", "--", *map(str, templates)], capture_output=True, text=True
    )
    findings = [line for line in proc.stdout.splitlines() if line.strip()]
    if proc.returncode != 0 or findings:
        rep.status = "failed"
        rep.detail += findings[:50] or [proc.stderr[-2000:]]
    else:
        rep.status = "ok" if rep.status != "failed" else "failed"
        skipped = f" ({', '.join(ignore)}: generated by CDK Pipelines itself)" if ignore else ""
        rep.detail.append(f"cfn-lint: 0 errors, 0 warnings over {len(templates)} templates{skipped}")


def _stage_serve(manifest_path: Path, rep: StageReport) -> None:
    if not _have("cdk_triton.local"):
        rep.detail.append("cdk_triton.local is not part of this version")
        return
    from cdk_triton.local import LocalEndpoint, invoke_sample
    from cdk_triton.local.components import ComponentsEndpoint

    manifest = read_manifest(manifest_path)
    failures = 0
    for name, entry in sorted(manifest.endpoints.items()):
        started = time.perf_counter()
        kind = ComponentsEndpoint if entry.hosting_mode.components else LocalEndpoint
        with kind(manifest, name) as endpoint:
            rep.detail.append(
                f"endpoint {name} ({entry.mode}) served at {endpoint.url} "
                f"in {time.perf_counter() - started:.1f} s"
            )
            for target, component in _invocations(entry):
                for binary in (False, True):
                    result = invoke_sample(endpoint, target_model=target, binary=binary, component=component)
                    what = component or target or entry.default_model
                    rep.detail.append(f"  {what} [{'binary+json' if binary else 'json'}]: {result}")
                    failures += 0 if getattr(result, "ok", False) else 1
            if getattr(entry, "async_inference", None) is not None:  # InvokeEndpointAsync through boto3
                from cdk_triton.local.client import AsyncClient

                client: Any = AsyncClient(
                    endpoint
                )  # an EndpointLike by duck typing, as `invoke --async` uses it
                result = invoke_sample(client)
                rep.detail.append(f"  {entry.default_model} [async: output in S3 / the folder]: {result}")
                failures += 0 if getattr(result, "ok", False) else 1
    rep.status = "ok" if failures == 0 else "failed"


def _invocations(entry: Any) -> list[tuple[str | None, str | None]]:
    """(TargetModel, InferenceComponentName) of each invocation of an endpoint's samples."""
    if entry.hosting_mode.components:
        return [(None, c.component_name) for _, c in sorted(entry.components.items())]
    if entry.hosting_mode.loads_on_demand:
        return [(t, None) for t in sorted(entry.target_models)]
    return [(None, None)]


def run_demo(root: Path, *, skip_serve: bool = False, verbose: bool = False) -> DemoReport:
    """Build, synthesize (app, pipeline and promotion, cdk-nag), cfn-lint, serve and invoke the example at ``root``.

    ``verbose``: the builds print each warning's full detail (a CVE list) under its one line."""
    root = Path(root).resolve()
    stages = (
        StageReport("build"),
        StageReport("synth + cdk-nag"),
        StageReport("pipeline synth + cdk-nag"),
        StageReport("promotion synth + cdk-nag"),
        StageReport("cfn-lint"),
        StageReport("serve + invoke"),
    )
    build, synth, psynth, promo, lint, serve = stages
    try:
        house = root / ".wheelhouse"
        if house.is_dir():  # `make install` fills it (and the Makefile exports the variable)
            os.environ.setdefault("CDK_TRITON_WHEELHOUSE", str(house))
        with _timed(build):
            shown: set[str] = set()  # a warning both builds find (the release's advisories) is said once
            manifest = _stage_build(root, build, verbose=verbose, shown=shown)
            text_manifest = (
                _stage_build(root, build, TEXT_DECLARATION, verbose=verbose, shown=shown)
                if manifest is not None
                else None
            )
        if manifest is None:
            manifest = root / "tests" / "fixtures" / "manifests" / "example.json"
            build.detail.append(f"synthesizing from the fixture manifest {manifest} instead")
        with _timed(synth):
            templates = _stage_synth(root, manifest, synth)
        with _timed(psynth):
            app = f"{Path(sys.executable)} pipeline_app.py"
            pipeline = _stage_synth(root, manifest, psynth, app=app, out_name="cdk.out.pipeline")
        with _timed(promo):  # placeholder staging and prod accounts: the synth is offline
            app = f"{Path(sys.executable)} promotion_app.py"
            promotion = _stage_synth(root, manifest, promo, app=app, out_name="cdk.out.promotion")
        with _timed(lint):
            _stage_lint(templates, lint)
            for out, synthesized in (("cdk.out.pipeline", pipeline), ("cdk.out.promotion", promotion)):
                top = [t for t in synthesized if t.parent == root / out]
                _stage_lint([t for t in synthesized if t not in top], lint)
                _stage_lint(top, lint, ignore=PIPELINE_GENERATED_FINDINGS)
        if skip_serve:
            serve.status = "skipped"
            serve.detail.append("--skip-serve")
        elif build.status == "ok":
            with _timed(serve):
                _stage_serve(manifest, serve)
                if text_manifest is not None:
                    failed = serve.status == "failed"
                    _stage_serve(text_manifest, serve)
                    serve.status = "failed" if failed else serve.status
    except CdkTritonError as exc:
        current = next((s for s in stages if s.status == "missing" and not s.detail), stages[-1])
        current.status = "failed"
        current.detail.append(str(exc))
    summary = root / "build" / "out" / "demo-summary.json"
    summary.parent.mkdir(parents=True, exist_ok=True)
    summary.write_text(json.dumps({s.name: s.status for s in stages}, indent=2) + "\n")
    return DemoReport(stages=stages, summary_path=summary)
