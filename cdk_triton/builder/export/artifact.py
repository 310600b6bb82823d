"""The export of an ``exported`` format (TorchScript, ONNX, TensorRT, a registered one): the steps all
of them share around the format's own writer.

1. run the eager reference on the declared sample (twice: it must be deterministic);
2. the format's ``write`` exports the factory's module (or copies the given file) and reads it back:
   the config's tensors and a CPU runner of the artifact;
3. parity: the artifact against the reference, also at the second size of every dynamic dim;
4. the format's ``after`` (TensorRT builds its plans from the checked ONNX export);
5. config.pbtxt.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdk_triton.builder.activations import activation_peak
from cdk_triton.builder.context import BuildContext, Exported
from cdk_triton.builder.export.base import Made, finish
from cdk_triton.builder.export.verify import guarded, reference_runner
from cdk_triton.builder.parity import check_deterministic, compare
from cdk_triton.builder.pbtxt import IoTensor, build_config
from cdk_triton.builder.reference import Runner, build_eager
from cdk_triton.builder.samples import has_other_size, sample_inputs
from cdk_triton.config.declaration import ModelSpec
from cdk_triton.errors import BuildError

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True, kw_only=True, slots=True)
class Source:
    """What a format's writer gets: the eager module (a factory; None for a file source), the
    declared sample, the sample it exports with, and where to write."""

    module: Any
    sample: dict[str, np.ndarray]
    export_sample: dict[str, np.ndarray]
    version_dir: Path
    tmp: Path


@dataclass(frozen=True, kw_only=True, slots=True)
class Written:
    """What a format's writer made: the config's tensors, a CPU runner of the artifact and how
    parity names it; ONNX formats add the file's opset / IR record and the file itself."""

    inputs: list[IoTensor]
    outputs: list[IoTensor]
    runner: Runner
    what: str
    onnx: dict[str, Any] | None = None
    onnx_file: Path | None = None
    device_pins: list[dict[str, str]] | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class After:
    """What a format adds after parity: per-GPU file names and plan metadata; ``parity`` False when
    the served artifact is not the one parity ran on."""

    cc_model_filenames: dict[str, str] | None = None
    plans: list[dict[str, Any]] | None = None
    parity: bool = True


Writer = Callable[[BuildContext, ModelSpec, Source], Written]
Finisher = Callable[[BuildContext, ModelSpec, Written, Path], After]


def export_model(
    ctx: BuildContext, m: ModelSpec, tmp: Path, *, write: Writer, after: Finisher | None = None
) -> Exported:
    """Export ``m`` into ``tmp`` with the format's ``write`` (and ``after``) and check its parity."""
    if m.sequence_batching is not None:
        raise BuildError(
            f"model '{m.name}': sequence_batching is built for python models only for now; a {m.format} model "
            "would also take the control and state tensors Triton supplies, which the export and parity check "
            "do not feed yet; keep the state in a python model (a dict per correlation id)",
            code="SequenceBatchingUnsupported",
        )
    vdir = tmp / "1"
    vdir.mkdir()
    sample = sample_inputs(m)
    src = m.source
    assert src is not None
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
    written = write(
        ctx, m, Source(module=module, sample=sample, export_sample=export_sample, version_dir=vdir, tmp=tmp)
    )
    activations = _activations(module, m)
    worst = compare(m, expected, written.runner(sample), what=written.what)
    if other:
        worst = max(worst, _parity_at_other_size(m, reference, written.runner, written.what))
    added = after(ctx, m, written, vdir) if after is not None else After()
    cfg = build_config(
        m, inputs=written.inputs, outputs=written.outputs, cc_model_filenames=added.cc_model_filenames
    )
    made = Made(
        cfg=cfg,
        expected=expected,
        parity=worst if added.parity else None,
        onnx=written.onnx,
        plans=added.plans,
        activations=activations,
        device_pins=written.device_pins,
    )
    return finish(m, tmp, sample, made)


def _activations(module: Any, m: ModelSpec) -> dict[str, Any] | None:
    """The activation peak of the eager module on the declared inputs at ``max_batch_size`` (after the
    export, so the count cannot touch what was exported); None without a module or when it cannot run."""
    if module is None:
        return None
    batch = m.max_batch_size if m.max_batch_size > 0 else None  # 0: the declared shapes are whole
    peak = activation_peak(module, m, sample_inputs(m, batch=batch))
    return {"peak_bytes": peak.peak_bytes, "method": peak.method} if peak is not None else None


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


def no_skip(spec: Any, m: ModelSpec) -> str | None:
    """``Exporter.skip_reason`` of a format every machine can build."""
    return None


def no_warnings(spec: Any, m: ModelSpec, tools: dict[str, str]) -> list[str]:
    """``Exporter.warnings`` of a format with nothing to tell."""
    return []
