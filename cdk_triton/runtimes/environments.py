"""The release runtimes' environments: a virtual environment per Triton release and runtime set holding
exactly the release's libtorch / ONNX Runtime / TensorRT versions from the package index, created once under
:func:`cdk_triton.config.target_runtime.root` and shared by every build, project and local endpoint.

A file lock serializes creators (a second one waits, then finds the environment done); the environment is
built in a temporary directory beside its place and renamed into it; a completion marker holding the hash
of the pinned requirements is written last. An environment without a matching marker, or whose runtime
does not import at the pinned version, is never used: it is rebuilt. The build's release-runtime check
(``builder.target_runtime``) runs :data:`PROBE` in it; ``cdk-triton serve --runtime target`` runs the
CPU stand-in backends' stubs with its interpreter.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from cdk_triton.config import target_runtime as rules

#: the probe script the environment's interpreter runs (imports nothing of cdk_triton)
PROBE = Path(__file__).with_name("probe.py")
#: the variable naming another package index for the environments (a mirror); default: pip's own
INDEX_VARIABLE = "CDK_TRITON_RUNTIMES_INDEX_URL"
#: seconds an environment's creation (the downloads) may take
CREATE_TIMEOUT_S = 1800

#: installs ``requirements`` into the environment whose interpreter is ``python``; raises
#: :class:`RuntimeUnavailable` with pip's words when it cannot
Installer = Callable[[Path, tuple[str, ...], Path], None]


class RuntimeUnavailable(Exception):
    """The environment cannot be created here (no package index, no wheel for this Python)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class RuntimeEnv:
    """One created, verified environment.

    Attributes:
        path: its directory (``<root>/<release>-<hash12>``).
        name: that directory's name (recorded per model in the manifest).
        requirements: the pinned requirements it holds.
        created: whether this call created it (False: found complete).
        seconds: how long creating (or finding) it took.
    """

    path: Path
    name: str
    requirements: tuple[str, ...]
    created: bool
    seconds: float

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def site_packages(self) -> Path:
        """The environment's site-packages (what ``serve --runtime target`` puts on the stub's path)."""
        found = sorted((self.path / "lib").glob("python3.*/site-packages"))
        return found[0] if found else self.path / "lib"


def python_minor() -> str:
    """This interpreter's ``X.Y``: the environments' Python (the local stub's too)."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"


# ---------------------------------------------------------------------------- the environment


def pip_install(python: Path, reqs: tuple[str, ...], log: Path) -> None:
    """``pip install`` ``reqs`` into the environment of ``python`` with the build's own pip
    (``--python``): the index of the user's pip configuration (or :data:`INDEX_VARIABLE`), the user's
    constraints and find-links off (a global constraint capping torch must not bend the pinned version)."""
    cmd = [
        sys.executable, "-m", "pip", "--python", str(python), "install", "--no-input",
        "--disable-pip-version-check", "--progress-bar", "off", "--no-warn-script-location", "--retries", "2",
    ]  # fmt: skip
    index = os.environ.get(INDEX_VARIABLE)
    if index:
        cmd += ["--index-url", index]
    env = {**os.environ, "PIP_CONSTRAINT": "", "PIP_FIND_LINKS": "", "PIP_NO_INDEX": ""}
    with log.open("ab") as fh:
        proc = subprocess.run(
            [*cmd, *reqs], stdout=fh, stderr=subprocess.STDOUT, env=env, timeout=CREATE_TIMEOUT_S, check=False
        )
    if proc.returncode != 0:
        tail = " | ".join(line.strip() for line in log.read_text("utf-8", "replace").splitlines()[-3:])
        raise RuntimeUnavailable(f"pip could not install {' '.join(reqs)} (exit {proc.returncode}): {tail}")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``path`` (blocking: a second creator waits, then finds it done)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def read_marker(env_dir: Path) -> dict[str, object] | None:
    """The completion marker of ``env_dir``, or None when absent or unreadable."""
    try:
        data = json.loads((env_dir / rules.MARKER).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def complete(env_dir: Path, reqs: tuple[str, ...], python: str) -> bool:
    """Whether ``env_dir`` holds a marker with the hash of ``reqs`` and an interpreter."""
    marker = read_marker(env_dir)
    return (
        marker is not None
        and marker.get("sha256") == rules.requirements_hash(reqs, python)
        and (env_dir / "bin" / "python").exists()
    )


def installed_versions(python: Path) -> dict[str, str]:
    """The runtimes' versions as the environment's interpreter imports them ({} when it cannot start)."""
    try:
        proc = subprocess.run(
            [str(python), str(PROBE), "--versions"], capture_output=True, text=True, timeout=300, check=False
        )
        return dict(json.loads(proc.stdout)) if proc.returncode == 0 else {}
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return {}


def matches(versions: dict[str, str], reqs: tuple[str, ...]) -> bool:
    """Whether every pinned ``name==version`` of ``reqs`` imports at that version (a local suffix such as
    ``+cu124`` allowed) and numpy is 1.x."""
    modules = {v: k for k, v in rules.RUNTIME_PACKAGES.items()}
    for r in reqs:
        if "==" not in r:
            continue
        dist, version = r.split("==", 1)
        module = rules.RUNTIME_MODULES[modules[dist]]
        if versions.get(module, "").split("+")[0] != version:
            return False
    return versions.get("numpy", "").startswith("1.")


def ensure_environment(
    triton_version: str,
    runtimes: frozenset[str] | set[str],
    *,
    root: Path | None = None,
    installer: Installer | None = None,
    verify: bool = True,
    rebuild: bool = False,
) -> RuntimeEnv:
    """The environment holding ``runtimes`` of ``triton_version``: found complete, or created now.

    ``verify``: import the runtimes to check their versions before trusting a complete marker (False: the
    caller verifies, as the build's probe does on its first line). ``rebuild``: create it again even when
    complete (a caller found it broken).

    Raises:
        RuntimeUnavailable: it cannot be created here (the reason names pip's words and the log).
    """
    start = time.monotonic()
    reqs = rules.requirements(triton_version, sorted(runtimes))
    py = python_minor()
    name = rules.environment_name(triton_version, reqs, py)
    base = root if root is not None else rules.root()
    final = base / name
    with _locked(base / ".locks" / f"{name}.lock"):
        if (
            not rebuild
            and complete(final, reqs, py)
            and (not verify or matches(installed_versions(final / "bin" / "python"), reqs))
        ):
            return RuntimeEnv(
                path=final, name=name, requirements=reqs, created=False, seconds=time.monotonic() - start
            )
        _create(final, reqs, py, installer or pip_install)
    return RuntimeEnv(
        path=final, name=name, requirements=reqs, created=True, seconds=time.monotonic() - start
    )


def _create(final: Path, reqs: tuple[str, ...], py: str, installer: Installer) -> None:
    """Build the environment in a temporary directory beside ``final``, verify it, mark it complete and
    rename it into place (a corrupt one at ``final`` is moved aside and removed). Called under the lock."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent))
    log = final.parent / f"{final.name}.log"
    log.write_text(f"cdk-triton: creating {final} with {' '.join(reqs)}\n", "utf-8")
    try:
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", str(tmp)],
            check=True,
            capture_output=True,
            timeout=300,
        )
        installer(tmp / "bin" / "python", reqs, log)
        got = installed_versions(tmp / "bin" / "python")
        if not matches(got, reqs):
            raise RuntimeUnavailable(
                f"the new environment imports {got or 'nothing'}, not {' '.join(reqs)} (log: {log})"
            )
        marker = {
            "sha256": rules.requirements_hash(reqs, py),
            "requirements": list(reqs),
            "python": py,
            "versions": got,
        }
        (tmp / rules.MARKER).write_text(json.dumps(marker, indent=1, sort_keys=True) + "\n", "utf-8")
        if final.exists():
            old = final.with_name(f".{final.name}.{os.getpid()}.old")
            os.rename(final, old)
            shutil.rmtree(old, ignore_errors=True)
        os.rename(tmp, final)
    except subprocess.SubprocessError as exc:
        raise RuntimeUnavailable(f"could not create a virtual environment at {tmp}: {exc}") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
