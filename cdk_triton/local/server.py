"""A real ``tritonserver`` in SageMaker mode, in a private network (and mount) namespace.

The argv comes from :meth:`ServerOptions.to_argv` (what the container's ``serve`` script runs)
plus local-only flags (backend directory, loopback addresses, shared-memory prefix, no pinned
memory, a short exit timeout). The server runs under ``unshare --net --mount`` where a namespace
can be made: its SageMaker port (always bound to 0.0.0.0) then exists only inside the namespace,
and the host reaches it through a path-based Unix socket. Where no namespace can be made, the
server runs on the host with a loud warning (its port is then reachable from other hosts).
"""

from __future__ import annotations

import contextlib
import functools
import glob
import http.client
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from cdk_triton.config import advisories
from cdk_triton.config.server_options import DEFAULT_PORT, ServerOptions
from cdk_triton.local.errors import LocalServerError
from cdk_triton.local.runtime import (
    check_stub,
    find_triton,
    prepare_backend_directory,
    server_base_environment,
)

log = logging.getLogger("cdk_triton.local")

#: The code of the warning about the bundled server's own NVIDIA advisories.
LOCAL_ADVISORIES_WARNING = "LocalServerAdvisories"

#: Where SageMaker stages MME archives; the server's MME code expects this exact shape.
SAGEMAKER_MODELS_DIR = "/opt/ml/models"
SHM_PREFIX = "cdk_triton_"


def shm_prefix() -> str:
    """A unique prefix for one server's python-backend shared-memory regions (``/dev/shm/<prefix>*``).

    ``CDK_TRITON_SHM_PREFIX`` (letters, digits, ``_``; default ``cdk_triton_``) tags the regions of one
    user or test session, so concurrent sessions can tell theirs apart.
    """
    base = os.environ.get("CDK_TRITON_SHM_PREFIX") or SHM_PREFIX
    if not base.replace("_", "").isalnum():
        raise LocalServerError(
            f"CDK_TRITON_SHM_PREFIX '{base}' may contain only letters, digits and '_'; unset it or use e.g. "
            "'cdk_triton_mine_'",
            code="InvalidShmPrefix",
        )
    return f"{base}{uuid.uuid4().hex[:10]}_"


_ADVISORIES_WARNED: list[bool] = []


def warn_advisories_once(emit: Callable[[str], object] | None = None) -> None:
    """Say once per process what NVIDIA's advisories of the bundled server are and what the local setup
    contains (``config.advisories.local_server_notice``); ``emit`` (default: this module's log warning)."""
    if _ADVISORIES_WARNED:
        return
    _ADVISORIES_WARNED.append(True)
    notice = advisories.local_server_notice()
    if notice is not None:
        text = f"{notice} [{LOCAL_ADVISORIES_WARNING}]"
        if emit is None:
            log.warning("%s", text)
        else:
            emit(text)


@functools.cache
def namespace_prefix() -> tuple[str, ...] | None:
    """The ``unshare`` prefix that gives a private network + mount namespace here, or None."""
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return None
    base = ("unshare", "--net", "--mount", "--propagation", "private")
    candidates: list[tuple[str, ...]] = [base] if os.geteuid() == 0 else []
    candidates.append(
        ("unshare", "--user", "--map-root-user", "--net", "--mount", "--propagation", "private")
    )
    for prefix in candidates:
        try:
            if subprocess.run([*prefix, "true"], capture_output=True, timeout=10).returncode == 0:
                return prefix
        except (OSError, subprocess.TimeoutExpired):
            continue
    return None


def private_file(path: str | os.PathLike[str], *, append: bool = True) -> int:
    """Open ``path`` for writing, readable by its owner only (0600, also when it exists): a descriptor."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC)
    fd = os.open(path, flags, 0o600)
    os.fchmod(fd, 0o600)
    return fd


def write_private(path: str | os.PathLike[str], text: str) -> None:
    """Write a text file readable by its owner only (state files, the server config with its environment)."""
    with os.fdopen(private_file(path, append=False), "w") as f:
        f.write(text)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class UnixHTTPConnection(http.client.HTTPConnection):
    """``http.client`` over a path-based Unix socket (the bridge into the server's namespace)."""

    def __init__(self, path: str, timeout: float = 120.0):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self._path)
        self.sock = sock


class TritonServer:
    """One ``tritonserver`` process group in SageMaker mode.

    Args:
        options: the server options (the same object the constructs render to environment variables).
        model_repository: the SME repository, or an empty directory for MME.
        workdir: where the backend directory, the log and the socket go.
        model_dirs: SME top-level model directories (the serve script's default-model rule).
        mme_staging: MME only: a host directory bound at ``/opt/ml/models`` inside the namespace.
        extra_env: more variables for the server (e.g. the target release's ONNX limits).
        start_timeout: seconds before a start that is not ready is killed. Default: 120.
        namespace: True requires a private namespace, False forbids it, None uses one where possible
            (``CDK_TRITON_REQUIRE_NAMESPACE=1`` in the environment turns None into True).
        auto_complete_config: False passes ``--disable-auto-complete-config`` (no python model served
            defines ``auto_complete_config``: each load then skips a throw-away stub and a 1 s sleep).
    """

    def __init__(
        self,
        *,
        options: ServerOptions,
        model_repository: Path,
        workdir: Path,
        model_dirs: list[str] | None = None,
        mme_staging: Path | None = None,
        extra_env: dict[str, str] | None = None,
        start_timeout: float = 120.0,
        namespace: bool | None = None,
        auto_complete_config: bool = True,
    ) -> None:
        self.options = options
        self.auto_complete_config = auto_complete_config
        self.model_repository = Path(model_repository)
        self.workdir = Path(workdir)
        self.model_dirs = model_dirs
        self.mme_staging = mme_staging
        self.extra_env = dict(extra_env or {})
        self.start_timeout = start_timeout
        if namespace is None and os.environ.get("CDK_TRITON_REQUIRE_NAMESPACE") == "1":
            namespace = True
        prefix = namespace_prefix() if namespace is not False else None
        if namespace is True and prefix is None:
            raise LocalServerError(
                "a private network namespace was required but cannot be made here (needs root or "
                "unprivileged user namespaces)",
                code="NamespaceUnavailable",
            )
        self.namespace = prefix
        self.shm_prefix = shm_prefix()
        self.socket_path = str(Path(tempfile.gettempdir()) / f"cdk-triton-{uuid.uuid4().hex[:12]}.sock")
        self.log_path = self.workdir / "tritonserver.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self._local = threading.local()
        self.port = options.port or DEFAULT_PORT
        warn_advisories_once()
        if self.namespace is None:
            self.port = free_port()  # on the host the container's fixed port may be taken
            log.warning(
                "NO PRIVATE NETWORK NAMESPACE: tritonserver's SageMaker port %d will bind 0.0.0.0 and be reachable "
                "from other hosts while this local endpoint runs (run as root or enable unprivileged user "
                "namespaces, e.g. sysctl kernel.unprivileged_userns_clone=1 or, on Ubuntu 23.10+, "
                "kernel.apparmor_restrict_unprivileged_userns=0, to keep it private)",
                self.port,
            )

    # ------------------------------------------------------------------ argv
    def argv(self, binary: str, backend_dir: str) -> list[str]:
        """``ServerOptions.to_argv`` plus the local-only flags."""
        from dataclasses import replace

        options = replace(self.options, port=self.port)
        argv = [
            binary,
            *options.to_argv(model_repository=str(self.model_repository), model_dirs=self.model_dirs),
        ]
        argv += [
            f"--backend-directory={backend_dir}",
            "--http-address=127.0.0.1",
            "--metrics-address=127.0.0.1",
            "--allow-gpu-metrics=false",
            "--pinned-memory-pool-byte-size=0",
            "--exit-timeout-secs=2",
            f"--backend-config=python,shm-region-prefix-name={self.shm_prefix}",
        ]
        if not self.auto_complete_config:
            argv.append("--disable-auto-complete-config")
        return argv

    def environment(self, base: dict[str, str]) -> dict[str, str]:
        env = dict(base)
        env.update(self.options.server_environment(model_dirs=self.model_dirs))
        env.update(self.extra_env)
        return env

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> TritonServer:
        """Start the server and wait until ``/ping`` answers 200 (hard timeout, process checked)."""
        install = find_triton()
        check_stub(install)
        self.workdir.mkdir(parents=True, exist_ok=True)
        backend_dir = prepare_backend_directory(install, self.workdir / "backends")
        argv = self.argv(str(install.binary), str(backend_dir))
        env = self.environment(server_base_environment(install))
        mounts = []
        if self.mme_staging is not None:
            if self.namespace is None:
                raise LocalServerError(
                    "a multi-model endpoint stages archives at /opt/ml/models, which needs a private mount "
                    "namespace (root or unprivileged user namespaces); none can be made here",
                    code="NamespaceUnavailable",
                )
            mounts.append([str(self.mme_staging), SAGEMAKER_MODELS_DIR])
        cfg = {
            "namespace": self.namespace is not None,
            "socket": self.socket_path,
            "port": self.port,
            "argv": argv,
            "env": env,
            "log": str(self.log_path),
            "mounts": mounts,
            "stash": str(self.workdir / "stash"),
            "exit_timeout": 2,
            "cwd": str(self.workdir),
        }
        cfg_path = self.workdir / "server.json"
        write_private(cfg_path, json.dumps(cfg, indent=1))
        log.info("starting tritonserver: %s", " ".join(argv))
        launcher = [*(self.namespace or ()), sys.executable, "-m", "cdk_triton.local._nsinit", str(cfg_path)]
        pyenv = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        with os.fdopen(private_file(self.log_path), "ab") as out:
            self.proc = subprocess.Popen(
                launcher,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=pyenv,
                umask=0o077,  # the python backend's shared-memory regions, logs and staged files: 0600
            )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        self.protect_shared_memory()
        return self

    def protect_shared_memory(self) -> None:
        """Make the python backend's shared-memory regions readable by this user only (0600).

        The backend creates them with boost's default permissions and then ``fchmod``s them to 0644,
        so the server's umask (077) does not reach them; call this after every model load.
        """
        for path in glob.glob(f"/dev/shm/{self.shm_prefix}*"):
            with contextlib.suppress(OSError):
                os.chmod(path, 0o600)

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise LocalServerError(
                    f"tritonserver exited with status {self.proc.returncode} before it was ready:\n"
                    + self.log_tail(),
                    code="ServerStartFailed",
                    log_path=str(self.log_path),
                )
            if os.path.exists(self.socket_path):
                try:
                    status, _, _ = self.request("GET", "/ping", timeout=2)
                    if status == 200:
                        return
                except OSError:
                    pass
            time.sleep(0.05)
        raise LocalServerError(
            f"tritonserver was not ready within {self.start_timeout:.0f} s:\n" + self.log_tail(),
            code="ServerStartTimeout",
            log_path=str(self.log_path),
        )

    def log_tail(self, lines: int = 25) -> str:
        try:
            text = self.log_path.read_text(errors="replace").splitlines()
        except OSError:
            return ""
        keep = [t for t in text if "CudaDriverHelper has not been initialized" not in t]
        return "\n".join(keep[-lines:])

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        """SIGTERM the whole process group, SIGKILL after a grace period, clean shared memory."""
        proc, self.proc = self.proc, None
        if proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # stubs left behind by a hard exit
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        for path in glob.glob(f"/dev/shm/{self.shm_prefix}*"):
            with contextlib.suppress(OSError):
                os.unlink(path)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.socket_path)

    def process_ids(self) -> list[int]:
        """Every live process of the server's process group (launcher, server, backend stubs)."""
        if self.proc is None:
            return []
        return pids_in_group(self.proc.pid)

    def rss_bytes(self) -> int:
        """Resident memory (sum of RSS) of ``tritonserver`` and its backend stubs.

        The launcher that owns the namespaces and the socket bridge is not counted: SageMaker runs no
        such process, so the memory budget covers what the container would hold.
        """
        total = 0
        page = os.sysconf("SC_PAGE_SIZE")
        launcher = self.proc.pid if self.proc is not None else None
        for pid in self.process_ids():
            if pid == launcher:
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * page
        return total

    # ------------------------------------------------------------------ requests
    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        *,
        timeout: float = 400.0,
    ) -> tuple[int, dict[str, str], bytes]:
        """One HTTP request to the server's SageMaker port (through the namespace's Unix socket)."""
        for attempt in (0, 1):
            conn = getattr(self._local, "conn", None)
            if conn is None or attempt:
                conn = UnixHTTPConnection(self.socket_path, timeout=timeout)
                self._local.conn = conn
            conn.timeout = timeout
            if conn.sock is not None:
                conn.sock.settimeout(timeout)  # a kept-alive socket keeps the timeout it was made with
            try:
                conn.request(method, path, body=body, headers=headers or {})
                resp = conn.getresponse()
                data = resp.read()
                return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
            except (
                http.client.RemoteDisconnected,
                BrokenPipeError,
                ConnectionResetError,
                http.client.CannotSendRequest,
                http.client.ResponseNotReady,
            ):
                conn.close()
                self._local.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")


def pids_in_group(pgid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != "Z":
            out.append(int(entry))
    return out
