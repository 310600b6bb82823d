"""Where the real ``tritonserver`` comes from (the nvidia-pytriton wheel) and how to prepare it.

The wheel bundles a ``tritonserver`` with the SageMaker endpoint compiled in and only the python
backend. :func:`prepare_backend_directory` builds a backend directory from it: the python backend
(library, utils, the stub for this interpreter) plus the CPU python-based stand-ins the format
registry names (``onnxruntime``, ``pytorch``, ``tensorrt``; a registered format adds its own). :func:`check_stub` runs ``ldd`` on the stub first,
because a stub that cannot start makes the server hang forever (measured with the nvidia-pytriton 0.7.0 wheel).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import threading
from dataclasses import dataclass
from pathlib import Path

from cdk_triton.config import formats, target_runtime
from cdk_triton.local.errors import LocalServerError

BACKENDS_DIR = Path(__file__).resolve().parent / "backends"


def cpu_stand_ins() -> dict[str, Path]:
    """Triton backend name -> the directory of its CPU python-based stand-in (the format registry's
    ``cpu_stand_in``, relative to :data:`BACKENDS_DIR` or absolute)."""
    return {
        str(f.backend): BACKENDS_DIR / f.cpu_stand_in
        for f in formats.FORMATS.values()
        if f.cpu_stand_in and f.backend
    }


@dataclass(frozen=True, kw_only=True, slots=True)
class TritonInstall:
    """The pieces of the nvidia-pytriton wheel the local server needs."""

    binary: Path
    python_backend: Path
    stub: Path
    libs: Path

    @property
    def ld_library_path(self) -> str:
        libdir = sysconfig.get_config_var("LIBDIR") or ""
        return os.pathsep.join(p for p in (str(self.libs), libdir) if p)


def find_triton() -> TritonInstall:
    """Locate ``tritonserver`` and the python backend stub for the running Python.

    Raises:
        LocalServerError(TritonNotInstalled): nvidia-pytriton is not installed, or has no stub for
            this Python version.
    """
    try:
        import pytriton
    except ImportError as exc:
        raise LocalServerError(
            "the local endpoint needs the real tritonserver shipped in nvidia-pytriton; install it with "
            "`pip install 'cdk-triton[local]'` (nvidia-pytriton==0.7.0, numpy<2)",
            code="TritonNotInstalled",
        ) from exc
    root = Path(pytriton.__file__).resolve().parent / "tritonserver"
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    install = TritonInstall(
        binary=root / "bin" / "tritonserver",
        python_backend=root / "backends" / "python",
        stub=root / "python_backend_stubs" / version / "triton_python_backend_stub",
        libs=root.parent.parent / "nvidia_pytriton.libs",
    )
    for path in (install.binary, install.python_backend / "libtriton_python.so", install.stub):
        if not path.exists():
            raise LocalServerError(
                f"{path} is missing from the nvidia-pytriton install (Python {version})",
                code="TritonNotInstalled",
            )
    return install


def check_stub(install: TritonInstall) -> None:
    """``ldd`` the python backend stub: a stub with unresolved libraries hangs the server forever."""
    env = dict(os.environ, LD_LIBRARY_PATH=install.ld_library_path)
    try:
        out = subprocess.run(["ldd", str(install.stub)], capture_output=True, text=True, env=env, timeout=30)
    except FileNotFoundError:
        return  # no ldd (not glibc): the start timeout still guards the start
    missing = [line.strip() for line in out.stdout.splitlines() if "not found" in line]
    if out.returncode != 0 or missing:
        raise LocalServerError(
            f"the Triton python backend stub {install.stub} cannot start: "
            + ("; ".join(missing) or out.stderr.strip())
            + f" (LD_LIBRARY_PATH={install.ld_library_path})",
            code="TritonStubBroken",
        )


def _install_file(src: Path, dst: Path) -> None:
    """Copy ``src`` to ``dst`` by rename: a restart rewrites the backend directory while the killed server's
    stubs may still be running the old stub (writing it in place fails with ETXTBSY) or have the old
    library mapped (truncating it would crash them); a rename leaves their inode alone."""
    tmp = dst.with_name(f".{dst.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        shutil.copy2(src, tmp)
        os.replace(tmp, dst)
    finally:
        tmp.unlink(missing_ok=True)


def prepare_backend_directory(install: TritonInstall, dest: Path) -> Path:
    """Write a backend directory: ``python/`` from the wheel plus the CPU python-based backends (each file
    replaced by rename, so a restart never writes into a file a leftover process runs)."""
    python_dir = dest / "python"
    python_dir.mkdir(parents=True, exist_ok=True)
    for name in ("libtriton_python.so", "triton_python_backend_utils.py"):
        _install_file(install.python_backend / name, python_dir / name)
    _install_file(install.stub, python_dir / "triton_python_backend_stub")
    common = BACKENDS_DIR / "common" / "cpu_backend.py"
    for backend, stand_in in cpu_stand_ins().items():
        target = dest / backend
        target.mkdir(exist_ok=True)
        _install_file(stand_in / "model.py", target / "model.py")
        _install_file(common, target / "cpu_backend.py")
    return dest


def server_base_environment(install: TritonInstall) -> dict[str, str]:
    """Environment of the server process: libraries, the venv first on PATH (the stub looks up python3);
    with ``serve --runtime target`` the release environment's ``bin/`` goes first
    (:data:`~cdk_triton.config.target_runtime.STUB_PYTHON_VARIABLE`, ``local.target``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SAGEMAKER_")}
    env["LD_LIBRARY_PATH"] = install.ld_library_path
    first = [str(Path(sys.executable).parent)]
    if env.get(target_runtime.STUB_PYTHON_VARIABLE):
        first.insert(0, env[target_runtime.STUB_PYTHON_VARIABLE])
    env["PATH"] = os.pathsep.join([*first, env.get("PATH", "/usr/bin:/bin")])
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env
