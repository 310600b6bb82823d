"""The export step: every planned model that is not cached is exported, read back, checked against
its eager reference on the declared sample (parity) and committed to the cache (temp dir + rename)."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdk_triton.builder import compat, space
from cdk_triton.builder.context import (
    ENSEMBLE_PLACEHOLDER,
    BuildContext,
    Exported,
    ModelRecord,
    Resolved,
    SampleRecord,
    StepOutput,
    StepStatus,
)
from cdk_triton.builder.export import check_io
from cdk_triton.builder.export import onnx as onnx_export
from cdk_triton.builder.export import tensorrt as trt_export
from cdk_triton.builder.export import torchscript as ts_export
from cdk_triton.builder.export.verify import artifact_runner, chain, guarded, reference_runner
from cdk_triton.builder.package import check_tree, copy_model_dir, tree_digest
from cdk_triton.builder.parity import check_deterministic, compare
from cdk_triton.builder.pbtxt import (
    PLATFORMS,
    IoTensor,
    build_config,
    reconfigure,
    sha256_text,
    to_dict,
    to_pbtxt,
)
from cdk_triton.builder.python_model import PythonModelRunner
from cdk_triton.builder.reference import Runner, build_eager
from cdk_triton.builder.samples import (
    has_other_size,
    sample_inputs,
    sequence_controls,
    sequence_parameters,
    tolerance,
    triton_dtype,
    v2_tensors,
)
from cdk_triton.config.declaration import ModelSpec
from cdk_triton.errors import BuildError

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True, kw_only=True, slots=True)
class _Checked:
    """A model's config, its reference outputs on the sample and what the artifact check found."""

    cfg: Any
    expected: dict[str, np.ndarray]
    parity: float | None = None
    onnx: dict[str, Any] | None = None
    plans: list[dict[str, Any]] | None = None


def export_models(ctx: BuildContext) -> StepOutput:
    """Export every planned model without a cached record, in dependency order."""
    todo = [p for p in ctx.resolved.values() if p.record is None and p.skip_reason is None]
    ctx.reporter.start("export", len(todo), "models")
    for p in ctx.resolved.values():  # planned in dependency order
        if p.record is not None or p.skip_reason is not None:
            continue
        ctx.reporter.advance("export", 0, what=p.spec.name)
        if p.reuse is not None:
            p.record = _reconfigure(ctx, p, p.reuse)
            ctx.reconfigured.add(p.spec.name)
        else:
            p.record = _export(ctx, p)
            ctx.fresh.add(p.spec.name)
        ctx.reporter.advance("export", 1, what=p.spec.name)
    ctx.reporter.finish("export")
    ctx.result.reconfigured = len(ctx.reconfigured)
    ctx.result.skipped_models = {n: p.skip_reason for n, p in ctx.resolved.items() if p.skip_reason}
    for n, why in ctx.result.skipped_models.items():
        ctx.warn(f"model '{n}' skipped (optional): {why}")
    return StepOutput(
        step="export",
        status=StepStatus.OK if todo else StepStatus.UP_TO_DATE,
        done=len(ctx.fresh),
        up_to_date=sum(1 for p in ctx.resolved.values() if p.record is not None) - len(todo),
    )


def verify_members(ctx: BuildContext, names: list[str]) -> None:
    """Hash the cache entries of ``names`` in full before they are packaged (once per build); a corrupt
    entry is exported again, with a warning naming it."""
    for n in names:
        p = ctx.resolved[n]
        if n in ctx.verified or n in ctx.fresh or n in ctx.reconfigured or p.record is None:
            continue
        problem = check_tree(ctx.cache.entry_dir(n, p.key), p.record.files, None, None, full=True)
        if problem is not None:
            ctx.warn(
                f"cache entry {ctx.cache.entry_dir(n, p.key)} of model '{n}' is corrupt ({problem}): rebuilding it"
            )
            p.record = _export(ctx, p)
            ctx.fresh.add(n)
        ctx.verified.add(n)


def _reconfigure(ctx: BuildContext, p: Resolved, cached: ModelRecord) -> ModelRecord:
    """A cached artifact with another configuration: copy it, regenerate config.pbtxt (no export)."""
    m = p.spec
    tmp = ctx.cache.new_temp_dir(m.name)
    try:
        shutil.rmtree(tmp)
        cfg = reconfigure(cached.exported.config, m)
        text = to_pbtxt(cfg)
        with space.guard(ctx.cache.entry_dir(m.name, p.key), lambda: space.tree_bytes(tmp)):
            copy_model_dir(ctx.cache.entry_dir(m.name, cached.source_sha256), tmp)
            (tmp / "config.pbtxt").unlink(missing_ok=True)  # a hard link to the cached file: replace it
            (tmp / "config.pbtxt").write_text(text, "utf-8")
        made = replace(cached.exported, config=to_dict(cfg), config_sha256=sha256_text(text))
        record = replace(cached, source_sha256=p.key, files=tree_digest(tmp)[1], exported=made)
        ctx.cache.commit(m.name, p.key, tmp, record.to_dict())
        return record
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _export(ctx: BuildContext, p: Resolved) -> ModelRecord:
    m = p.spec
    tmp = ctx.cache.new_temp_dir(m.name)
    try:
        with space.guard(ctx.cache.entry_dir(m.name, p.key), lambda: space.tree_bytes(tmp)):
            made = _export_ensemble(ctx, m, tmp) if m.is_ensemble else _export_model(ctx, m, tmp)
        record = ModelRecord(
            name=m.name,
            format=m.format,
            source_sha256=p.key,
            tool_versions=ctx.tools,
            platform=PLATFORMS[m.format][0] if m.format != "python" else None,
            backend=PLATFORMS[m.format][1] if m.format != "ensemble" else None,
            files=tree_digest(tmp)[1],
            exported=made,
            artifact_key=p.artifact_key,
        )
        ctx.cache.commit(m.name, p.key, tmp, record.to_dict())
        return record
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _export_model(ctx: BuildContext, m: ModelSpec, tmp: Path) -> Exported:
    vdir = tmp / "1"
    vdir.mkdir()
    sample = sample_inputs(m)
    if m.sequence_batching is not None and m.format != "python":
        raise BuildError(
            f"model '{m.name}': sequence_batching is built for python models only for now; a {m.format} model "
            "would also take the control and state tensors Triton supplies, which the export and parity check "
            "do not feed yet; keep the state in a python model (a dict per correlation id)",
            code="SequenceBatchingUnsupported",
        )
    if m.format == "python":
        checked = _export_python(ctx, m, vdir, sample)
    else:
        checked = _export_torch_or_onnx(ctx, m, tmp, sample)
    cfg = checked.cfg
    text = to_pbtxt(cfg)
    (tmp / "config.pbtxt").write_text(text, "utf-8")
    in_names = {t.name: c.name for t, c in zip(m.inputs, cfg.input, strict=True)}
    out_names = {t.name: c.name for t, c in zip(m.outputs, cfg.output, strict=True)}
    return Exported(
        config=to_dict(cfg),
        config_sha256=sha256_text(text),
        io_names={"inputs": in_names, "outputs": out_names},
        sample=_sample_record(m, sample, checked.expected, in_names, out_names),
        parity_max_abs_diff=checked.parity,
        onnx=checked.onnx,
        plans=checked.plans,
    )


def _export_python(ctx: BuildContext, m: ModelSpec, vdir: Path, sample: dict[str, np.ndarray]) -> _Checked:
    """Copy a python model into the version folder and run it (no parity: it is its own reference)."""
    assert m.source is not None
    path = ctx.spec.resolve_path(m.source.python or "")
    if path.is_dir():
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
    else:
        shutil.copyfile(path, vdir / "model.py")
    if not (vdir / "model.py").is_file():
        raise BuildError(f"python model '{m.name}': no model.py in {path}", code="PythonModelInvalid")
    ins = [IoTensor(name=t.name, dtype=t.dtype, dims=t.shape) for t in m.inputs]
    outs = [IoTensor(name=t.name, dtype=t.dtype, dims=t.shape) for t in m.outputs]
    cfg = build_config(m, inputs=ins, outputs=outs)
    runner = PythonModelRunner(vdir / "model.py", to_dict(cfg), name=m.name)
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
    return _Checked(cfg=cfg, expected=expected)


def _export_torch_or_onnx(
    ctx: BuildContext, m: ModelSpec, tmp: Path, sample: dict[str, np.ndarray]
) -> _Checked:
    """Export (or copy) a TorchScript / ONNX / TensorRT model, read it back and check parity."""
    src = m.source
    assert src is not None
    vdir = tmp / "1"
    reference = guarded(reference_runner(ctx, m), m)
    expected = reference(sample)
    check_deterministic(m, expected, reference(sample))
    # dynamic dims are exported at their second size (>= 2, so the exporter keeps them free)
    other = has_other_size(m)
    export_sample = (
        sample_inputs(m, batch=min(2, m.max_batch_size), other=other)
        if m.max_batch_size > 0
        else (sample_inputs(m, other=True) if other else sample)
    )
    if m.max_batch_size > 0 and src.factory:
        _check_batch_dim(m, reference(export_sample), export_sample)
    module = build_eager(ctx.spec, m) if src.factory else None
    onnx_info = plans = cc_files = None
    if m.format == "torchscript":
        target = vdir / "model.pt"
        if module is not None:
            ts_export.export(module, m, export_sample, target)
        else:
            shutil.copyfile(ctx.spec.resolve_path(src.torchscript or ""), target)
        ins, outs, art = ts_export.inspect(target, m, sample)
    else:
        onnx_file = (vdir / "model.onnx") if m.format == "onnx" else (tmp.parent / f"{tmp.name}.onnx")
        if module is not None:
            opset = compat.choose_opset(
                ctx.spec.triton_version, m.onnx.opset, torch_max=onnx_export.torch_max_opset()
            )
            onnx_export.export(module, m, export_sample, onnx_file, opset=opset)
        else:
            shutil.copyfile(ctx.spec.resolve_path(src.onnx or ""), onnx_file)
        ins, outs, onnx_info = onnx_export.inspect(onnx_file, m, triton_version=ctx.spec.triton_version)
        art = onnx_export.load_runner(onnx_file, m)
    what = f"the {m.format} artifact" if m.format != "tensorrt" else "the ONNX export feeding TensorRT"
    worst = compare(m, expected, art(sample), what=what)
    if other:
        worst = max(worst, _parity_at_other_size(m, reference, art, what))
    parity: float | None = worst
    if m.format == "tensorrt":
        cc_files, plans = _plans(ctx, m, onnx_file, ins, vdir)
        onnx_file.unlink(missing_ok=True)
        parity = None  # no CPU runtime for plans: parity ran on the ONNX export
    cfg = build_config(m, inputs=ins, outputs=outs, cc_model_filenames=cc_files)
    return _Checked(cfg=cfg, expected=expected, parity=parity, onnx=onnx_info, plans=plans)


def _parity_at_other_size(m: ModelSpec, reference: Runner, art: Runner, what: str) -> float:
    """Parity with every dynamic dim at its second size: the artifact must not have fixed it."""
    other = sample_inputs(m, other=True)
    sizes = {k: list(v.shape) for k, v in other.items()}
    try:
        actual = art(other)
    except BuildError:
        raise
    except Exception as exc:
        raise BuildError(
            f"model '{m.name}': {what} fails on the input shapes {sizes} (a dynamic dim at its second size): "
            f"{exc!r}; the export fixed a dim declared -1",
            code="ParityMismatch",
        ) from exc
    return compare(m, reference(other), actual, what=f"{what} (inputs {sizes})")


def _check_batch_dim(m: ModelSpec, out: dict[str, np.ndarray], batch_sample: dict[str, np.ndarray]) -> None:
    n = next(iter(batch_sample.values())).shape[0]
    for t in m.outputs:
        arr = out[t.name]
        if arr.ndim == 0 or arr.shape[0] != n:
            raise BuildError(
                f"model '{m.name}': output '{t.name}' has shape {list(arr.shape)} for a batch of "
                f"{n}: no leading batch dim, but max_batch_size is "
                f"{m.max_batch_size}; set max_batch_size: 0 and declare full shapes, or batch the model",
                code="NoBatchDim",
            )


def _plans(
    ctx: BuildContext, m: ModelSpec, onnx_file: Path, ins: list[IoTensor], vdir: Path
) -> tuple[dict[str, str] | None, list[dict[str, Any]]]:
    """Build a plan on this GPU (when there is one) and add the declared prebuilt plans.

    Returns (cc_model_filenames, the metadata of every plan)."""
    plans: list[tuple[Path, dict[str, Any]]] = []
    try:
        trt_export.require_tensorrt()
        has_gpu = True
    except BuildError:
        if not m.tensorrt.plans:
            raise
        has_gpu = False
    if has_gpu:
        built = onnx_file.with_suffix(".plan")
        cache_file = Path(m.tensorrt.timing_cache) if m.tensorrt.timing_cache else ctx.out / "tensorrt.cache"
        meta = trt_export.build_plan(onnx_file, m, ins, built, timing_cache=cache_file)
        (built.parent / trt_export.METADATA_FILE).unlink(missing_ok=True)
        plans.append((built, meta))
    for d in m.tensorrt.plans:
        plans.append(trt_export.load_plan_dir(ctx.spec.resolve_path(d), model=m.name))
    names, cc_files = trt_export.plan_layout([meta for _, meta in plans], model=m.name)
    for (src, meta), name in zip(plans, names, strict=True):
        shutil.copyfile(src, vdir / name)
        stem = name.removesuffix(".plan").replace("model", "plan", 1)
        (vdir / f"{stem}.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    if has_gpu:
        plans[0][0].unlink(missing_ok=True)
    return cc_files, [meta for _, meta in plans]


def _export_ensemble(ctx: BuildContext, m: ModelSpec, tmp: Path) -> Exported:
    (tmp / "1").mkdir()
    (tmp / "1" / ENSEMBLE_PLACEHOLDER).write_text(
        "Triton loads an ensemble only when its version folder exists; this file keeps it in S3.\n"
    )
    steps = []
    for s in m.steps:
        rec = ctx.resolved[s.model].record
        names = rec.exported.io_names if rec is not None else {"inputs": {}, "outputs": {}}
        steps.append(
            replace(
                s,
                input_map={names["inputs"].get(k, k): v for k, v in s.input_map.items()},
                output_map={names["outputs"].get(k, k): v for k, v in s.output_map.items()},
            )
        )
    ins = [IoTensor(name=t.name, dtype=t.dtype, dims=t.shape) for t in m.inputs]
    outs = [IoTensor(name=t.name, dtype=t.dtype, dims=t.shape) for t in m.outputs]
    cfg = build_config(replace(m, steps=tuple(steps)), inputs=ins, outputs=outs)
    text = to_pbtxt(cfg)
    (tmp / "config.pbtxt").write_text(text, "utf-8")
    sample = sample_inputs(m)
    expected = chain(ctx, m, lambda step: reference_runner(ctx, step))(sample)
    parity = None
    if all(ctx.spec.model(n).format != "tensorrt" for n in ctx.spec.closure(m.name)):
        actual = chain(ctx, m, lambda step: artifact_runner(ctx, step))(sample)
        parity = compare(m, expected, actual, what="the ensemble of built artifacts")
    names_in = {t.name: t.name for t in m.inputs}
    names_out = {t.name: t.name for t in m.outputs}
    return Exported(
        config=to_dict(cfg),
        config_sha256=sha256_text(text),
        io_names={"inputs": names_in, "outputs": names_out},
        steps=[s.model for s in m.steps],
        sample=_sample_record(m, sample, expected, names_in, names_out),
        parity_max_abs_diff=parity,
    )


def _sample_record(
    m: ModelSpec,
    sample: dict[str, np.ndarray],
    expected: dict[str, np.ndarray],
    in_names: dict[str, str],
    out_names: dict[str, str],
) -> SampleRecord:
    tols = [tolerance(m, t.dtype) for t in m.outputs]
    request: dict[str, Any] = {"inputs": v2_tensors({in_names[k]: v for k, v in sample.items()})}
    if m.sequence_batching is not None:
        request["parameters"] = sequence_parameters(m)
    return SampleRecord(
        request=request,
        response={"outputs": v2_tensors({out_names[t.name]: expected[t.name] for t in m.outputs})},
        atol=max(a for a, _ in tols),
        rtol=max(r for _, r in tols),
    )
