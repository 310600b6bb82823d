"""The python format's exporter (a copied format): the user's files go into the version folder as
they are, after a check that they import only what the image has; the model runs on the sample here
(no parity: it is its own reference). A model that calls other models (business logic scripting,
``calls``) is checked like an ensemble: its sample runs with its callees' eager references behind
``InferenceRequest.exec``, and its parity with their built artifacts (unless one runs only on a GPU)."""

from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from cdk_triton.builder import bls, compat, environments, portability
from cdk_triton.builder.context import BuildContext, Exported
from cdk_triton.builder.export import artifact, check_io
from cdk_triton.builder.export.base import Made, finish
from cdk_triton.builder.export.verify import artifact_runner as built_runner
from cdk_triton.builder.export.verify import reference_runner
from cdk_triton.builder.parity import check_deterministic, compare
from cdk_triton.builder.pbtxt import IoTensor, build_config, to_dict
from cdk_triton.builder.python_model import PythonModelRunner
from cdk_triton.builder.reference import Runner
from cdk_triton.builder.samples import sample_inputs, sequence_controls, triton_dtype
from cdk_triton.config import python_env, sizing, tables
from cdk_triton.config.declaration import BuildSpec, ModelSpec
from cdk_triton.errors import BuildError

if TYPE_CHECKING:
    import numpy as np

skip_reason = artifact.no_skip


def warnings(spec: BuildSpec, m: ModelSpec, tools: dict[str, str]) -> list[str]:
    """A GPU-placed python model whose code names a device (``portability.python_warnings``)."""
    return portability.python_warnings(spec, m)


def check_source(spec: BuildSpec, m: ModelSpec) -> None:
    """Refuse files that import what the image lacks (the row's ``allowed_imports`` and the stdlib).
    A model with requirements is checked once they are resolved (``export_model``): the import names
    its wheels provide are known only then. The models its code calls must be declared in ``calls``."""
    if m.source and m.source.python:
        bls.check_declared(m, bls.scan(spec.resolve_path(m.source.python)))
    if m.source and m.source.python and not m.requirements:
        p = spec.resolve_path(m.source.python)
        compat.check_python_model(p if p.is_dir() else p.parent, name=m.name, allowed=m.row.allowed_imports)
        return
    if m.requirements:
        target_python(spec, m)


def target_python(spec: BuildSpec, m: ModelSpec) -> str:
    """The Python of the target container (the release table's fact) that an environment is packed for."""
    py = tables.release(spec.triton_version).python.value
    if not py:
        raise BuildError(
            f"python model '{m.name}' declares requirements, but the release table has no Python version for "
            f"Triton {spec.triton_version}: target a release whose Python is known (cdk-triton releases)",
            code="PythonEnvPythonMismatch",
        )
    return py


def max_env_bytes() -> int:
    """The most an environment may take of an endpoint's volume: the largest EBS ML storage volume
    (VolumeSizeInGB's maximum) less the sizing headroom."""
    return int(sizing.EBS_MAX_VOLUME_GB * sizing.GiB / sizing.VOLUME_HEADROOM)


def host_python() -> str:
    """The Python running the build (and the local endpoint's stub)."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def host_platform() -> str:
    """The wheel platform of this machine (its glibc, x86_64)."""
    libc = os.confstr("CS_GNU_LIBC_VERSION") or "glibc 2.35"
    major, minor = libc.split()[-1].split(".")[:2]
    return f"manylinux_{major}_{minor}_{platform.machine() or 'x86_64'}"


def pack_environments(
    ctx: BuildContext, m: ModelSpec
) -> tuple[environments.PackedEnv, environments.PackedEnv]:
    """The model's environment for the target container and for this host's Python (the same when they
    agree); the host's is kept at ``python_env.local_variant`` for the local endpoint. Checks the
    model's imports against what the wheels provide."""
    py = target_python(ctx.spec, m)
    target = environments.pack(
        m.requirements,
        python=py,
        platform=python_env.container_platform(py),
        out_dir=ctx.out,
        name=m.name,
        max_bytes=max_env_bytes(),
    )
    host = target
    if host_python() != py:
        host = environments.pack(
            m.requirements, python=host_python(), platform=host_platform(), out_dir=ctx.out, name=m.name
        )
        variant = python_env.local_variant(ctx.out, target.key, host.python)
        if not variant.is_file():
            shutil.copyfile(host.archive, variant)
    assert m.source is not None
    p = ctx.spec.resolve_path(m.source.python or "")
    compat.check_python_model(
        p if p.is_dir() else p.parent, name=m.name, allowed=m.row.allowed_imports | target.top_level
    )
    return target, host


def export_model(ctx: BuildContext, m: ModelSpec, tmp: Path) -> Exported:
    """Copy the python model into ``1/``, run it on the sample and write its config."""
    envs = pack_environments(ctx, m) if m.requirements else None
    vdir = tmp / "1"
    vdir.mkdir()
    sample = sample_inputs(m)
    assert m.source is not None
    path = ctx.spec.resolve_path(m.source.python or "")
    _copy(path, vdir, str(m.row.artifact))
    for name in m.row.files:
        if not (vdir / name).is_file():
            raise BuildError(f"python model '{m.name}': no {name} in {path}", code="PythonModelInvalid")
    ins = [IoTensor(name=t.name, dtype=t.dtype, dims=t.shape) for t in m.inputs]
    outs = [IoTensor(name=t.name, dtype=t.dtype, dims=t.shape) for t in m.outputs]
    cfg = build_config(m, inputs=ins, outputs=outs)
    site = None
    if envs is not None:
        shutil.copyfile(envs[0].archive, tmp / python_env.ENV_ARCHIVE)
        site = _unpacked(envs[1].archive, ctx.out)
    if m.calls:
        bls.check_tensors(m, bls.scan(path), {c: _names(ctx, c) for c in m.calls})
    runner = PythonModelRunner(
        vdir / str(m.row.artifact),
        to_dict(cfg),
        name=m.name,
        site_packages=site,
        callees=_callees(ctx, m, reference_runner),
    )
    fed = {**sample, **sequence_controls(m)}  # what Triton's sequence batcher adds, on a one-request sequence
    expected = runner(fed)
    check_deterministic(m, expected, runner(fed))
    parity = None
    if m.calls and not any(ctx.spec.model(n).row.gpu_only for n in ctx.spec.closure(m.name)):
        actual = runner.calling(_callees(ctx, m, built_runner))(fed)
        parity = compare(m, expected, actual, what="the python model calling the built artifacts")
    batched = m.max_batch_size > 0
    observed = []
    for t in m.outputs:
        if t.name not in expected:
            raise BuildError(
                f"python model '{m.name}' returned no output '{t.name}'", code="TensorNameMismatch"
            )
        arr = expected[t.name]
        observed.append(
            IoTensor(
                name=t.name,
                dtype=triton_dtype(arr.dtype),
                dims=tuple(arr.shape[1:] if batched else arr.shape),
            )
        )
    check_io(m, m.outputs, observed, group="outputs", what="the python model's sample run")
    return finish(m, tmp, sample, Made(cfg=cfg, expected=expected, parity=parity))


def _names(ctx: BuildContext, callee: str) -> dict[str, list[str]]:
    """A callee's tensor names as its config states them (what a call must use)."""
    record = ctx.resolved[callee].record
    assert record is not None
    return {k: list(v.values()) for k, v in record.exported.io_names.items()}


def _callees(
    ctx: BuildContext, m: ModelSpec, runner_of: Callable[[BuildContext, ModelSpec], Runner]
) -> dict[str, Runner]:
    """The runners behind ``InferenceRequest.exec``: each callee's ``runner_of`` (declared tensor names),
    called and answering with the tensor names of its config (what the model's code uses)."""
    out: dict[str, Runner] = {}
    for c in m.calls:
        record = ctx.resolved[c].record
        assert record is not None
        names = record.exported.io_names
        out[c] = _renamed(runner_of(ctx, ctx.spec.model(c)), names["inputs"], names["outputs"])
    return out


def _renamed(run: Runner, inputs: dict[str, str], outputs: dict[str, str]) -> Runner:
    to_declared = {v: k for k, v in inputs.items()}

    def call(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        got = run({to_declared.get(k, k): v for k, v in arrays.items()})
        return {outputs.get(k, k): v for k, v in got.items()}

    return call


def _unpacked(archive: Path, out: Path) -> Path:
    """The ``site-packages`` of a packed environment, unpacked once under ``<out>/.tmp/envs``."""
    dest = out / ".tmp" / "envs" / archive.name.removesuffix(".tar.gz")
    if not dest.is_dir():
        part = dest.with_name(dest.name + f".{os.getpid()}.part")
        shutil.rmtree(part, ignore_errors=True)
        with tarfile.open(archive, "r:gz") as tar:
            tar.extractall(part, filter="data")
        part.replace(dest)
    return next((dest / "lib").glob("python*/site-packages"))


def _copy(path: Path, vdir: Path, single_file: str) -> None:
    """A directory's files (a ``1/`` inside it flattened, its config.pbtxt and caches left out), or
    one file as ``single_file``."""
    if not path.is_dir():
        shutil.copyfile(path, vdir / single_file)
        return
    for f in sorted(path.rglob("*")):
        if "__pycache__" in f.parts or f.suffix == ".pyc" or f.is_dir():
            continue
        rel = f.relative_to(path)
        if rel.parts[0] == "1" and len(rel.parts) > 1:
            rel = Path(*rel.parts[1:])
        if rel.name == "config.pbtxt":
            continue
        (vdir / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, vdir / rel)


def artifact_runner(ctx: BuildContext, m: ModelSpec, entry: Path) -> Runner:
    """The built ``1/model.py`` run in-process with its recorded config."""
    record = ctx.resolved[m.name].record
    assert record is not None
    site = None
    if (entry / python_env.ENV_ARCHIVE).is_file():
        site = _unpacked(pack_environments(ctx, m)[1].archive, ctx.out)
    return PythonModelRunner(
        entry / "1" / str(m.row.artifact),
        record.exported.config,
        name=m.name,
        site_packages=site,
        callees=_callees(ctx, m, built_runner) if m.calls else None,
    )


def fill(house: Path, declaration: Path) -> list[Path]:
    """Download into the wheelhouse ``house`` (from the package index) every wheel the python models of
    ``declaration`` need: for the target container's Python and platform and for this machine's (the
    local variant), as the build resolves them, so that a build with ``CDK_TRITON_WHEELHOUSE=<house>``
    runs offline (``make install`` calls it). Returns the wheelhouse's wheels."""
    from cdk_triton.builder.declarations import load_declaration

    spec = load_declaration(declaration)
    house.mkdir(parents=True, exist_ok=True)
    targets = {
        (python_env.normalize(m.requirements), py, plat)
        for m in spec.models
        if m.requirements
        for py, plat in (
            (
                target_python(spec, m),
                python_env.container_platform(target_python(spec, m)),
            ),
            (host_python(), host_platform()),
        )
    }
    for reqs, py, plat in sorted(targets):
        with tempfile.TemporaryDirectory(prefix="cdk-triton-fill-") as tmp:
            cmd = environments.pip_download_command(python=py, platform=plat, dest=house, work=Path(tmp))
            proc = subprocess.run([*cmd, *reqs], capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                raise environments.resolution_error(
                    proc.stderr + proc.stdout, reqs, python=py, platform=plat, name="fill", house=None
                )
    return sorted(house.glob("*.whl"))


if __name__ == "__main__":  # python -m cdk_triton.builder.export.python fill <wheelhouse> <models.yaml>
    if len(sys.argv) != 4 or sys.argv[1] != "fill":
        sys.exit("usage: python -m cdk_triton.builder.export.python fill <wheelhouse> <models.yaml>")
    wheels = fill(Path(sys.argv[2]), Path(sys.argv[3]))
    print(f"{len(wheels)} wheels in {sys.argv[2]}")
