"""``local.runtime.prepare_backend_directory``: a restart rewrites the backend directory safely."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from cdk_triton.local.runtime import TritonInstall, prepare_backend_directory


def _install(tmp: Path) -> TritonInstall:
    """An install whose stub is a real executable (``sleep``) and whose backend files are plain files."""
    backend = tmp / "wheel" / "python"
    backend.mkdir(parents=True)
    (backend / "libtriton_python.so").write_bytes(b"lib v1")
    (backend / "triton_python_backend_utils.py").write_text("# utils v1\n")
    stub = tmp / "wheel" / "stub"
    shutil.copy2(shutil.which("sleep") or "/bin/sleep", stub)
    return TritonInstall(binary=stub, python_backend=backend, stub=stub, libs=tmp / "wheel")


def test_a_restart_rewrites_the_stub_while_a_leftover_stub_still_runs(tmp_path: Path) -> None:
    """Killed servers leave their stubs running a moment: writing the stub in place then fails with ETXTBSY
    (the restart's supervisor died of it); a rename leaves the running inode alone."""
    install = _install(tmp_path)
    dest = prepare_backend_directory(install, tmp_path / "backends")
    stub = dest / "python" / "triton_python_backend_stub"
    leftover = subprocess.Popen([str(stub), "30"])
    try:
        lib = dest / "python" / "libtriton_python.so"
        with lib.open("rb") as mapped:  # a leftover process's view of the old library
            (install.python_backend / "libtriton_python.so").write_bytes(b"lib v2")
            prepare_backend_directory(install, dest)
            assert mapped.read() == b"lib v1"  # not truncated under it
        assert lib.read_bytes() == b"lib v2" and stub.read_bytes() == install.stub.read_bytes()
        assert leftover.poll() is None
        assert not list(dest.rglob(".*.tmp"))
    finally:
        leftover.kill()
        leftover.wait()
