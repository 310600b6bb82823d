"""Fault test: SIGKILL a build during packaging, rebuild, and the outputs are correct."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import tarfile
import textwrap
import time
from pathlib import Path

from cdk_triton.builder import run_build
from tests.unit.builder.helpers import write_decl

BIG = """
  - name: big
    format: python
    source: {python: big_model}
    inputs: [{name: x, dtype: FP32, shape: [4]}]
    outputs: [{name: y, dtype: FP32, shape: [4]}]
    max_batch_size: 4
"""
ENDPOINTS = """
  - name: mme
    mode: MultiModel
    instance_types: [ml.g5.xlarge]
    models: [big]
  - name: sme
    mode: SingleModel
    instance_types: [ml.g5.xlarge]
    models: [big]
    packaging: tar.gz
"""

DRIVER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from cdk_triton.builder import package
    signal_file = Path(sys.argv[3])
    original = package._ProgressReader.read
    def slow_read(self, n=-1):
        signal_file.touch()
        time.sleep(0.05)
        return original(self, 1 << 16)
    package._ProgressReader.read = slow_read
    from cdk_triton.builder import run_build
    run_build(sys.argv[1], out_dir=sys.argv[2], progress=False)
""")


def _make(tmp: Path) -> Path:
    decl = write_decl(tmp, BIG, endpoints=ENDPOINTS)
    d = tmp / "big_model"
    d.mkdir(exist_ok=True)
    (d / "model.py").write_text(
        textwrap.dedent("""
        import numpy as np
        import triton_python_backend_utils as pb_utils

        class TritonPythonModel:
            def execute(self, requests):
                return [pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor(
                    "y", pb_utils.get_input_tensor_by_name(r, "x").as_numpy() * 2)]) for r in requests]
    """)
    )
    (d / "weights.bin").write_bytes(os.urandom(4 << 20))
    return decl


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_sigkill_during_packaging_then_rebuild(tmp_path: Path) -> None:
    decl = _make(tmp_path / "src")
    out = tmp_path / "out"
    flag = tmp_path / "packaging-started"
    proc = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(decl), str(out), str(flag)],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 120
    while not flag.exists():
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
        assert time.time() < deadline
        time.sleep(0.05)
    time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    # killed mid-archive: a temp file may remain, no archive under a trusted name, no manifest
    assert not (out / "manifest.json").exists()
    assert not list(out.glob("mme/mme/*.tar.gz")) and not list(out.glob("sme/sme/*.tar.gz"))
    assert list(out.rglob(".*.tmp")), "expected the half-written temp archive of the killed build"

    result = run_build(decl, out_dir=out, progress=False)
    assert result.exported == 0  # the model finished before the kill: its cache entry is trusted
    assert not list(out.rglob(".*.tmp"))
    clean = run_build(decl, out_dir=tmp_path / "clean", progress=False)
    for ep in ("mme", "sme"):
        e, c = result.manifest.endpoint(ep), clean.manifest.endpoint(ep)
        paths = (
            [(t.local_path, t.sha256) for t in e.target_models.values()]
            if ep == "mme"
            else [(e.local_path, e.sha256)]
        )
        for rel, sha in paths:
            archive = out / rel
            assert _sha(archive) == sha
            with tarfile.open(archive) as tar:
                assert "big/1/weights.bin" in tar.getnames()
                assert (
                    tar.extractfile("big/1/weights.bin").read()
                    == (decl.parent / "big_model" / "weights.bin").read_bytes()
                )  # type: ignore[union-attr]
        assert e.sha256 == c.sha256 or ep == "mme"
    assert {k: t.sha256 for k, t in result.manifest.endpoint("mme").target_models.items()} == {
        k: t.sha256 for k, t in clean.manifest.endpoint("mme").target_models.items()
    }
