"""The detached ``serve``: what to serve, one state file per endpoint, start, status and stop.

:func:`start` runs ``python -m cdk_triton.cli serve`` in a session of its own with
``CDK_TRITON_SERVE_STATE=1``; that process serves in the foreground (:mod:`cdk_triton.local.serving`)
and publishes one :class:`ServeState` per endpoint once it is ready
(``<state dir>/<endpoint>.json``: pid, front URL, manifest, log; 0600 in a 0700 directory).
:func:`status` and :func:`read_state` read them (the state of a process that is gone is removed),
:func:`stop` ends the serve processes and removes them. ``invoke``, ``bench``, ``stop``, ``tune``,
``demo`` and the tests share this module; it imports the standard library only (no numpy, no aiohttp).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cdk_triton.config.manifest import Manifest, read_manifest
from cdk_triton.config.server_options import ServerOptions
from cdk_triton.errors import TritonValidationError
from cdk_triton.local.errors import LocalServerError
from cdk_triton.local.server import private_file, write_private

DEFAULT_MANIFEST = "build/out/manifest.json"
DEFAULT_STATE_DIR = ".cdk-triton/local"
#: set in the environment of the serve process :func:`start` runs: it then publishes its state files
CHILD_MARK = "CDK_TRITON_SERVE_STATE"
#: seconds a detached serve may take beyond ``start_timeout`` per endpoint (interpreter start, imports)
READY_SLACK_S = 10.0
#: seconds :func:`stop` waits for a serve process to end after SIGTERM before it kills its groups
STOP_TIMEOUT_S = 30.0


@dataclass(frozen=True, kw_only=True, slots=True)
class ServeRequest:
    """What ``serve`` serves and how; the same request runs in the foreground or detached.

    Attributes:
        manifest: the build manifest. Default: ``build/out/manifest.json``.
        endpoints: manifest endpoint keys. Default: every endpoint of the manifest.
        port: port of the 127.0.0.1 front. Default: a free port.
        instance_count: CPU instances per model. Default: one per core (``CpuOverlay``).
        memory_budget_mb: MME: unload least-recently-used models above this resident memory.
            Default: no budget.
        start_timeout: seconds each server may take to become ready. Default: 120.
        env: ``NAME=VALUE`` container variables, read as the manifest's Triton release reads them.
            Default: the container's defaults.
        async_location: where asynchronous endpoints' ``async/<endpoint>/{output,failure}/`` folders
            are: a folder, or ``s3://bucket/prefix/`` (boto3; moto in tests). Default: the manifest's
            folder.
    """

    manifest: str = DEFAULT_MANIFEST
    endpoints: tuple[str, ...] = ()
    port: int | None = None
    instance_count: int | None = None
    memory_budget_mb: int | None = None
    start_timeout: float = 120.0
    env: tuple[str, ...] = ()
    async_location: str | None = None

    def read(self) -> tuple[Manifest, tuple[str, ...]]:
        """The manifest and the endpoint names, every name checked before anything starts."""
        manifest = read_manifest(self.manifest)
        names = self.endpoints or tuple(sorted(manifest.endpoints))
        for name in names:
            manifest.endpoint(name)  # UnknownManifestEndpoint
        return manifest, names

    def environment(self) -> dict[str, str]:
        """The ``env`` items as a container environment (``InvalidEnvironmentValue``)."""
        return container_environment(self.env)

    def server_options(self) -> ServerOptions:
        """The container settings ``env`` gives, checked (``InvalidEnvironmentValue`` and the settings' codes)."""
        return ServerOptions.from_environment(self.environment(), path="--env")

    def argv(self, names: Sequence[str], state_dir: Path) -> list[str]:
        """The command line of the detached serve process."""
        argv = [sys.executable, "-m", "cdk_triton.cli", "serve", "--manifest", self.manifest]
        argv += ["--start-timeout", str(self.start_timeout), "--state-dir", str(state_dir)]
        for name in names:
            argv += ["--endpoint", name]
        if self.port:
            argv += ["--port", str(self.port)]
        if self.memory_budget_mb:
            argv += ["--memory-budget-mb", str(self.memory_budget_mb)]
        if self.instance_count:
            argv += ["--instance-count", str(self.instance_count)]
        for pair in self.env:
            argv += ["--env", pair]
        if self.async_location:
            argv += ["--async-location", self.async_location]
        return argv


def container_environment(pairs: Sequence[str]) -> dict[str, str]:
    """``--env NAME=VALUE`` items as a container environment."""
    env: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise TritonValidationError(
                "InvalidEnvironmentValue",
                prop="--env",
                value=pair,
                problem="is not NAME=VALUE",
                allowed="NAME=VALUE, e.g. SAGEMAKER_TRITON_LOG_VERBOSE=0",
                fix="write the variable as NAME=VALUE",
            )
        env[name] = value
    return env


@dataclass(frozen=True, kw_only=True, slots=True)
class ServeState:
    """One served endpoint, as its state file records it."""

    pid: int
    url: str
    endpoint: str
    manifest: str
    log: str | None = None
    mode: str = ""
    server_pgid: int | None = None
    started: float = 0.0

    @property
    def invocations_url(self) -> str:
        return f"{self.url}/endpoints/{self.endpoint}/invocations"

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> ServeState:
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in doc.items() if k in names})


@dataclass(frozen=True, kw_only=True, slots=True)
class Started:
    """What :func:`start` started: one state per endpoint, and the serve process's log."""

    states: tuple[ServeState, ...]
    log: Path


@dataclass(frozen=True, kw_only=True, slots=True)
class Stopped:
    """What :func:`stop` did: the endpoints it stopped and those that had no state file."""

    stopped: tuple[str, ...]
    not_running: tuple[str, ...]


def state_path(state_dir: str | os.PathLike[str], endpoint: str) -> Path:
    return Path(state_dir) / f"{endpoint}.json"


def private_dir(path: Path) -> None:
    """The state directory: created for its owner only (0700); state files and logs in it are 0600."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        path.chmod(0o700)


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError):
        if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
            return False
    return True


def _not_running(endpoint: str, problem: str, allowed: str, fix: str) -> TritonValidationError:
    return TritonValidationError(
        "LocalEndpointNotRunning", prop="endpoint", value=endpoint, problem=problem, allowed=allowed, fix=fix
    )


def read_state(state_dir: str | os.PathLike[str], endpoint: str) -> ServeState:
    """The state of a running detached endpoint (``LocalEndpointNotRunning``; a gone one's file is removed)."""
    path = state_path(state_dir, endpoint)
    start = f"cdk-triton serve --endpoint {endpoint} --detach"
    if not path.is_file():
        raise _not_running(
            endpoint,
            f"has no state file {path}",
            "an endpoint started with `cdk-triton serve --detach`",
            f"run `{start}` first",
        )
    doc = json.loads(path.read_text())
    if not alive(int(doc["pid"])):
        path.unlink(missing_ok=True)
        raise _not_running(
            endpoint,
            f"was started by process {doc['pid']}, which is gone",
            "a running endpoint",
            f"start it again with `{start}` (log: {doc.get('log')})",
        )
    return ServeState.from_dict(doc)


def status(state_dir: str | os.PathLike[str], endpoints: Sequence[str] = ()) -> tuple[ServeState, ...]:
    """The running detached endpoints among ``endpoints`` (default: every state file), by name."""
    names = endpoints or sorted(p.stem for p in Path(state_dir).glob("*.json"))
    running = []
    for name in names:
        with contextlib.suppress(TritonValidationError):
            running.append(read_state(state_dir, name))
    return tuple(running)


def publish(state_dir: Path, state: ServeState) -> None:
    """Write an endpoint's state file (0600, atomically) once it serves."""
    path = state_path(state_dir, state.endpoint)
    private_dir(path.parent)
    tmp = path.with_suffix(".tmp")
    write_private(tmp, state.to_json())
    tmp.rename(path)


def withdraw(state_dir: Path, endpoint: str) -> None:
    """Remove an endpoint's state file (its serve ends)."""
    state_path(state_dir, endpoint).unlink(missing_ok=True)


def child_state_dir(state_dir: str | os.PathLike[str]) -> Path | None:
    """Where this process publishes its state files: ``state_dir`` in a serve that :func:`start` runs."""
    return Path(state_dir) if os.environ.get(CHILD_MARK) else None


def start(request: ServeRequest, *, state_dir: str | os.PathLike[str] = DEFAULT_STATE_DIR) -> Started:
    """Serve ``request`` in a background process; return once every endpoint serves.

    Raises ``LocalEndpointAlreadyServed`` (an endpoint runs already), the request's own errors
    before anything starts, ``DetachedServeFailed`` / ``DetachedServeTimeout`` naming the log.
    """
    _, names = request.read()
    request.server_options()  # bad --env items before anything starts
    state_dir = Path(state_dir)
    private_dir(state_dir)
    running = status(state_dir, names)
    if running:
        state = running[0]
        raise TritonValidationError(
            "LocalEndpointAlreadyServed",
            prop="endpoint",
            value=state.endpoint,
            problem=f"is already served at {state.url} (pid {state.pid})",
            allowed="one detached serve per endpoint",
            fix=f"invoke it, or stop it first with `cdk-triton stop --endpoint {state.endpoint}`",
        )
    log_path = state_dir / ("serve-" + "-".join(names) + ".log")
    env = dict(os.environ, **{CHILD_MARK: "1"}, PYTHONDONTWRITEBYTECODE="1")
    with os.fdopen(private_file(log_path), "ab") as log:
        proc = subprocess.Popen(
            request.argv(names, state_dir),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env=env,
        )
    limit = request.start_timeout * len(names) + READY_SLACK_S
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-20:])
            raise LocalServerError(
                f"the detached serve exited {proc.returncode} before its endpoints were ready; "
                f"log {log_path}:\n{tail}\n",
                code="DetachedServeFailed",
            )
        if all(state_path(state_dir, n).exists() for n in names):
            states = (ServeState.from_dict(json.loads(state_path(state_dir, n).read_text())) for n in names)
            return Started(states=tuple(states), log=log_path)
        time.sleep(0.2)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    proc.wait()
    raise LocalServerError(
        f"the detached serve did not become ready within {limit:g} s (its process group was stopped); "
        f"log {log_path}",
        code="DetachedServeTimeout",
    )


def stop(state_dir: str | os.PathLike[str] = DEFAULT_STATE_DIR, endpoints: Sequence[str] = ()) -> Stopped:
    """Stop detached endpoints (default: all) and remove their state files.

    SIGTERM to each serve process group; one still running after ``STOP_TIMEOUT_S`` is killed
    together with its servers' process groups.
    """
    names = endpoints or sorted(p.stem for p in Path(state_dir).glob("*.json"))
    pids: set[int] = set()
    server_groups: set[int] = set()
    stopped, not_running = [], []
    for name in names:
        path = state_path(state_dir, name)
        if not path.exists():
            not_running.append(name)
            continue
        doc = json.loads(path.read_text())
        stopped.append(name)
        pids.add(int(doc["pid"]))
        if doc.get("server_pgid"):
            server_groups.add(int(doc["server_pgid"]))
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while pids and time.monotonic() < deadline:
        pids = {p for p in pids if alive(p)}
        time.sleep(0.1)
    if pids:  # a serve that did not stop in time: kill it and its servers' process groups
        for pgid in pids | server_groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
    for name in stopped:
        withdraw(Path(state_dir), name)
    return Stopped(stopped=tuple(stopped), not_running=tuple(not_running))
