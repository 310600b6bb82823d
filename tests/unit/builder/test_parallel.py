"""``--jobs``: the same bytes whatever N is; failures collected, not fatal; the kill, lock and corrupt-cache
guarantees with worker processes; the auto rule; progress with each model's state and an ETA."""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from cdk_triton.builder import parallel, run_build
from cdk_triton.builder.report import Reporter
from cdk_triton.cli import main
from cdk_triton.errors import BuildError, TritonValidationError
from tests.unit.builder.helpers import ROOT, ensemble, python_model, tiny, write_decl

MIXED_ENDPOINTS = """
  - name: m
    mode: MultiModel
    instance_types: [ml.g5.xlarge]
    models: [t_ts, pre, ens]
  - name: s
    mode: SingleModel
    instance_types: [ml.g5.xlarge]
    models: [t_file]
    packaging: tar.gz
"""

#: a python model (x FP32 [4] -> y FP32 [4]); BEHAVIOUR is replaced per model
PY_MODEL = textwrap.dedent("""
    import os, time
    import numpy as np
    import triton_python_backend_utils as pb_utils

    class TritonPythonModel:
        def execute(self, requests):
            BEHAVIOUR
            return [pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor(
                "y", pb_utils.get_input_tensor_by_name(r, "x").as_numpy() * FACTOR)]) for r in requests]
""")
#: in a slow model: say which process runs it (a file named by its pid), then wait to be killed
SLOW = (
    "flags = os.environ.get('CDK_TRITON_TEST_FLAGS')\n"
    "        if flags:\n"
    "            open(os.path.join(flags, str(os.getpid())), 'w').close()\n"
    "            time.sleep(60)"
)
BROKEN = "raise RuntimeError('weights are missing')"


def py_decl(tmp: Path, models: dict[str, str], extra: str = "") -> Path:
    """python models named by ``models`` (name -> BEHAVIOUR line), all behind one MME (``extra``: more
    model declarations)."""
    body = ""
    for i, (name, behaviour) in enumerate(models.items()):
        d = tmp / name
        d.mkdir(parents=True, exist_ok=True)
        code = PY_MODEL.replace("BEHAVIOUR", behaviour or "pass").replace("FACTOR", str(i + 2))
        (d / "model.py").write_text(code)
        body += f"""
  - name: {name}
    format: python
    source: {{python: {name}}}
    inputs: [{{name: x, dtype: FP32, shape: [4]}}]
    outputs: [{{name: y, dtype: FP32, shape: [4]}}]
    max_batch_size: 4
"""
    eps = f"""
  - name: fleet
    mode: MultiModel
    instance_types: [ml.g5.xlarge]
    models: [{", ".join(models)}]
"""
    return write_decl(tmp, body + extra, endpoints=eps)


def write_tiny_onnx(path: Path) -> None:
    """x FP32 [-1, 4] -> y = tanh(x W + b) FP32 [-1, 3], made with onnx.helper (no torch)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(3).astype(np.float32), "b")
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w", "b"], ["h"]), helper.make_node("Tanh", ["h"], ["y"])],
        "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])],
        [w, b],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.save(model, str(path))


def digests(out: Path) -> dict[str, str]:
    """sha256 of every file under ``out``."""
    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(autouse=True)
def _own_peak_rss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Workers' measured peak RSS goes to a temp cache home, not the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """ONNX (a file), TorchScript (a factory), python and an ensemble, built with --jobs 1 and --jobs 2
    (one worker imports torch; an ONNX factory's export would cost the suite seconds more)."""
    tmp = tmp_path_factory.mktemp("mixed")
    body = (
        tiny("t_file").replace("factory: tiny_models:tiny, seed: 0", "onnx: tiny.onnx")
        + tiny("t_ts", "torchscript")
        + python_model("pre")
        + ensemble("{model: t_file, input_map: {x: x}, output_map: {y: y}}")
    )
    decl = write_decl(tmp / "src", body, endpoints=MIXED_ENDPOINTS)
    write_tiny_onnx(tmp / "src" / "tiny.onnx")
    with pytest.MonkeyPatch.context() as mp:  # the workers' measured peak RSS: not the user's cache
        mp.setenv("XDG_CACHE_HOME", str(tmp / "xdg"))
        one = run_build(decl, out_dir=tmp / "j1", progress=False, jobs=1)
        two = run_build(decl, out_dir=tmp / "j2", progress=False, jobs=2)
    assert (tmp / "xdg" / "cdk-triton" / "worker-peak-rss.json").is_file()
    assert one.exported == two.exported == 4
    return decl, tmp / "j1", tmp / "j2"


def test_every_file_is_the_same_bytes_with_one_or_two_workers(mixed: tuple[Path, Path, Path]) -> None:
    _, one, two = mixed
    a, b = digests(one), digests(two)
    assert len(a) > 20 and any(k.startswith("cache/models/ens-") for k in a)
    assert any(k.startswith("cache/models/t_ts-") and k.endswith(".pt") for k in a)
    assert a == b


def test_a_noop_rebuild_with_workers_starts_none(mixed: tuple[Path, Path, Path]) -> None:
    decl, _, two = mixed
    before = digests(two)
    again = run_build(decl, out_dir=two, progress=False, jobs=2)
    assert again.exported == 0 and digests(two) == before


def test_failing_models_stop_nothing_else_and_are_all_listed(tmp_path: Path) -> None:
    decl = py_decl(tmp_path / "src", {"good": "", "bad_a": BROKEN, "bad_b": BROKEN, "also_good": ""})
    out = tmp_path / "out"
    with pytest.raises(BuildError) as err:
        run_build(decl, out_dir=out, progress=False, jobs=2)
    assert err.value.code == "ModelsFailed"
    text = str(err.value)
    assert "2 models failed" in text and "bad_a" in text and "bad_b" in text
    assert text.count("[PythonModelInvalid]") == 2
    assert not (out / "manifest.json").exists()
    cached = {p.name.rsplit("-", 1)[0] for p in (out / "cache" / "models").glob("*.json")}
    assert cached == {"good", "also_good"}  # built and cached: the next build reuses them
    # the same collection in the build's own process (--jobs 1); one failure keeps its own code
    with pytest.raises(BuildError) as serial:
        run_build(decl, out_dir=tmp_path / "serial", progress=False, jobs=1)
    assert serial.value.code == "ModelsFailed" and "bad_b" in str(serial.value)
    one = py_decl(tmp_path / "one", {"good": "", "bad_a": BROKEN})
    with pytest.raises(BuildError) as single:
        run_build(one, out_dir=tmp_path / "one-out", progress=False, jobs=1)
    assert single.value.code == "PythonModelInvalid"


def test_an_ensemble_waits_for_its_steps_and_fails_with_them(tmp_path: Path) -> None:
    decl = py_decl(
        tmp_path / "src", {"step_ok": "", "step_bad": BROKEN}, extra=ensemble_of("ens", "step_bad")
    )
    with pytest.raises(BuildError) as err:
        run_build(decl, out_dir=tmp_path / "out", progress=False, jobs=2)
    assert "step_bad" in str(err.value) and "model 'ens' was not built: step_bad failed" in str(err.value)


def ensemble_of(name: str, step: str) -> str:
    return f"""
  - name: {name}
    format: ensemble
    inputs: [{{name: x, dtype: FP32, shape: [4]}}]
    outputs: [{{name: y, dtype: FP32, shape: [4]}}]
    max_batch_size: 4
    steps:
      - {{model: {step}, input_map: {{x: x}}, output_map: {{y: y}}}}
"""


DRIVER = textwrap.dedent("""
    import sys
    from cdk_triton.builder import run_build
    run_build(sys.argv[1], out_dir=sys.argv[2], progress=False, jobs=2)
""")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in state


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_killed_build_takes_its_workers_along_and_the_lock_holds_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decl = py_decl(tmp_path / "src", {"slow_a": SLOW, "slow_b": SLOW, "quick": ""})
    out, flags = tmp_path / "out", tmp_path / "flags"
    flags.mkdir()
    env = {**os.environ, "CDK_TRITON_TEST_FLAGS": str(flags), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(decl), str(out)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 120
    while len(list(flags.iterdir())) < 2:
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
        assert time.time() < deadline
        time.sleep(0.05)
    workers = [int(p.name) for p in flags.iterdir()]
    assert proc.pid not in workers and all(_alive(w) for w in workers)
    with pytest.raises(BuildError, match=r"BuildLocked"):  # the build's process holds the lock
        run_build(decl, out_dir=out, progress=False, jobs=2)
    os.kill(proc.pid, signal.SIGKILL)  # the build's process only: its workers must follow
    proc.wait()
    deadline = time.time() + 20
    while any(_alive(w) for w in workers):
        assert time.time() < deadline, "a worker outlived the killed build"
        time.sleep(0.05)
    assert not (out / "manifest.json").exists()
    assert not [p for p in (out / "cache" / "models").glob("slow_*")] if (out / "cache").exists() else True
    monkeypatch.delenv("CDK_TRITON_TEST_FLAGS", raising=False)
    again = run_build(decl, out_dir=out, progress=False, jobs=2)  # the lock is free, leftovers go
    assert again.exported >= 2 and not list(out.rglob(".*.tmp")) and not list((out / ".tmp").iterdir())
    clean = tmp_path / "clean"
    run_build(decl, out_dir=clean, progress=False, jobs=1)
    assert digests(out) == digests(clean)


def _flip(path: Path) -> None:
    st = path.stat()
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_corrupt_cache_entries_are_rebuilt_by_the_workers(tmp_path: Path) -> None:
    decl = py_decl(tmp_path / "src", {"a": "", "b": "", "c": ""})
    out = tmp_path / "out"
    run_build(decl, out_dir=out, progress=False, jobs=2)
    before = digests(out)
    for name in ("a", "c"):
        (entry,) = (out / "cache" / "models").glob(f"{name}-*[!n]")
        _flip(entry / "1" / "model.py")
    again = run_build(decl, out_dir=out, progress=False, jobs=2, verify=True)
    assert again.exported == 2
    assert sorted(w.split("'")[1] for w in again.warnings if "is corrupt" in w) == ["a", "c"]
    assert digests(out) == before


def test_auto_jobs_is_the_cores_bounded_by_memory_and_the_work() -> None:
    gib = 1 << 30
    assert parallel.auto_jobs(100, cores=8, memory=64 * gib, peak=gib) == 8
    assert parallel.auto_jobs(100, cores=8, memory=3 * gib, peak=gib) == 3  # memory bound
    assert parallel.auto_jobs(8, cores=8, memory=64 * gib, peak=gib) == 2  # a worker per 4 models
    assert parallel.auto_jobs(7, cores=8, memory=64 * gib, peak=gib) == 1  # too few: this process
    assert parallel.auto_jobs(100, cores=8, memory=gib // 2, peak=gib) == 1
    assert parallel.threads_per_worker(2, cores=8) == 4 and parallel.threads_per_worker(16, cores=8) == 1


def test_workers_record_their_measured_peak_rss() -> None:
    parallel.record_peak_rss(123 << 20)
    assert parallel.measured_peak_rss() == 123 << 20
    parallel.record_peak_rss(100 << 20)  # the largest seen is kept
    assert parallel.measured_peak_rss() == 123 << 20
    assert parallel.auto_jobs(100, cores=4, memory=246 << 20) == 2


@pytest.mark.parametrize("value", ["0", "-2", "many", "1.5"])
def test_fails_jobs_that_is_not_a_positive_integer(value: str, tmp_path: Path, capsys: Any) -> None:
    with pytest.raises(TritonValidationError) as err:
        parallel.parse_jobs(value)
    assert err.value.code == "InvalidJobs"
    decl = py_decl(tmp_path, {"a": ""})
    assert main(["build", "--config", str(decl), "--jobs", value, "--no-progress"]) == 2
    assert "[InvalidJobs]" in capsys.readouterr().err
    assert parallel.parse_jobs("auto") is None and parallel.parse_jobs(3) == 3


def test_progress_shows_each_model_state_and_an_eta() -> None:
    from rich.console import Console

    buf = io.StringIO()
    with Reporter(True, console=Console(file=buf, width=200, force_terminal=False)) as r:
        r.start("export", 3, "models")
        for n in ("a", "b", "c"):
            r.model(n, "exporting")
        r.model("b", "exported", seconds=1.25)
        r.model("a", "failed", detail="weights are missing [PythonModelInvalid]")
        r.model("c", "exported", seconds=0.5)
        r.finish("export")
    text = buf.getvalue()
    assert "exported b (1.2 s)" in text and "failed a: weights are missing" in text
    assert "eta" in text and "3/3 models" in text
    assert r.states == {"a": "failed", "b": "exported", "c": "exported"}


def test_a_worker_that_dies_fails_the_build_naming_it(tmp_path: Path) -> None:
    decl = py_decl(tmp_path / "src", {"dies": "os._exit(3)", "fine": ""})
    with pytest.raises(BuildError) as err:
        run_build(decl, out_dir=tmp_path / "out", progress=False, jobs=2)
    assert "[WorkerDied]" in str(err.value) and "model 'dies'" in str(err.value)
    assert not (tmp_path / "out" / "manifest.json").exists()


# -- --jobs auto pays for itself (issue 30) ------------------------------------------------------------


def test_auto_starts_no_worker_when_the_queue_does_not_repay_its_start() -> None:
    gib = 1 << 30
    fresh = parallel.Timings()  # nothing measured yet: the stated defaults per format
    # 120 tiny TorchScript models: 6 s of exports, a worker's start 3 s: two workers would take 6 s
    assert parallel.choose_jobs(["torchscript"] * 120, cores=2, memory=64 * gib, peak=gib, timings=fresh) == 1
    # 96 ONNX models: 77 s of exports; two workers 41 s (<= 0.75 x 77)
    assert parallel.choose_jobs(["onnx"] * 96, cores=2, memory=64 * gib, peak=gib, timings=fresh) == 2
    assert parallel.choose_jobs(["onnx"] * 96, cores=8, memory=64 * gib, peak=gib, timings=fresh) == 8
    # measured costs win over the defaults: slow TorchScript exports repay workers, a slow start does not
    slow_ts = parallel.Timings(formats={"torchscript": 1.0}, worker_start=2.0)
    assert (
        parallel.choose_jobs(["torchscript"] * 120, cores=4, memory=64 * gib, peak=gib, timings=slow_ts) == 4
    )
    slow_start = parallel.Timings(formats={"onnx": 0.8}, worker_start=60.0)
    assert parallel.choose_jobs(["onnx"] * 96, cores=4, memory=64 * gib, peak=gib, timings=slow_start) == 1
    # cores other processes hold are no cores for workers (2 cores, one of them busy: this process only)
    assert (
        parallel.choose_jobs(["onnx"] * 96, cores=2, memory=64 * gib, peak=gib, timings=fresh, idle=1.1) == 1
    )
    assert (
        parallel.choose_jobs(["onnx"] * 96, cores=8, memory=64 * gib, peak=gib, timings=fresh, idle=3.9) == 4
    )
    assert parallel.idle_cores(0.01) is None or 1 <= parallel.idle_cores(0.01) <= (os.cpu_count() or 1) + 1  # type: ignore[operator]
    # the resource bound still holds (memory, a worker per 4 models)
    assert parallel.choose_jobs(["onnx"] * 96, cores=8, memory=3 * gib, peak=gib, timings=fresh) == 3
    assert parallel.choose_jobs(["onnx"] * 7, cores=8, memory=64 * gib, peak=gib, timings=fresh) == 1


def test_builds_record_their_export_timings_and_auto_reads_them(tmp_path: Path) -> None:
    assert parallel.measured_timings() == parallel.Timings()  # this test's own cache home: nothing yet
    parallel.record_timings({"onnx": [0.5, 0.7, 9.0]}, [2.0, 4.0])
    t = parallel.measured_timings()
    assert t.export_seconds("onnx") == 0.7 and t.start_seconds == 3.0  # medians
    assert t.export_seconds("torchscript") == parallel.default_export_seconds("torchscript") == 0.05
    parallel.record_timings({"torchscript": [0.01]}, [])  # another build: one format, no worker
    t = parallel.measured_timings()
    assert t.formats == {"onnx": 0.7, "torchscript": 0.01} and t.start_seconds == 3.0
    # no worker measured yet: a worker's start follows the first-export excess of the build's own process
    # (measured under the same load as the exports)
    assert parallel.Timings(process_start=4.0).start_seconds == 6.0
    assert parallel.Timings(process_start=0.5).start_seconds == parallel.DEFAULT_WORKER_START_SECONDS
    parallel.record_timings({"onnx": [0.7]}, [], 4.0)
    assert parallel.measured_timings().process_start == 4.0
    assert parallel.measured_timings().start_seconds == 3.0  # a measured worker wins
    parallel.timings_path().write_text("not json")
    assert parallel.measured_timings() == parallel.Timings()  # unreadable: the defaults


def test_a_build_measures_its_exports_and_workers(mixed: tuple[Path, Path, Path]) -> None:
    """The ``mixed`` fixture built with --jobs 1 and --jobs 2 in its own cache home: both recorded."""
    decl, _, _ = mixed
    data = json.loads((decl.parent.parent / "xdg" / "cdk-triton" / "export-timings.json").read_text())
    assert {"onnx", "torchscript", "python", "ensemble"} <= set(data["formats"])
    assert data["worker_start_seconds"] is not None and data["worker_start_seconds"] >= 0
    assert data["process_start_seconds"] is None or data["process_start_seconds"] >= 0
