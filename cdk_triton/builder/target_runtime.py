"""The release-runtime check: every TorchScript / ONNX artifact loaded and run in the declared release's
own runtime before anything is packaged (the rules: :mod:`cdk_triton.config.target_runtime`).

Parity (``parity.py``) runs the artifact with the torch / onnxruntime installed beside the build; the
endpoint runs the release's libraries (Triton 24.09: libtorch 2.5.0, ONNX Runtime 1.19.2). A TorchScript
file whose graph calls an operator newer than that libtorch passes parity here and fails to load there
(``Unknown builtin op: aten::hash_tensor``). This step closes that gap:

1. ``runtimes.environments.ensure_environment``: a virtual environment per release and runtime set, with
   exactly the release's versions from the package index (``pip install torch==2.5.0 onnxruntime==1.19.2
   numpy<2``), created once in the user's cache and shared by every build and project (lock, temporary
   directory + rename, a completion marker with the requirements' hash; never trusted when corrupt).
2. :func:`check_target_runtimes` (a build step after the samples are written): runs
   ``runtimes/probe.py`` in that environment on each model's artifact and the sample request /
   expected response the build wrote, with parity's tolerances, and records the result per model
   (the manifest's ``target_runtime``); a model that fails to load or to match is refused
   (``TargetRuntimeLoadFailed`` / ``TargetRuntimeMismatch``) naming the operator or exception, the
   release and the fixes. No package index: the models are recorded ``unavailable`` with a warning,
   never passed. ``--no-target-runtime`` records them ``skipped``.

:func:`start_probe` (a step before the export) starts the probe in the environment when it exists, so
importing the release's runtimes (seconds, for torch) overlaps the export, and hands it each model as soon
as the model is exported (:func:`submit`, the export's ``after_export`` hook): the probe loads and runs one
model while the build exports the next, and the check step waits only for what is left.

A cached model re-uses its recorded pass (``<out>/cache/target-runtime/<model>.json``, keyed by the model's
cache key and the runtime's version; ``--force`` checks again). TensorRT plans take the same rung on the GPU
job (the release's TensorRT from the index, a CUDA GPU); without a GPU they are recorded ``skipped``.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from cdk_triton.builder.context import BuildContext, StepOutput, StepStatus
from cdk_triton.builder.samples import json_text, tolerance
from cdk_triton.config import tables
from cdk_triton.config import target_runtime as rules
from cdk_triton.config.target_runtime import TargetRuntimeCheck
from cdk_triton.errors import BuildError
from cdk_triton.runtimes import environments
from cdk_triton.runtimes.environments import RuntimeEnv, RuntimeUnavailable

#: seconds one probe run (every pending model) may take
PROBE_TIMEOUT_S = 900


# ---------------------------------------------------------------------------- the build step


def runtime_of(ctx: BuildContext, name: str) -> str | None:
    """The release runtime that serves model ``name`` (its format row's ``release_fact``), or None."""
    fact = ctx.resolved[name].spec.row.release_fact
    return fact if fact in rules.RUNTIME_PACKAGES else None


def check_target_runtimes(ctx: BuildContext) -> StepOutput:
    """Run every built TorchScript / ONNX (and, on a GPU, TensorRT) model's sample in the declared
    release's own runtime; record the result per model (``ctx.target_runtime_checks``); refuse, before
    anything is packaged, a model that fails to load or to match."""
    release = ctx.spec.triton_version
    _forget_undeclared(ctx)
    results, pending = _pending_checks(ctx, samples=True)
    errors: list[BuildError] = []
    if pending:
        found, errors = _run_pending(ctx, pending)
        results |= found
    ctx.target_runtime_checks = results
    for n, check in results.items():
        shown = rules.display(n, check, triton_version=release, tool_versions=ctx.tools)
        if shown is not None and shown[0] == "warning":
            ctx.warn(shown[1])
    if len(errors) == 1:
        raise errors[0]
    if errors:
        codes = {e.code for e in errors}
        raise BuildError(
            f"{len(errors)} models do not run in Triton {release}'s own runtimes: "
            + " | ".join(str(e) for e in errors),
            code=codes.pop() if len(codes) == 1 else "ModelsFailed",
        )
    ran = sum(1 for c in results.values() if c.status == rules.PASSED)
    return StepOutput(
        step="target_runtime", status=StepStatus.OK if pending else StepStatus.UP_TO_DATE, done=len(pending),
        up_to_date=ran - len(pending) if ran > len(pending) else 0,
    )  # fmt: skip


def _pending_checks(ctx: BuildContext, *, samples: bool) -> tuple[dict[str, TargetRuntimeCheck], list[str]]:
    """(the records known without probing: skipped, or re-used from the cache; the models to probe).
    ``samples``: whether the samples are written by now (before the export they are not asked)."""
    release = ctx.spec.triton_version
    results: dict[str, TargetRuntimeCheck] = {}
    pending: list[str] = []
    for n in ctx.built:
        runtime = runtime_of(ctx, n)
        if runtime is None:
            continue
        version, confirmed = rules.runtime_version(release, runtime)
        skip = _skip_reason(ctx, n, runtime, version, samples=samples)
        cached = None if skip else _cached(ctx, n, runtime, version)
        if skip or cached:
            results[n] = cached or TargetRuntimeCheck(
                runtime=runtime, version=version, confirmed=confirmed, status=rules.SKIPPED, reason=skip
            )
        else:
            pending.append(n)
    return results, pending


@dataclass(kw_only=True, slots=True)
class WarmProbe:
    """A probe started before the export (``--serve``), its runtimes imported while the build exports."""

    proc: subprocess.Popen[str]
    path: Path
    stderr: Path
    lines: queue.Queue[str]
    #: the models it may be handed before the check (pending, and of a runtime its environment holds)
    wanted: frozenset[str] = frozenset()
    #: the folder of its jobs and results (removed with it)
    folder: Path | None = None
    #: the models handed to it, in order: name -> its results file (it answers ``done`` per job, in order)
    submitted: dict[str, Path] = field(default_factory=dict)


def start_probe(ctx: BuildContext) -> StepOutput:
    """Start the probe in the release environment before the export, so importing the release's runtimes
    (seconds: torch) overlaps the export; only when the environment exists (the check creates it) and some
    model will be probed. :func:`check_target_runtimes` hands it the job; :func:`stop_probe` ends it."""
    if not ctx.target_runtime:
        return StepOutput(step="target_runtime_start", status=StepStatus.SKIPPED)
    _, pending = _pending_checks(ctx, samples=False)
    runtimes = sorted({r for n in pending if (r := runtime_of(ctx, n)) in rules.CPU_RUNTIMES})
    if not runtimes:
        return StepOutput(step="target_runtime_start", status=StepStatus.SKIPPED)
    reqs = rules.requirements(ctx.spec.triton_version, runtimes)
    where = rules.root() / rules.environment_name(ctx.spec.triton_version, reqs, environments.python_minor())
    if not environments.complete(where, reqs, environments.python_minor()):
        return StepOutput(step="target_runtime_start", status=StepStatus.SKIPPED)
    fd, err = tempfile.mkstemp(prefix="cdk-triton-probe-", suffix=".log")
    with os.fdopen(fd, "w") as stderr:
        proc = subprocess.Popen(
            [str(where / "bin" / "python"), str(environments.PROBE), "--serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True, env=_probe_environment(),
        )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    out = proc.stdout

    def pump() -> None:  # its stdout, line by line (a queue: reads with a deadline, no buffered-select trap)
        for line in out:
            lines.put(line)
        lines.put("")  # end of file: the process is gone

    threading.Thread(target=pump, daemon=True).start()
    warm = WarmProbe(
        proc=proc, path=where, stderr=Path(err), lines=lines, folder=Path(tempfile.mkdtemp(prefix="cdk-triton-probe-")),
        wanted=frozenset(n for n in pending if runtime_of(ctx, n) in runtimes),
    )  # fmt: skip
    ctx.target_runtime_probe = warm
    ctx.after_export = lambda name: submit(ctx, name)
    # cached artifacts not yet checked in this runtime: handed over now, run once its imports are done
    for n in pending:
        if ctx.resolved[n].record is not None:
            submit(ctx, n)
    return StepOutput(step="target_runtime_start", status=StepStatus.OK)


def submit(ctx: BuildContext, name: str) -> None:
    """Hand model ``name`` to the warm probe as soon as it is exported (its artifact committed, its sample
    known), so it is loaded and run in the release's runtime while the build exports the next model.
    Nothing is handed over for a model the check would not probe, or once the probe is gone."""
    warm = ctx.target_runtime_probe
    if not isinstance(warm, WarmProbe) or warm.folder is None:
        return
    if name not in warm.wanted or name in warm.submitted or warm.proc.poll() is not None:
        return
    sample = ctx.record(name).exported.sample
    if sample.response is None:
        return
    request, response = warm.folder / f"{name}.request.json", warm.folder / f"{name}.response.json"
    # the bytes ``write_samples`` writes after the export
    request.write_text(json_text(sample.request), "utf-8")
    response.write_text(json_text(sample.response), "utf-8")
    job, results = warm.folder / f"{name}.job.json", warm.folder / f"{name}.results.jsonl"
    job.write_text(json.dumps({"items": [_item(ctx, name, request, response)]}), "utf-8")
    results.write_text("", "utf-8")
    try:
        assert warm.proc.stdin is not None
        warm.proc.stdin.write(f"{job} {results}\n")
        warm.proc.stdin.flush()
    except OSError:  # gone: the check runs what it has not answered in a fresh process
        return
    warm.submitted[name] = results


def stop_probe(ctx: BuildContext) -> None:
    """End the warm probe, if one is still running (a build that failed before the check): at once, since
    it may still be working through the models it was handed during the export (their results are moot)."""
    warm = ctx.target_runtime_probe
    ctx.target_runtime_probe = None
    ctx.after_export = None
    if isinstance(warm, WarmProbe):
        if warm.proc.poll() is None:
            warm.proc.kill()
        _end(warm)


def _end(warm: WarmProbe, *, wait: bool = True) -> None:
    """Close the probe's stdin (it exits at EOF); ``wait``: until it has (else it exits on its own while
    the build packages: a torch interpreter's shutdown takes a few hundred ms, off the critical path)."""
    with contextlib.suppress(OSError):
        if warm.proc.stdin is not None:
            warm.proc.stdin.close()
    if wait:
        try:
            warm.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            warm.proc.kill()
            warm.proc.wait()
    warm.stderr.unlink(missing_ok=True)
    if warm.folder is not None:  # its jobs and results (read by now: the caller parses before it ends it)
        shutil.rmtree(warm.folder, ignore_errors=True)


def _collect_warm(
    warm: WarmProbe, items: list[dict[str, object]]
) -> tuple[dict[str, dict[str, object]], dict[str, str]]:
    """Hand the warm probe the ``items`` it was not handed during the export, wait for its answers and read
    them: (name -> result line, the versions its environment imports). A model it died inside fails; the
    models it never began are left out (the caller runs them in a fresh process)."""
    assert warm.folder is not None
    for item in items:
        name = str(item["name"])
        if name in warm.submitted or warm.proc.poll() is not None:
            continue
        job, results = warm.folder / f"{name}.job.json", warm.folder / f"{name}.results.jsonl"
        job.write_text(json.dumps({"items": [item]}), "utf-8")
        results.write_text("", "utf-8")
        try:
            assert warm.proc.stdin is not None
            warm.proc.stdin.write(f"{job} {results}\n")
            warm.proc.stdin.flush()
        except OSError:
            break
        warm.submitted[name] = results
    answered, deadline = 0, time.monotonic() + PROBE_TIMEOUT_S
    try:  # one ``done`` per job, in the order they were handed over
        while answered < len(warm.submitted):
            line = warm.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            if not line:  # it died (a crash inside a model)
                break
            answered += line.strip() == "done"
    except queue.Empty:
        pass
    complete = answered == len(warm.submitted)
    if not complete:
        warm.proc.kill()
        warm.proc.wait()
    tail = " | ".join(warm.stderr.read_text("utf-8", "replace").strip().splitlines()[-3:])
    wanted = {str(i["name"]) for i in items}
    found: dict[str, dict[str, object]] = {}
    versions: dict[str, str] = {}
    for name, results in warm.submitted.items():
        if name not in wanted:
            continue
        seen, ended, begun = _read_results(results)
        versions = versions or seen
        found |= ended
        if begun is not None:  # died inside this model (a crash of the old runtime)
            found[begun] = _died(
                f"the runtime's process died (exit {warm.proc.returncode}) running it: {tail}"
            )
    _end(warm, wait=not complete)
    return found, versions


def _read_results(results: Path) -> tuple[dict[str, str], dict[str, dict[str, object]], str | None]:
    """A results file: (the versions line, name -> result line, the model begun and never ended)."""
    versions: dict[str, str] = {}
    found: dict[str, dict[str, object]] = {}
    begun = None
    for raw in results.read_text("utf-8").splitlines():
        try:
            line = json.loads(raw)
        except ValueError:  # a line cut by the crash
            continue
        event = line.pop("event")
        if event == "versions":
            versions = {str(k): str(v) for k, v in line.items()}
        elif event == "begin":
            begun = line["name"]
        else:
            found[str(line.pop("name"))] = line
            begun = None
    return versions, found, begun


def _probe_environment() -> dict[str, str]:
    return {**os.environ, "PYTHONNOUSERSITE": "1", "PYTHONPATH": ""}


#: the reason recorded for a build with the check turned off
SWITCHED_OFF = "turned off (--no-target-runtime or CDK_TRITON_TARGET_RUNTIME=off)"


def _skip_reason(
    ctx: BuildContext, name: str, runtime: str, version: str | None, *, samples: bool = True
) -> str | None:
    """Why model ``name`` is not checked in this build, or None."""
    if not ctx.target_runtime:
        return SWITCHED_OFF
    if version is None:
        return f"the release table has no {runtime} version for Triton {ctx.spec.triton_version}"
    if runtime not in rules.CPU_RUNTIMES and not _cuda():
        return f"a {runtime} plan runs only on a CUDA GPU: the GPU build job checks it"
    sample = ctx.samples.get(name)
    if samples and (sample is None or sample.response is None):
        return "the model has no expected sample response to compare with"
    return None


def _cuda() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except ImportError:
        return False


def _result_path(ctx: BuildContext, name: str) -> Path:
    return ctx.out / "cache" / "target-runtime" / f"{name}.json"


def _cached(ctx: BuildContext, name: str, runtime: str, version: str | None) -> TargetRuntimeCheck | None:
    """The passed result recorded for this model's cache key and runtime version, unless ``--force``."""
    if ctx.force:
        return None
    try:
        data = json.loads(_result_path(ctx, name).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if data.get("key") != ctx.resolved[name].key or data.get("runtime") != f"{runtime}=={version}":
        return None
    check = data.get("check") or {}
    if check.get("status") != rules.PASSED:
        return None
    return TargetRuntimeCheck(**check)


def _forget_undeclared(ctx: BuildContext) -> None:
    """Drop the recorded results of models the declaration no longer has."""
    folder = ctx.out / "cache" / "target-runtime"
    if not folder.is_dir():
        return
    declared = {m.name for m in ctx.spec.models}
    for f in folder.glob("*.json"):
        if f.stem not in declared:
            f.unlink(missing_ok=True)


def _remember(ctx: BuildContext, name: str, check: TargetRuntimeCheck) -> None:
    path = _result_path(ctx, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "key": ctx.resolved[name].key,
        "runtime": f"{check.runtime}=={check.version}",
        "check": check.to_dict(),
    }
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, sort_keys=True) + "\n", "utf-8")
    os.replace(tmp, path)


def _run_pending(
    ctx: BuildContext, names: list[str]
) -> tuple[dict[str, TargetRuntimeCheck], list[BuildError]]:
    """Create (or find) the environment and probe ``names``; unavailable results when it cannot be created."""
    release = ctx.spec.triton_version
    runtimes = {runtime_of(ctx, n) for n in names}
    facts = {
        n: (runtime_of(ctx, n) or "", *rules.runtime_version(release, runtime_of(ctx, n) or ""))
        for n in names
    }
    reqs = rules.requirements(release, sorted(r for r in runtimes if r))
    where = rules.root() / rules.environment_name(release, reqs, environments.python_minor())
    if not environments.complete(where, reqs, environments.python_minor()):
        ctx.reporter.note(
            f"creating Triton {release}'s runtime environment ({' '.join(reqs)}) at {where}: once per machine, "
            "a few GB from the package index (--no-target-runtime skips the check)"
        )
    wanted = frozenset(r for r in runtimes if r)
    try:  # the probe's first line verifies the environment (one start of its interpreter, not two)
        env = environments.ensure_environment(release, wanted, verify=False)
        found, versions = probe(ctx, env, names)
        if not environments.matches(
            versions, env.requirements
        ):  # a complete marker over a broken environment
            ctx.reporter.warn(
                f"{env.path} imports {versions or 'nothing'}, not {' '.join(reqs)}: rebuilding it"
            )
            env = environments.ensure_environment(release, wanted, rebuild=True)
            found, versions = probe(ctx, env, names)
    except RuntimeUnavailable as exc:
        reason = f"no environment with {' '.join(reqs)} could be created here: {exc}"
        return {
            n: TargetRuntimeCheck(runtime=r, version=v, confirmed=c, status=rules.UNAVAILABLE, reason=reason)
            for n, (r, v, c) in facts.items()
        }, []
    results: dict[str, TargetRuntimeCheck] = {}
    errors: list[BuildError] = []
    for n in names:
        runtime, version, confirmed = facts[n]
        line = found.get(
            n, {"status": "failed", "stage": "run", "error": "the probe wrote no result", "operator": None}
        )
        diff = line.get("max_abs_diff")
        check = TargetRuntimeCheck(
            runtime=runtime, version=version, confirmed=confirmed,
            status=rules.PASSED if line["status"] == "passed" else rules.FAILED,
            max_abs_diff=float(diff) if isinstance(diff, (int, float)) else None,
            reason=None if line["status"] == "passed" else brief(str(line.get("error"))), environment=env.name,
        )  # fmt: skip
        results[n] = check
        if check.status == rules.PASSED:
            _remember(ctx, n, check)
        else:
            errors.append(refusal(ctx, n, check, line, env, log=_log_failure(ctx, n, line)))
    return results, errors


def probe(
    ctx: BuildContext, env: RuntimeEnv, names: list[str]
) -> tuple[dict[str, dict[str, object]], dict[str, str]]:
    """Run the probe in ``env`` over ``names``: (name -> its result line, the versions the environment
    imports). The probe started before the export answers first (most models were handed to it as they
    were exported); what it did not answer runs in a fresh process. A process that dies inside a model (a
    crash of the old runtime) fails that model, and the probe goes on with the rest."""
    items = []
    for n in names:
        sample = ctx.samples[n]
        assert sample.response is not None
        items.append(_item(ctx, n, ctx.out / sample.request, ctx.out / sample.response))
    found: dict[str, dict[str, object]] = {}
    versions: dict[str, str] = {}
    warm = ctx.target_runtime_probe
    ctx.target_runtime_probe = None
    ctx.after_export = None
    if isinstance(warm, WarmProbe) and warm.path == env.path:
        found, versions = _collect_warm(warm, items)
    elif isinstance(warm, WarmProbe):  # started for another environment
        _end(warm)
    items = [i for i in items if i["name"] not in found]
    with tempfile.TemporaryDirectory(prefix="cdk-triton-target-runtime-") as tmp:
        while items:
            job, results = Path(tmp) / "job.json", Path(tmp) / "results.jsonl"
            job.write_text(json.dumps({"items": items}), "utf-8")
            results.write_text("", "utf-8")
            proc = subprocess.run(
                [str(env.python), str(environments.PROBE), str(job), str(results)],
                capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False, env=_probe_environment(),
            )  # fmt: skip
            returncode, tail = proc.returncode, " | ".join(proc.stderr.strip().splitlines()[-3:])
            seen, ended, begun = _read_results(results)
            versions = versions or seen
            found |= ended
            if returncode != 0 and begun is None:  # died outside any model: every model left fails
                for i in items:
                    if i["name"] not in found:
                        found[str(i["name"])] = _died(f"the runtime's process exited {returncode}: {tail}")
            elif begun is not None:  # died inside one model (a crash of the old runtime): the rest go on
                found[begun] = _died(f"the runtime's process died (exit {returncode}) running it: {tail}")
            items = [i for i in items if i["name"] not in found]
    return found, versions


def _item(ctx: BuildContext, name: str, request: Path, response: Path) -> dict[str, object]:
    """The probe's job item for model ``name``: its artifact, runtime, sample files and parity's tolerances."""
    m = ctx.resolved[name].spec
    outputs = ctx.record(name).exported.io_names.get("outputs", {})
    return {
        "name": name,
        "runtime": runtime_of(ctx, name),
        "artifact": str(ctx.cache.entry_dir(name, ctx.resolved[name].key) / "1" / str(m.row.artifact)),
        "request": str(request),
        "response": str(response),
        "tolerances": {outputs.get(t.name, t.name): list(tolerance(m, t.dtype)) for t in m.outputs},
    }


def brief(error: str) -> str:
    """A runtime's error on one line: TorchScript's suggestions and source excerpt left out (the log keeps them)."""
    text = error.split("Here are some suggestions")[0]
    return " ".join(text.split())[:400]


def _died(error: str) -> dict[str, object]:
    return {"status": "failed", "stage": "run", "error": error, "operator": None}


def _log_failure(ctx: BuildContext, name: str, line: dict[str, object]) -> Path:
    """The runtime's full words for a refused model: ``<out>/logs/target-runtime-<model>.log``."""
    path = ctx.out / "logs" / f"target-runtime-{name}.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(line, indent=1, sort_keys=True) + "\n\n" + str(line.get("error", "")) + "\n", "utf-8"
    )
    return path


def refusal(
    ctx: BuildContext,
    name: str,
    check: TargetRuntimeCheck,
    line: dict[str, object],
    env: RuntimeEnv,
    *,
    log: Path | None = None,
) -> BuildError:
    """BuildError naming the model, the operator or exception, the release and the fixes."""
    m = ctx.resolved[name].spec
    release = ctx.spec.triton_version
    lib = f"Triton {release}'s {check.runtime} {check.version}"
    note = "" if check.confirmed else " (release table entry unconfirmed)"
    operator = line.get("operator")
    newer = _newer_releases(release, check.runtime)
    fixes = [
        "declare format: onnx (the build holds its opset and IR version to the release's ONNX Runtime)"
        if check.runtime == "libtorch"
        else "declare format: torchscript, or export with another opset (onnx.opset)",
        f"target a newer triton_version whose {check.runtime} may have it ({newer}; the check tells)"
        if newer
        else "target another triton_version",
        f"rewrite the model without {operator}" if operator else "rewrite the failing part of the model",
    ]
    tail = (
        f"; parity passed with the build's own {check.runtime} "
        f"({ctx.tools.get(rules.RUNTIME_PACKAGES[check.runtime], '?')}), the endpoint runs {check.version}; "
        f"nothing was packaged; fixes: {'; '.join(fixes)} (checked in {env.path}; --no-target-runtime skips the check)"
    )
    logged = str(log) if log else None
    if line.get("stage") == "match":
        return BuildError(
            f"model '{name}' ({m.format}) loads in {lib}{note} but its outputs differ from the expected sample "
            f"response: {line.get('error')}{tail}",
            code="TargetRuntimeMismatch",
            log_path=logged,
        )
    op = f"; operator {operator} is not in {check.runtime} {check.version}" if operator else ""
    return BuildError(
        f"model '{name}' ({m.format}) fails to {line.get('stage', 'load')} in {lib}{note}: {check.reason}{op}{tail}",
        code="TargetRuntimeLoadFailed",
        log_path=logged,
    )


def _newer_releases(release: str, runtime: str) -> str:
    """The releases after ``release`` with a newer ``runtime`` in the table: ``25.04 (libtorch 2.7.0), ...``."""
    out = []
    versions = tables.release_versions()
    mine, _ = rules.runtime_version(release, runtime)
    for v in versions[versions.index(release) + 1 :]:
        value, _ = rules.runtime_version(v, runtime)
        if value and mine and tables.is_newer(value, mine):
            out.append(f"{v}: {runtime} {value}")
    return ", ".join(out[-3:])
