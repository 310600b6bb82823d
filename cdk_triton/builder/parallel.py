"""``--jobs``: export independent models in worker processes, with failures collected, not fatal.

Workers are ``spawn``ed (a fresh interpreter: never a ``fork`` of a process that imported torch), die
with the build (``PR_SET_PDEATHSIG`` on Linux) and hold no lock: the build's process keeps the output
directory's lock, and each worker commits its model to the cache as a one-process build does (temp
directory renamed into place, record written last). Every worker runs with :data:`RECORD_THREADS`
torch / onnxruntime threads for what is recorded (the eager reference, the sample's expected outputs,
parity; see ``reference.torch_runner`` and ``export/onnx.py``), and with ``cores // jobs`` OpenMP/MKL
threads for the rest, so ``jobs x threads`` fits the cores and no recorded byte depends on ``jobs``.

``jobs="auto"`` (the CLI's default): the usable cores (CPU affinity and the cgroup quota), bounded by
the available memory over a worker's peak RSS (the largest measured by an earlier build on this
machine, :func:`peak_rss_path`, else :data:`DEFAULT_WORKER_RSS`) and by the models to export over
:data:`MODELS_PER_WORKER` (:func:`auto_jobs`); then :func:`choose_jobs` starts workers only when the
queue repays their start: the models' export seconds (per format, as measured by earlier builds on
this machine, :func:`timings_path`, else :func:`default_export_seconds`) over ``k`` workers plus a
worker's start (:data:`DEFAULT_WORKER_START_SECONDS` until measured) must be at most
:data:`WORKERS_MUST_SAVE` of the export seconds in this process, else the build exports in its own
process (a fleet of tiny models: a worker's start costs more than it saves).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import time
import traceback
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdk_triton.config import formats
from cdk_triton.errors import BuildError, TritonValidationError

#: torch intra/inter-op and onnxruntime threads of everything a build records (every jobs value)
RECORD_THREADS = 1
#: a worker's peak RSS before one was measured here: torch, onnx and onnxruntime imported, a small
#: model exported (bench/build_rss.py measures it)
DEFAULT_WORKER_RSS = 1 << 30
#: the OpenMP / MKL thread variables a worker sets before it imports torch
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
AUTO = "auto"
#: ``auto`` starts a worker per this many models to export: a worker's start (an interpreter, torch
#: imported, the exporter's first run) costs seconds, repaid only over several models
MODELS_PER_WORKER = 4
#: a model's export seconds by format before one was measured on this machine: each format row's
#: ``export_seconds`` (measured here, 2 shared cores: a tiny torch model to TorchScript ~0.02 s, to ONNX
#: with the dynamo exporter ~0.75 s, a python model or an ensemble ~0.01 s; TensorRT stays in the
#: build's process anyway). Computed when asked: a format added later has its row's.
DEFAULT_FORMAT_SECONDS = 0.5


def default_export_seconds(fmt: str) -> float:
    """A model's export seconds before one was measured: its format row's ``export_seconds``
    (:data:`DEFAULT_FORMAT_SECONDS` for a format the table does not list)."""
    row = formats.lookup(fmt)
    return row.export_seconds if row is not None else DEFAULT_FORMAT_SECONDS


#: a worker's start before one was measured here: spawn, an interpreter, torch imported, the
#: exporter's first run (3-4 s measured on 2 shared cores; bench/build_fleet.py)
DEFAULT_WORKER_START_SECONDS = 3.0
#: a worker's start over the first-export excess measured in the build's own process (spawn, an
#: interpreter and the task's IPC on top of torch's import)
SPAWN_FACTOR = 1.5
#: ``auto`` starts ``k`` workers only when ``start + export/k <= WORKERS_MUST_SAVE x export``: the
#: margin covers cores that other processes hold (the estimate assumes idle cores) and the IPC per model
WORKERS_MUST_SAVE = 0.75


def cpu_count() -> int:
    """The cores this process may use: its CPU affinity, bounded by a cgroup v2 ``cpu.max`` quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, math.floor(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cores)


def available_memory() -> int | None:
    """``MemAvailable`` of ``/proc/meminfo`` in bytes (None where there is none)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def peak_rss_path() -> Path:
    """Where builds on this machine keep the largest worker peak RSS they measured (outside ``out/``,
    whose bytes must not depend on ``jobs``): ``$XDG_CACHE_HOME/cdk-triton/worker-peak-rss.json``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cdk-triton" / "worker-peak-rss.json"


def measured_peak_rss() -> int | None:
    try:
        value = json.loads(peak_rss_path().read_text())["peak_rss_bytes"]
        return int(value) if int(value) > 0 else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def record_peak_rss(peak: int) -> None:
    """Keep the largest peak seen (a temp file renamed into place; a failure to write is ignored)."""
    if peak <= (measured_peak_rss() or 0):
        return
    path = peak_rss_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"peak_rss_bytes": peak}) + "\n")
        os.replace(tmp, path)
    except OSError:
        pass


def auto_jobs(
    todo: int, *, cores: int | None = None, memory: int | None = None, peak: int | None = None
) -> int:
    """The default number of workers for ``todo`` models to export (see the module docstring)."""
    cores = cores if cores is not None else cpu_count()
    memory = memory if memory is not None else available_memory()
    peak = peak or measured_peak_rss() or DEFAULT_WORKER_RSS
    by_memory = max(1, memory // peak) if memory is not None else cores
    return max(1, min(cores, by_memory, todo // MODELS_PER_WORKER))


#: how long ``idle_cores`` watches the machine's CPU time (``/proc/stat``) before ``auto`` starts workers
IDLE_SAMPLE_SECONDS = 0.25


def idle_cores(sample: float = IDLE_SAMPLE_SECONDS) -> float | None:
    """The cores other processes leave idle now: the idle share of the machine's CPU time over
    ``sample`` seconds (``/proc/stat``) times its cores, plus the one this build runs on (None where
    there is no ``/proc/stat``). Workers on cores that other processes hold only add their start."""

    def read() -> tuple[int, int]:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
        values = [int(v) for v in fields[:8]]
        return values[3] + values[4], sum(values)

    try:
        idle0, total0 = read()
        time.sleep(sample)
        idle1, total1 = read()
    except (OSError, ValueError, IndexError):
        return None
    if total1 <= total0:
        return None
    return (idle1 - idle0) / (total1 - total0) * (os.cpu_count() or 1) + 1


def timings_path() -> Path:
    """Where builds on this machine keep what exporting cost (outside ``out/``, whose bytes must not
    depend on timing): ``$XDG_CACHE_HOME/cdk-triton/export-timings.json``."""
    return peak_rss_path().with_name("export-timings.json")


@dataclass(frozen=True, kw_only=True, slots=True)
class Timings:
    """Measured costs: a model's export seconds by format, a worker's start seconds (None: unmeasured)."""

    formats: dict[str, float] = field(default_factory=dict)
    worker_start: float | None = None
    #: what the first export in the build's own process cost beyond a typical one (torch imported, the
    #: exporter's first run): a worker pays it too, plus its spawn; measured under the same load as
    #: ``formats`` when no worker was measured yet
    process_start: float | None = None

    def export_seconds(self, fmt: str) -> float:
        return self.formats.get(fmt, default_export_seconds(fmt))

    @property
    def start_seconds(self) -> float:
        if self.worker_start is not None:
            return self.worker_start
        if self.process_start is not None:
            return max(DEFAULT_WORKER_START_SECONDS, SPAWN_FACTOR * self.process_start)
        return DEFAULT_WORKER_START_SECONDS


def measured_timings() -> Timings:
    """The costs earlier builds measured here (the defaults where none did, or the file is unreadable)."""
    try:
        data = json.loads(timings_path().read_text())
        formats = {str(k): float(v) for k, v in data.get("formats", {}).items() if float(v) >= 0}
        start, first = data.get("worker_start_seconds"), data.get("process_start_seconds")
        return Timings(
            formats=formats,
            worker_start=float(start) if start is not None else None,
            process_start=float(first) if first is not None else None,
        )
    except (OSError, ValueError, TypeError, AttributeError):
        return Timings()


def record_timings(
    seconds: dict[str, list[float]], worker_start: list[float], process_start: float | None = None
) -> None:
    """Keep this build's medians (a model's export by format, a worker's start) and its first-export
    excess in this process over the earlier ones (a temp file renamed into place; a failure to write is
    ignored)."""
    if not seconds and not worker_start:
        return
    old = measured_timings()
    formats = dict(old.formats)
    formats.update({f: _median(v) for f, v in seconds.items() if v})
    data = {
        "formats": formats,
        "worker_start_seconds": _median(worker_start) if worker_start else old.worker_start,
        "process_start_seconds": process_start if process_start is not None else old.process_start,
    }
    path = timings_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, sort_keys=True) + "\n")
        os.replace(tmp, path)
    except OSError:
        pass


def _median(values: list[float]) -> float:
    v = sorted(values)
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def choose_jobs(
    formats: list[str],
    *,
    cores: int | None = None,
    memory: int | None = None,
    peak: int | None = None,
    timings: Timings | None = None,
    idle: float | None = None,
) -> int:
    """``--jobs auto`` for a queue of models of ``formats`` (one entry per model to export): the
    :func:`auto_jobs` bound, then the ``k`` of least estimated time, kept only when it saves at least
    ``1 - WORKERS_MUST_SAVE`` of exporting in this process (else 1: no worker is started); ``k`` at most
    the cores other processes leave idle (``idle``, else :func:`idle_cores` when workers would pay)."""
    bound = auto_jobs(len(formats), cores=cores, memory=memory, peak=peak)
    if bound < 2:
        return 1
    t = timings if timings is not None else measured_timings()
    serial = sum(t.export_seconds(f) for f in formats)
    if t.start_seconds + serial / bound > WORKERS_MUST_SAVE * serial:
        return 1  # not even every core repays a worker's start: no need to look at the machine
    free = idle if idle is not None else (idle_cores() if cores is None else None)
    if free is not None:
        bound = max(1, min(bound, int(free + 0.25)))  # a core three quarters free counts
    if bound < 2:
        return 1
    best, best_time = 1, serial
    for k in range(2, bound + 1):
        parallel_time = t.start_seconds + serial / k
        if parallel_time < best_time:
            best, best_time = k, parallel_time
    return best if best_time <= WORKERS_MUST_SAVE * serial else 1


def parse_jobs(value: int | str | None) -> int | None:
    """``--jobs``: a positive integer, or ``auto`` / None (None: decide per build with :func:`auto_jobs`)."""
    if value is None or value == AUTO:
        return None
    try:
        n = int(value)
    except (TypeError, ValueError):
        n = 0
    if n < 1:
        raise TritonValidationError(
            "InvalidJobs",
            prop="--jobs",
            value=value,
            problem="is not a positive number of worker processes",
            allowed="auto or an integer >= 1",
            fix="pass --jobs auto (the cores, bounded by memory) or e.g. --jobs 4",
        )
    return n


def threads_per_worker(jobs: int, cores: int | None = None) -> int:
    """OpenMP / MKL threads a worker may use so that ``jobs x threads`` fits the cores."""
    return max(1, (cores or cpu_count()) // max(1, jobs))


@dataclass(frozen=True, kw_only=True, slots=True)
class Failure:
    """A model that failed: its error (kept whole), or the step it waited for that failed."""

    model: str
    error: BuildError


def failures_error(failures: list[Failure]) -> BuildError:
    """One failure: its own error (code and log kept); several: one ``ModelsFailed`` listing each."""
    if len(failures) == 1:
        return failures[0].error
    lines = "\n".join(f"  - {f.model}: {f.error}" for f in failures)
    return BuildError(
        f"{len(failures)} models failed (the other models were built and cached):\n{lines}\n"
        "fix them and build again; the models built are reused from the cache",
        code="ModelsFailed",
    )


def _error_from(payload: dict[str, Any]) -> BuildError:
    code, text = payload["code"], payload["message"]
    message = text.rsplit(f" [{code}]", 1)[0] if f" [{code}]" in text else text
    return BuildError(message, code=code, log_path=payload.get("log_path"))


def _died(name: str, exc: BaseException) -> dict[str, Any]:
    err = BuildError(
        f"model '{name}': its worker process died ({type(exc).__name__}); the kernel may have killed it for "
        "memory: build with a smaller --jobs",
        code="WorkerDied",
    )
    return {"name": name, "code": err.code, "message": str(err)}


# -- in the worker ----------------------------------------------------------------------------------


def worker_result(name: str, run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """In a worker: ``run()`` (a model's record and warnings) or its error as data, with its time and the
    worker's peak RSS so far (errors cross the process boundary as data, not pickled exceptions)."""
    import resource

    t0 = time.perf_counter()
    try:
        out = {"name": name, **run()}
    except BuildError as exc:
        out = {"name": name, "code": exc.code, "message": str(exc), "log_path": exc.log_path}
    except Exception as exc:  # a bug or a tool's crash: the model fails, the build goes on
        text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        out = {"name": name, "code": "ExportFailed", "message": f"model '{name}': {text} [ExportFailed]"}
    out["seconds"] = time.perf_counter() - t0
    out["pid"] = os.getpid()
    out["peak_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return out


def _die_with_parent(parent: int) -> None:
    """Ask Linux to SIGKILL this worker when the build's process dies (a killed build leaves no worker
    writing into its output directory)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the build died before the call above
        os._exit(1)


def init_worker(parent: int, threads: int) -> None:
    """Each worker's start: die with the build, thread counts set before torch is imported."""
    _die_with_parent(parent)
    for var in THREAD_VARIABLES:
        os.environ[var] = str(threads)


# -- in the build's process -------------------------------------------------------------------------


@dataclass(kw_only=True, slots=True)
class Done:
    """What one model's export gave back: its record (as JSON) or its error."""

    name: str
    record: dict[str, Any] | None
    error: BuildError | None
    warnings: list[str]
    seconds: float
    #: seconds since the workers were started when the first model of its worker finished (None for
    #: the later models of a worker): its start plus that model's export
    first_of_worker: float | None = None


def run_workers(
    work: Callable[[dict[str, Any]], dict[str, Any]],
    tasks: Callable[[str], dict[str, Any]],
    names: list[str],
    deps: dict[str, list[str]],
    *,
    jobs: int,
    on_start: Callable[[str], None],
    on_done: Callable[[Done], None],
) -> None:
    """Run ``work(tasks(name))`` for each of ``names`` on ``jobs`` spawned workers (``work``: a module-level
    function, pickled by name), each model once every model of ``deps[name]`` it waits for is done (its
    task is built then); a failed model fails those waiting for it. ``work`` returns ``{"record": ...}``
    or ``{"code", "message"}`` plus ``seconds`` and ``peak_rss`` (see :func:`worker_result`).
    ``on_done`` is called in the build's process as each model finishes, in completion order."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=init_worker,
        initargs=(os.getpid(), threads_per_worker(jobs)),
    )
    run = _Run(pool=pool, work=work, tasks=tasks, names=names, deps=deps, on_start=on_start, on_done=on_done)
    try:
        while run.waiting or run.running:
            run.submit_ready()
            run.fail_blocked()
            if run.running:
                run.collect()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        if run.peak:
            record_peak_rss(run.peak)


@dataclass(kw_only=True)
class _Run:
    """The state of one :func:`run_workers`: what waits for what, what runs, what failed."""

    pool: Any
    work: Callable[[dict[str, Any]], dict[str, Any]]
    tasks: Callable[[str], dict[str, Any]]
    names: list[str]
    deps: dict[str, list[str]]
    on_start: Callable[[str], None]
    on_done: Callable[[Done], None]
    waiting: dict[str, list[str]] = field(default_factory=dict)
    running: dict[Any, str] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)
    peak: int = 0
    workers: set[int] = field(default_factory=set)  # the pids that finished a model
    started: float = field(default_factory=time.perf_counter)

    def __post_init__(self) -> None:
        inside = set(self.names)
        self.waiting = {n: [d for d in self.deps.get(n, []) if d in inside] for n in self.names}

    def submit_ready(self) -> None:
        for n in [n for n, ds in self.waiting.items() if not ds]:
            del self.waiting[n]
            self.on_start(n)
            try:
                with _main_hidden():
                    self.running[self.pool.submit(self.work, self.tasks(n))] = n
            except RuntimeError as exc:  # BrokenProcessPool: a worker died earlier
                self.finished(n, _died(n, exc))

    def fail_blocked(self) -> None:
        for n in [n for n, ds in self.waiting.items() if any(d in self.failed for d in ds)]:
            del self.waiting[n]
            bad = [d for d in self.deps[n] if d in self.failed]
            text = f"model '{n}' was not built: {', '.join(bad)} failed [ModelsFailed]"
            self.finished(n, {"name": n, "code": "ModelsFailed", "message": text})

    def collect(self) -> None:
        from concurrent.futures import FIRST_COMPLETED, wait

        done, _ = wait(list(self.running), return_when=FIRST_COMPLETED)
        order = {n: i for i, n in enumerate(self.names)}
        for fut in sorted(done, key=lambda f: order[self.running[f]]):
            n = self.running.pop(fut)
            try:
                payload = fut.result()
            except Exception as exc:  # BrokenProcessPool: the worker was killed (out of memory?)
                payload = _died(n, exc)
            self.peak = max(self.peak, int(payload.get("peak_rss", 0)))
            pid = payload.get("pid")
            if pid is not None and pid not in self.workers:
                self.workers.add(pid)
                payload = {**payload, "first_of_worker": time.perf_counter() - self.started}
            self.finished(n, payload)

    def finished(self, n: str, payload: dict[str, Any]) -> None:
        err = _error_from(payload) if "record" not in payload else None
        if err is not None:
            self.failed.add(n)
        self.on_done(
            Done(
                name=n,
                record=payload.get("record"),
                error=err,
                warnings=list(payload.get("warnings", [])),
                seconds=float(payload.get("seconds", 0.0)),
                first_of_worker=payload.get("first_of_worker"),
            )
        )
        for ds in self.waiting.values():
            if n in ds and err is None:
                ds.remove(n)


@contextlib.contextmanager
def _main_hidden() -> Iterator[None]:
    """Start workers without the caller's ``__main__``: a spawned child imports it again otherwise,
    and a script calling ``run_build(jobs=2)`` without an ``if __name__ == "__main__":`` guard would
    run again in every worker. Workers need only this module."""
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main
