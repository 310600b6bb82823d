"""The release-runtime check: its environment cache (fake installs: fast), what a build records and refuses,
and (marked target_runtime: the real ~3 GB environment of Triton 24.09) the real libtorch 2.5.0 / ONNX Runtime
1.19.2 refusing ``torch.hash_tensor`` and passing the example's models."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import pytest

from cdk_triton.builder import target_runtime as step
from cdk_triton.config import target_runtime as rules
from cdk_triton.config.manifest import manifest_from_dict, read_manifest
from cdk_triton.errors import BuildError, TritonValidationError
from cdk_triton.runtimes import environments as tr
from tests.conftest import RUNTIMES_ROOT
from tests.unit.builder.helpers import EXAMPLE, tiny, write_decl

PY = f"{sys.version_info.major}.{sys.version_info.minor}"
BOTH = frozenset({"libtorch", "onnxruntime"})


def fake_installer(calls: list[str], *, torch: str = "2.5.0", delay: float = 0.0) -> tr.Installer:
    """Writes importable stand-ins of torch / onnxruntime / numpy at the given versions (no download)."""

    def install(python: Path, reqs: tuple[str, ...], log: Path) -> None:
        calls.append(str(python))
        time.sleep(delay)
        site = next((python.parent.parent / "lib").glob("python3.*/site-packages"))
        for module, version in (("torch", torch), ("onnxruntime", "1.19.2"), ("numpy", "1.26.4")):
            (site / module).mkdir(parents=True, exist_ok=True)
            (site / module / "__init__.py").write_text(f"__version__ = {version!r}\n")

    return install


# ---------------------------------------------------------------------------- the rules (config)


def test_requirements_pin_the_release_runtimes() -> None:
    assert rules.requirements("24.09", BOTH) == ("numpy<2", "onnxruntime==1.19.2", "torch==2.5.0")
    assert rules.requirements("24.09", {"onnxruntime"}) == ("numpy<2", "onnxruntime==1.19.2")
    assert rules.requirements("26.05", {"libtorch"}) == ("numpy<2",)  # no libtorch in the table: none pinned
    # a TensorRT plan (the GPU job): the release's TensorRT, and its torch for the CUDA buffers
    assert rules.requirements("24.09", {"tensorrt"}) == ("numpy<2", "tensorrt-cu12==10.4.0", "torch==2.5.0")
    a = rules.environment_name("24.09", rules.requirements("24.09", BOTH), "3.11")
    b = rules.environment_name("24.09", rules.requirements("24.09", BOTH), "3.12")
    assert a.startswith("24.09-") and len(a) == len("24.09-") + 12 and a != b


def test_root_is_the_users_cache_unless_overridden(tmp_path: Path) -> None:
    assert rules.root({"CDK_TRITON_RUNTIMES_DIR": str(tmp_path)}) == tmp_path
    assert rules.root({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "cdk-triton" / "runtimes"
    assert rules.root({}) == Path.home() / ".cache" / "cdk-triton" / "runtimes"
    assert rules.switched_off({"CDK_TRITON_TARGET_RUNTIME": "off"})
    assert not rules.switched_off({})


def test_manifest_records_and_reads_the_check(example_manifest_path: Path) -> None:
    data = json.loads(example_manifest_path.read_text())
    name = next(n for n, m in data["models"].items() if m["format"] == "torchscript")
    assert manifest_from_dict(data).models[name].target_runtime is None  # an older manifest still reads
    data["models"][name]["target_runtime"] = {
        "runtime": "libtorch",
        "version": "2.5.0",
        "confirmed": False,
        "status": "passed",
        "max_abs_diff": 0.0,
        "environment": "24.09-0123456789ab",
    }
    check = manifest_from_dict(data).models[name].target_runtime
    assert check is not None and check.status == "passed" and check.version == "2.5.0"
    assert (
        manifest_from_dict(data).to_dict()["models"][name]["target_runtime"]
        == data["models"][name]["target_runtime"]
    )
    data["models"][name]["target_runtime"]["status"] = "maybe"
    with pytest.raises(TritonValidationError, match="target_runtime.status"):
        manifest_from_dict(data)


# ---------------------------------------------------------------------------- the environment cache


def test_creates_once_then_finds_it(tmp_path: Path) -> None:
    calls: list[str] = []
    first = tr.ensure_environment("24.09", BOTH, root=tmp_path, installer=fake_installer(calls))
    again = tr.ensure_environment("24.09", BOTH, root=tmp_path, installer=fake_installer(calls))
    assert first.created and not again.created and first.path == again.path and len(calls) == 1
    marker = tr.read_marker(first.path)
    assert marker is not None and marker["sha256"] == rules.requirements_hash(first.requirements, PY)
    assert marker["versions"] == {"numpy": "1.26.4", "onnxruntime": "1.19.2", "torch": "2.5.0"}
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize("damage", ["garbage", "other-hash", "missing", "wrong-torch"])
def test_corrupt_environment_is_rebuilt(tmp_path: Path, damage: str) -> None:
    calls: list[str] = []
    env = tr.ensure_environment("24.09", BOTH, root=tmp_path, installer=fake_installer(calls))
    marker = env.path / rules.MARKER
    if damage == "garbage":
        marker.write_text("{not json")
    elif damage == "other-hash":
        marker.write_text(json.dumps({"sha256": "0" * 64}))
    elif damage == "missing":
        marker.unlink()
    else:  # a complete marker, but the runtime imports at another version (a half-updated environment)
        (env.site_packages() / "torch" / "__init__.py").write_text("__version__ = '2.4.1'\n")
    again = tr.ensure_environment("24.09", BOTH, root=tmp_path, installer=fake_installer(calls))
    assert again.created and len(calls) == 2
    assert tr.complete(again.path, again.requirements, PY)
    assert (again.site_packages() / "torch" / "__init__.py").read_text() == "__version__ = '2.5.0'\n"


def test_fails_a_new_environment_that_imports_another_version(tmp_path: Path) -> None:
    calls: list[str] = []
    with pytest.raises(tr.RuntimeUnavailable, match="not numpy<2 onnxruntime==1.19.2 torch==2.5.0"):
        tr.ensure_environment("24.09", BOTH, root=tmp_path, installer=fake_installer(calls, torch="2.13.0"))
    assert [p for p in tmp_path.iterdir() if not p.name.startswith((".locks",)) and p.suffix != ".log"] == []


def test_concurrent_creators_make_one_environment(tmp_path: Path) -> None:
    calls: list[str] = []
    found: list[tr.RuntimeEnv] = []
    install = fake_installer(calls, delay=0.5)

    def create() -> None:
        found.append(tr.ensure_environment("24.09", BOTH, root=tmp_path, installer=install))

    threads = [threading.Thread(target=create) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(found) == 4
    assert len({e.path for e in found}) == 1 and sum(e.created for e in found) == 1
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".log")) == [
        ".locks",
        found[0].name,
    ]


def test_no_package_index_is_unavailable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The real pip against an index nothing answers on: a clear RuntimeUnavailable, nothing left behind."""
    monkeypatch.setenv(tr.INDEX_VARIABLE, "http://127.0.0.1:9/simple")
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_EXTRA_INDEX_URL", "")
    monkeypatch.setenv("PIP_RETRIES", "0")
    with pytest.raises(tr.RuntimeUnavailable, match="pip could not install numpy<2 onnxruntime==1.19.2"):
        tr.ensure_environment("24.09", {"onnxruntime"}, root=tmp_path)
    assert not any(p.name.startswith("24.09-") and p.is_dir() for p in tmp_path.iterdir())


# ---------------------------------------------------------------------------- what a build records


def _decl(tmp: Path, *extra: str) -> Path:
    body = tiny("t_ts", "torchscript") + tiny("t_onnx") + "".join(extra)
    names = ["t_ts", "t_onnx"] + [e.split("name: ")[1].split("\n")[0] for e in extra]
    return write_decl(
        tmp,
        body,
        endpoints=f"""
  - name: m
    mode: MultiModel
    instance_types: [ml.g5.xlarge]
    models: [{", ".join(names)}]
""",
    )


def _checks(out: Path) -> dict[str, dict[str, object]]:
    return {n: m.target_runtime.to_dict() for n, m in read_manifest(out).models.items() if m.target_runtime}


def test_switched_off_records_skipped_and_warns_torchscript(tmp_path: Path) -> None:
    from cdk_triton.builder import run_build

    result = run_build(_decl(tmp_path), out_dir=tmp_path / "out", progress=False, target_runtime=False)
    checks = _checks(tmp_path / "out")
    assert {n: c["status"] for n, c in checks.items()} == {"t_ts": "skipped", "t_onnx": "skipped"}
    assert checks["t_ts"]["runtime"] == "libtorch" and checks["t_ts"]["version"] == "2.5.0"
    assert checks["t_onnx"] == {
        "runtime": "onnxruntime",
        "version": "1.19.2",
        "confirmed": True,
        "status": "skipped",
        "reason": step.SWITCHED_OFF,
    }
    warned = [w for w in result.warnings if "may not load" in w]
    assert len(warned) == 1 and "model 't_ts': TorchScript saved by torch" in warned[0]
    assert "Triton 24.09's libtorch 2.5.0 (release table entry unconfirmed)" in warned[0]
    assert "the release-runtime check was skipped (turned off" in warned[0]


def test_no_package_index_records_unavailable_and_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cdk_triton.builder import run_build

    monkeypatch.setenv(rules.ROOT_VARIABLE, str(tmp_path / "runtimes"))

    def offline(python: Path, reqs: tuple[str, ...], log: Path) -> None:
        raise tr.RuntimeUnavailable("pip could not install torch==2.5.0 (exit 1): No matching distribution")

    monkeypatch.setattr(tr, "pip_install", offline)
    result = run_build(_decl(tmp_path), out_dir=tmp_path / "out", progress=False, target_runtime=True)
    checks = _checks(tmp_path / "out")
    assert {n: c["status"] for n, c in checks.items()} == {"t_ts": "unavailable", "t_onnx": "unavailable"}
    assert "No matching distribution" in str(checks["t_ts"]["reason"])
    warned = [w for w in result.warnings if "release-runtime check was unavailable" in w]
    assert len(warned) == 2 and any("may not load in Triton 24.09's libtorch 2.5.0" in w for w in warned)


#: what the fake environment imports (its requirements: numpy<2)
VERSIONS = {"numpy": "1.26.4"}


def _fake_env(tmp_path: Path) -> tr.RuntimeEnv:
    return tr.RuntimeEnv(
        path=tmp_path / "env", name="24.09-fake", requirements=("numpy<2",), created=False, seconds=0.0
    )


def test_fails_a_model_whose_outputs_differ_and_packages_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cdk_triton.builder import run_build

    monkeypatch.setattr(tr, "ensure_environment", lambda *a, **k: _fake_env(tmp_path))
    lines = {
        "t_ts": {"status": "passed", "max_abs_diff": 0.0},
        "t_onnx": {"status": "failed", "stage": "match", "max_abs_diff": 0.5, "error": "output 'y' differs"},
    }
    monkeypatch.setattr(step, "probe", lambda ctx, env, names: ({n: lines[n] for n in names}, VERSIONS))
    with pytest.raises(BuildError) as err:
        run_build(_decl(tmp_path), out_dir=tmp_path / "out", progress=False, target_runtime=True)
    assert err.value.code == "TargetRuntimeMismatch"
    text = str(err.value)
    assert "model 't_onnx' (onnx) loads in Triton 24.09's onnxruntime 1.19.2" in text
    assert "nothing was packaged" in text and err.value.log_path
    assert not (tmp_path / "out" / "manifest.json").exists() and not (tmp_path / "out" / "mme").exists()


def test_cached_model_reuses_its_recorded_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cdk_triton.builder import run_build

    monkeypatch.setattr(tr, "ensure_environment", lambda *a, **k: _fake_env(tmp_path))
    probed: list[list[str]] = []

    def fake_probe(
        ctx: object, env: object, names: list[str]
    ) -> tuple[dict[str, dict[str, object]], dict[str, str]]:
        probed.append(list(names))
        return {n: {"status": "passed", "max_abs_diff": 1e-7} for n in names}, VERSIONS

    monkeypatch.setattr(step, "probe", fake_probe)
    decl = _decl(tmp_path)
    run_build(decl, out_dir=tmp_path / "out", progress=False, target_runtime=True)
    first = _checks(tmp_path / "out")
    stray = tmp_path / "out" / "cache" / "target-runtime" / "removed_model.json"
    stray.write_text("{}")  # the record of a model the declaration no longer has
    run_build(decl, out_dir=tmp_path / "out", progress=False, target_runtime=True)
    assert probed == [["t_ts", "t_onnx"]]  # the second build probed nothing
    assert not stray.exists() and (stray.parent / "t_ts.json").is_file()
    assert _checks(tmp_path / "out") == first and first["t_ts"]["status"] == "passed"
    run_build(decl, out_dir=tmp_path / "out", progress=False, target_runtime=True, force=True)
    assert len(probed) == 2  # --force checks again


# ---------------------------------------------------------------------------- the real runtimes (24.09)


@pytest.fixture
def real_runtimes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's (CI's) environments of the check, created once and shared by these tests."""
    monkeypatch.setenv(rules.SWITCH_VARIABLE, "on")
    monkeypatch.setenv(rules.ROOT_VARIABLE, str(RUNTIMES_ROOT))


HASHY = tiny("hashy", "torchscript", "hash_tensor") + "    torchscript_mode: script\n"


@pytest.mark.target_runtime
@pytest.mark.usefixtures("real_runtimes")
def test_fails_torch_hash_tensor_in_libtorch_2_5(tmp_path: Path) -> None:
    """Parity passes with the build's torch; libtorch 2.5.0 (Triton 24.09) does not know the operator."""
    from cdk_triton.builder import run_build

    with pytest.raises(BuildError) as err:
        run_build(_decl(tmp_path, HASHY), out_dir=tmp_path / "out", progress=False)
    text = str(err.value)
    assert err.value.code == "TargetRuntimeLoadFailed"
    assert "model 'hashy' (torchscript) fails to load in Triton 24.09's libtorch 2.5.0" in text
    assert "Unknown builtin op: aten::hash_tensor" in text and "operator aten::hash_tensor" in text
    assert "declare format: onnx" in text and "25.09: libtorch 2.9.0" in text
    assert "rewrite the model without aten::hash_tensor" in text
    assert not (tmp_path / "out" / "manifest.json").exists() and not (tmp_path / "out" / "mme").exists()


@pytest.mark.target_runtime
@pytest.mark.usefixtures("real_runtimes")
def test_example_models_pass_in_the_release_runtimes(tmp_path: Path) -> None:
    from cdk_triton.builder import run_build

    result = run_build(EXAMPLE, out_dir=tmp_path / "out", progress=False)
    checks = _checks(tmp_path / "out")
    assert set(checks) == {"resnet", "classifier_ts", "classifier_onnx", "bert"}
    assert {c["status"] for c in checks.values()} == {"passed"}
    assert checks["classifier_ts"]["version"] == "2.5.0" and checks["bert"]["version"] == "1.19.2"
    assert not [w for w in result.warnings if "may not load" in w]


def test_an_environment_the_probe_finds_broken_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A complete marker over an environment that imports something else (the probe's first line says so):
    rebuilt once, then probed again."""
    from cdk_triton.builder import run_build

    asked: list[bool] = []

    def ensure(release: str, runtimes: frozenset[str], **kw: bool) -> tr.RuntimeEnv:
        asked.append(bool(kw.get("rebuild")))
        return _fake_env(tmp_path)

    answers = iter([{}, VERSIONS])  # the first run imports nothing (a broken environment)
    monkeypatch.setattr(tr, "ensure_environment", ensure)
    monkeypatch.setattr(
        step,
        "probe",
        lambda ctx, env, names: (
            {n: {"status": "passed", "max_abs_diff": 0.0} for n in names},
            next(answers),
        ),
    )
    run_build(_decl(tmp_path), out_dir=tmp_path / "out", progress=False, target_runtime=True)
    assert asked == [False, True]
    assert {c["status"] for c in _checks(tmp_path / "out").values()} == {"passed"}


FAKE_PROBE = """
import json, os, sys
VERSIONS = {"numpy": "1.26.4", "onnxruntime": "1.19.2", "torch": "2.5.0"}

def run(job, results, crash):
    items = json.load(open(job))["items"]
    with open(results, "a") as out:
        out.write(json.dumps({"event": "versions", **VERSIONS}) + "\\n"); out.flush()
        for item in items:
            out.write(json.dumps({"name": item["name"], "event": "begin"}) + "\\n"); out.flush()
            if crash and item["name"] == "t_onnx":
                os._exit(3)  # a crash of the old runtime inside one model
            out.write(json.dumps({"name": item["name"], "event": "end", "status": "passed", "max_abs_diff": 0.0}) + "\\n")

if sys.argv[1:] == ["--serve"]:
    print(json.dumps(VERSIONS), flush=True)
    open(os.environ["FAKE_PROBE_LOG"], "a").write("serve\\n")
    for line in sys.stdin:
        run(*line.split(), crash=True)
        print("done", flush=True)
else:
    open(os.environ["FAKE_PROBE_LOG"], "a").write("fresh\\n")
    run(sys.argv[1], sys.argv[2], crash=False)
"""


def test_the_probe_started_before_the_export_takes_the_job_and_a_crash_fails_one_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The warm probe (started before the export) runs the job; it dies inside t_onnx: t_onnx is refused
    naming the crash, and the models after it run in a fresh process."""
    from cdk_triton.builder import run_build

    log = _fake_environment(tmp_path, monkeypatch, FAKE_PROBE)
    extra = tiny("t_last", "torchscript")
    with pytest.raises(BuildError) as err:
        run_build(_decl(tmp_path, extra), out_dir=tmp_path / "out", progress=False, target_runtime=True)
    assert err.value.code == "TargetRuntimeLoadFailed"
    assert "model 't_onnx' (onnx) fails to run" in str(err.value) and "died (exit 3)" in str(err.value)
    assert log.read_text().split() == ["serve", "fresh"]  # the warm one, then a fresh one for t_last


def _fake_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> Path:
    """A complete-looking 24.09 environment whose python is this one, and ``script`` as the probe; the log path."""
    root = tmp_path / "runtimes"
    reqs = rules.requirements("24.09", BOTH)
    env = root / rules.environment_name("24.09", reqs, PY)
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").symlink_to(sys.executable)
    (env / rules.MARKER).write_text(json.dumps({"sha256": rules.requirements_hash(reqs, PY)}))
    (tmp_path / "probe.py").write_text(script)
    monkeypatch.setattr(tr, "PROBE", tmp_path / "probe.py")
    monkeypatch.setenv(rules.ROOT_VARIABLE, str(root))
    monkeypatch.setenv("FAKE_PROBE_LOG", str(tmp_path / "probe.log"))
    return tmp_path / "probe.log"


#: a probe that records, per job, the model and the sample it was handed (then passes it)
RECORDING_PROBE = """
import json, os, sys
VERSIONS = {"numpy": "1.26.4", "onnxruntime": "1.19.2", "torch": "2.5.0"}
print(json.dumps(VERSIONS), flush=True)
for line in sys.stdin:
    job, results = line.split()
    with open(results, "a") as out:
        out.write(json.dumps({"event": "versions", **VERSIONS}) + "\\n")
        for item in json.load(open(job))["items"]:
            seen = {"name": item["name"], "request": open(item["request"]).read(),
                    "response": open(item["response"]).read(), "artifact": os.path.isfile(item["artifact"])}
            open(os.environ["FAKE_PROBE_LOG"], "a").write(json.dumps(seen) + "\\n")
            out.write(json.dumps({"name": item["name"], "event": "begin"}) + "\\n")
            out.write(json.dumps({"name": item["name"], "event": "end", "status": "passed", "max_abs_diff": 0.0}) + "\\n")
    print("done", flush=True)
"""


def test_each_model_is_handed_to_the_probe_as_it_is_exported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The warm probe gets each model when its export is committed (before the export step ends), with the
    artifact in the cache and the very sample bytes the build then writes; the check only collects."""
    from cdk_triton.builder import run_build, steps
    from cdk_triton.builder.export import step as export_step

    log = _fake_environment(tmp_path, monkeypatch, RECORDING_PROBE)
    handed: list[list[str]] = []
    folders: list[Path] = []
    export = export_step.export_models

    def spy(ctx: object) -> object:
        out = export(ctx)  # type: ignore[arg-type]
        handed.append(list(ctx.target_runtime_probe.submitted))  # type: ignore[attr-defined]
        folders.append(ctx.target_runtime_probe.folder)  # type: ignore[attr-defined]
        return out

    monkeypatch.setattr(steps, "STEPS", tuple(spy if s is export else s for s in steps.STEPS))
    run_build(_decl(tmp_path), out_dir=tmp_path / "out", progress=False, target_runtime=True)
    assert handed == [["t_ts", "t_onnx"]]  # every model, in export order, before the export step returned
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert [s["name"] for s in seen] == ["t_ts", "t_onnx"] and all(s["artifact"] for s in seen)
    for s in seen:  # the probe ran on the bytes the build wrote as the model's sample
        name = s["name"]
        assert s["request"] == (tmp_path / "out" / "samples" / f"{name}.request.json").read_text()
        assert s["response"] == (tmp_path / "out" / "samples" / f"{name}.response.json").read_text()
    assert {n: c["status"] for n, c in _checks(tmp_path / "out").items()} == {
        "t_ts": "passed",
        "t_onnx": "passed",
    }
    assert folders and not folders[0].exists(), "the probe's jobs folder is left behind"


#: a probe that records its pid, then takes a minute over every job it is handed
SLOW_PROBE = """
import json, os, sys, time
print(json.dumps({"torch": "2.5.0"}), flush=True)
open(os.environ["FAKE_PROBE_LOG"], "a").write(str(os.getpid()) + "\\n")
for line in sys.stdin:
    time.sleep(60)
    print("done", flush=True)
"""


def test_a_build_that_fails_after_handing_over_models_ends_the_probe_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """t_ts is handed to the probe, then t_bad's export fails: the build fails with the export's error
    without waiting for the probe, which is gone, its jobs folder removed."""
    import os

    from cdk_triton.builder import run_build, steps
    from cdk_triton.builder import target_runtime as check_step

    log = _fake_environment(tmp_path, monkeypatch, SLOW_PROBE)
    folders: list[Path] = []
    start = check_step.start_probe

    def spy(ctx: object) -> object:
        out = start(ctx)  # type: ignore[arg-type]
        folders.append(ctx.target_runtime_probe.folder)  # type: ignore[attr-defined]
        return out

    monkeypatch.setattr(steps, "STEPS", tuple(spy if s is start else s for s in steps.STEPS))
    stop, stopping = steps.stop_probe, []

    def timed_stop(ctx: object) -> None:
        t = time.monotonic()
        stop(ctx)  # type: ignore[arg-type]
        stopping.append(time.monotonic() - t)

    monkeypatch.setattr(steps, "stop_probe", timed_stop)
    with pytest.raises(BuildError):
        run_build(
            _decl(tmp_path, tiny("t_bad", factory="raises")), out_dir=tmp_path / "out", progress=False,
            target_runtime=True,
        )  # fmt: skip
    assert stopping and stopping[0] < 5, f"the failed build waited {stopping} s for the probe's queue"
    pid = int(log.read_text().split()[0])
    with pytest.raises(ProcessLookupError):  # killed and reaped
        os.kill(pid, 0)
    assert folders and folders[0] is not None and not folders[0].exists()


def test_a_tensorrt_plan_without_a_gpu_is_skipped_for_the_gpu_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Prebuilt plans on a CPU machine: recorded skipped (the GPU job's rung), no environment made, no warning."""
    from cdk_triton.builder import run_build
    from tests.unit.builder.helpers import plans_decl

    monkeypatch.setattr(step, "_cuda", lambda: False)
    monkeypatch.setattr(
        tr, "ensure_environment", lambda *a, **k: pytest.fail("no environment for a plan here")
    )
    result = run_build(
        plans_decl(tmp_path, "ml.g5.xlarge"), out_dir=tmp_path / "out", progress=False, target_runtime=True
    )
    check = _checks(tmp_path / "out")["multi_plan"]
    assert check["runtime"] == "tensorrt" and check["version"] == "10.4.0" and check["status"] == "skipped"
    assert "runs only on a CUDA GPU: the GPU build job checks it" in str(check["reason"])
    assert not [w for w in result.warnings if "multi_plan" in w and "release-runtime" in w]


@pytest.mark.parametrize(("flag", "expected"), [([], None), (["--no-target-runtime"], False)])
def test_cli_flag_turns_the_check_off(
    flag: list[str], expected: bool | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`cdk-triton build` leaves the check to its default (on unless CDK_TRITON_TARGET_RUNTIME=off);
    `--no-target-runtime` turns it off for this build (and is not a plain build for the no-op stamp)."""
    from cdk_triton.builder import stamp, steps
    from cdk_triton.cli import main

    seen: dict[str, object] = {}

    class Stop(Exception):
        pass

    def fake(*a: object, **k: object) -> None:
        seen.update(k)
        raise Stop

    monkeypatch.setattr(steps, "run_build", fake)
    monkeypatch.setattr(stamp, "answer", lambda plain: None)
    with pytest.raises(Stop):
        main(["build", "--config", str(_decl(tmp_path)), *flag])
    assert seen["target_runtime"] is expected
    assert stamp.NOT_PLAIN["no_target_runtime"] is False
