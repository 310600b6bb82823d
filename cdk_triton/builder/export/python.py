"""The python format's exporter (a copied format): the user's files go into the version folder as
they are, after a check that they import only what the image has; the model runs on the sample here
(no parity: it is its own reference)."""

from __future__ import annotations

import shutil
from pathlib import Path

from cdk_triton.builder import compat, portability
from cdk_triton.builder.context import BuildContext, Exported
from cdk_triton.builder.export import artifact, check_io
from cdk_triton.builder.export.base import Made, finish
from cdk_triton.builder.parity import check_deterministic
from cdk_triton.builder.pbtxt import IoTensor, build_config, to_dict
from cdk_triton.builder.python_model import PythonModelRunner
from cdk_triton.builder.reference import Runner
from cdk_triton.builder.samples import sample_inputs, sequence_controls, triton_dtype
from cdk_triton.config.declaration import BuildSpec, ModelSpec
from cdk_triton.errors import BuildError

skip_reason = artifact.no_skip


def warnings(spec: BuildSpec, m: ModelSpec, tools: dict[str, str]) -> list[str]:
    """A GPU-placed python model whose code names a device (``portability.python_warnings``)."""
    return portability.python_warnings(spec, m)


def check_source(spec: BuildSpec, m: ModelSpec) -> None:
    """Refuse files that import what the image lacks (the row's ``allowed_imports`` and the stdlib)."""
    if m.source and m.source.python:
        p = spec.resolve_path(m.source.python)
        compat.check_python_model(p if p.is_dir() else p.parent, name=m.name, allowed=m.row.allowed_imports)


def export_model(ctx: BuildContext, m: ModelSpec, tmp: Path) -> Exported:
    """Copy the python model into ``1/``, run it on the sample and write its config."""
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
    runner = PythonModelRunner(vdir / str(m.row.artifact), to_dict(cfg), name=m.name)
    fed = {**sample, **sequence_controls(m)}  # what Triton's sequence batcher adds, on a one-request sequence
    expected = runner(fed)
    check_deterministic(m, expected, runner(fed))
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
    return finish(m, tmp, sample, Made(cfg=cfg, expected=expected))


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
    return PythonModelRunner(entry / "1" / str(m.row.artifact), record.exported.config, name=m.name)
