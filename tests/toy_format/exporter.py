"""The toy format's exporter (``cdk_triton.builder.export.base.Exporter``): a Linear layer's weights
as JSON, run with numpy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cdk_triton.builder.context import BuildContext, Exported
from cdk_triton.builder.export import artifact, check_io
from cdk_triton.builder.pbtxt import IoTensor
from cdk_triton.builder.reference import Runner
from cdk_triton.builder.samples import triton_dtype
from cdk_triton.config.declaration import ModelSpec

skip_reason = artifact.no_skip
warnings = artifact.no_warnings


def check_source(spec: Any, m: ModelSpec) -> None:
    """Nothing to refuse: any release's python backend runs numpy."""


def export_model(ctx: BuildContext, m: ModelSpec, tmp: Path) -> Exported:
    return artifact.export_model(ctx, m, tmp, write=_write)


def _write(ctx: BuildContext, m: ModelSpec, src: artifact.Source) -> artifact.Written:
    fc = src.module.fc
    weights = {"weight": fc.weight.detach().tolist(), "bias": fc.bias.detach().tolist()}
    path = src.version_dir / str(m.row.artifact)
    path.write_text(json.dumps(weights, sort_keys=True) + "\n")
    runner = _runner(path, m)
    observed = [
        IoTensor(name=t.name, dtype=triton_dtype(a.dtype), dims=tuple(a.shape[1:]))
        for t, a in zip(m.outputs, runner(src.sample).values(), strict=True)
    ]
    ins = [IoTensor(name=t.name, dtype=t.dtype, dims=t.shape) for t in m.inputs]
    outs = check_io(m, m.outputs, observed, group="outputs", what="the toy artifact")
    return artifact.Written(inputs=ins, outputs=outs, runner=runner, what="the toy artifact")


def _runner(path: Path, m: ModelSpec) -> Runner:
    import numpy as np

    weights = json.loads(path.read_text())
    w = np.asarray(weights["weight"], dtype=np.float32)
    b = np.asarray(weights["bias"], dtype=np.float32)

    def run(inputs: dict[str, Any]) -> dict[str, Any]:
        x = inputs[m.inputs[0].name]
        return {m.outputs[0].name: np.tanh(x @ w.T + b).astype(np.float32)}

    return run


def artifact_runner(ctx: BuildContext, m: ModelSpec, entry: Path) -> Runner:
    return _runner(entry / "1" / str(m.row.artifact), m)


def device_unavailable() -> str | None:
    """numpy runs wherever the check runs (the toy's "device" is the host)."""
    return None


def device_runner(torch: Any, m: ModelSpec, artifact_path: Path, device: str) -> tuple[Runner, bool]:
    """The toy artifact's numpy runner (torch's allocator does not hold it)."""
    return _runner(artifact_path, m), False
