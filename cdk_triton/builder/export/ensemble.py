"""The ensemble format's exporter (a composed format): a config.pbtxt that chains the steps, with
each step's tensor names as its own config states them, and the chain of built artifacts checked
against the chain of eager references (unless a step runs only on a GPU)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from cdk_triton.builder.context import ENSEMBLE_PLACEHOLDER, BuildContext, Exported
from cdk_triton.builder.export import artifact
from cdk_triton.builder.export.base import sample_record
from cdk_triton.builder.export.verify import artifact_runner as built_runner
from cdk_triton.builder.export.verify import chain, reference_runner
from cdk_triton.builder.parity import compare
from cdk_triton.builder.pbtxt import IoTensor, build_config, sha256_text, to_dict, to_pbtxt
from cdk_triton.builder.reference import Runner
from cdk_triton.builder.samples import sample_inputs
from cdk_triton.config.declaration import BuildSpec, ModelSpec

skip_reason = artifact.no_skip
warnings = artifact.no_warnings


def check_source(spec: BuildSpec, m: ModelSpec) -> None:
    """An ensemble has no source (its steps are checked on their own)."""


def export_model(ctx: BuildContext, m: ModelSpec, tmp: Path) -> Exported:
    """Write the ensemble's config and placeholder version folder; check the chain's parity."""
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
    if not any(ctx.spec.model(n).row.gpu_only for n in ctx.spec.closure(m.name)):
        actual = chain(ctx, m, lambda step: built_runner(ctx, step))(sample)
        parity = compare(m, expected, actual, what="the ensemble of built artifacts")
    names_in = {t.name: t.name for t in m.inputs}
    names_out = {t.name: t.name for t in m.outputs}
    return Exported(
        config=to_dict(cfg),
        config_sha256=sha256_text(text),
        io_names={"inputs": names_in, "outputs": names_out},
        steps=[s.model for s in m.steps],
        sample=sample_record(m, sample, expected, names_in, names_out),
        parity_max_abs_diff=parity,
    )


def artifact_runner(ctx: BuildContext, m: ModelSpec, entry: Path) -> Runner:
    """The steps' built artifacts, chained."""
    return chain(ctx, m, lambda step: built_runner(ctx, step))
