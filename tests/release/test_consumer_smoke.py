"""A new user's first run, from the wheel alone: ``cdk-triton init``, then the project's ``make demo``
(``cdk-triton build``, ``cdk synth`` with cdk-nag, ``cdk-triton serve`` + ``invoke``) and ``make test``.

Marker ``release`` (CI runs it under ``make test``; about a minute and a half). The wheel is the session's
(tests/release_artifacts.py, built from a copy of the tracked tree), installed with ``--no-deps
--no-index`` into a clean venv made with this interpreter; no checkout is on its path (PYTHONPATH unset,
run from a temp dir, checked). Its dependencies (aws-cdk-lib, torch, nvidia-pytriton, cdk-nag, pytest,
...) are this environment's: a ``.pth`` file in the clean venv names this environment's site-packages, and
site.py appends it after the venv's own, so the wheel's ``cdk_triton`` wins and nothing is downloaded
(a torch is a multi-GB download; ``.ci/compat`` shares it the same way). The project's ``make demo`` runs
with ``VENV`` set to that venv (its install stamp present: nothing is installed) and ``CDK`` set to this
repository's pinned CDK CLI (``node_modules/.bin/cdk``, what ``npm ci`` installed), so the run needs no
network, and no AWS credentials (they are removed from the environment).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CDK = ROOT / "node_modules" / ".bin" / "cdk"
NO_AWS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE")


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> str:
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, timeout=timeout)
    assert proc.returncode == 0, f"{cmd} -> {proc.returncode}\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}"
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def consumer(artifacts: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A clean venv holding the wheel, this environment's site-packages appended after its own."""
    tmp = tmp_path_factory.mktemp("consumer")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", *NO_AWS} and not k.startswith("AWS_")
    }
    env |= {"PYTHONNOUSERSITE": "1", "AWS_EC2_METADATA_DISABLED": "true"}
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp, env)
    py = venv / "bin" / "python"
    wheel = str(artifacts["wheel"])
    _run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-index", wheel],
        tmp,
        env,
    )
    site = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], tmp, env).strip()
    # zz-: after any .pth of the venv's own; a path line is appended to sys.path, after the venv's site
    (Path(site) / "zz-shared-deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    (venv / ".installed").touch()  # the project's Makefile: nothing to install
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return {"venv": venv, "py": py, "env": env, "tmp": tmp}


@pytest.mark.release
def test_a_scaffolded_project_builds_synthesizes_serves_and_tests_from_the_wheel(
    consumer: dict[str, Any],
) -> None:
    if not CDK.exists():
        pytest.skip("the CDK CLI is not installed: run `npm ci` (make install does)")
    venv, py, env, tmp = consumer["venv"], consumer["py"], consumer["env"], consumer["tmp"]
    where = json.loads(
        _run(
            [
                str(py),
                "-c",
                "import cdk_triton, json, sys; print(json.dumps([cdk_triton.__file__, sys.path]))",
            ],
            tmp,
            env,
        )
    )
    assert Path(where[0]).resolve().is_relative_to(venv.resolve()), where[0]
    # nothing of the checkout on the path but the shared dependencies' folder (a .venv inside a checkout,
    # as in CI, whose .pth files, the editable install's finder among them, Python does not run from there)
    shared = Path(sysconfig.get_path("purelib")).resolve()
    assert not [
        p for p in where[1] if p and Path(p).resolve().is_relative_to(ROOT) and Path(p).resolve() != shared
    ]

    project = tmp / "my-triton-app"
    out = _run([str(venv / "bin" / "cdk-triton"), "init", str(project)], tmp, env)
    assert "build/models.yaml" in out and "Makefile" in out
    make = ["make", f"VENV={venv}", f"CDK={CDK}"]
    demo = _run([*make, "demo"], project, env, timeout=600)
    manifest = json.loads((project / "build" / "out" / "manifest.json").read_text())
    assert set(manifest["endpoints"]) == {"classifier"}
    (template,) = (project / "cdk.out").glob("*.template.json")
    resources = json.loads(template.read_text())["Resources"]
    assert {"AWS::SageMaker::Endpoint", "AWS::SageMaker::Model"} <= {r["Type"] for r in resources.values()}
    assert "sample response matches" in demo and "status 200" in demo
    tested = _run([*make, "test"], project, env)
    assert "2 passed" in tested
    # the project's files are the scaffold's: nothing of this checkout was copied in
    assert not (project / "cdk_triton").exists()
