"""The onnx format's exporter: torch.onnx.export of the factory's module (dynamic batch dim, named
outputs, one file unless > 2 GB), or a copy of the given ONNX file. The tensorrt exporter starts
from the same ONNX export (:func:`write_onnx`)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdk_triton.builder import compat
from cdk_triton.builder.compat import check_onnx_model
from cdk_triton.builder.context import BuildContext, Exported
from cdk_triton.builder.export import artifact, check_io
from cdk_triton.builder.parallel import RECORD_THREADS
from cdk_triton.builder.pbtxt import IoTensor
from cdk_triton.builder.reference import Runner
from cdk_triton.config.declaration import BuildSpec, ModelSpec, TensorSpec
from cdk_triton.errors import BuildError

if TYPE_CHECKING:
    import numpy as np

TWO_GB = 2 * 1024**3

#: onnx.TensorProto elem type -> Triton dtype
_ONNX_TYPES = {
    1: "FP32",
    2: "UINT8",
    3: "INT8",
    4: "UINT16",
    5: "INT16",
    6: "INT32",
    7: "INT64",
    8: "STRING",
    9: "BOOL",
    10: "FP16",
    11: "FP64",
    12: "UINT32",
    13: "UINT64",
    16: "BF16",
}


def torch_max_opset() -> int:
    """The highest opset torch's exporter writes here."""
    try:
        from torch.onnx._constants import ONNX_MAX_OPSET

        return int(ONNX_MAX_OPSET)
    except Exception:
        return 20


def export(
    module: Any, spec: ModelSpec, sample: dict[str, np.ndarray], out_file: Path, *, opset: int
) -> None:
    """Export ``module`` to ``out_file`` (plus ``<file>.data`` only for models over 2 GB)."""
    import numpy as np
    import torch

    args = tuple(torch.from_numpy(np.ascontiguousarray(sample[t.name])) for t in spec.inputs)
    size = sum(p.numel() * p.element_size() for p in module.parameters()) + sum(
        b.numel() * b.element_size() for b in module.buffers()
    )
    kwargs: dict[str, Any] = {
        "input_names": [t.name for t in spec.inputs],
        "output_names": [t.name for t in spec.outputs],
        "opset_version": opset,
        "external_data": size >= TWO_GB,
    }
    if spec.onnx.exporter == "dynamo":
        kwargs["dynamo"] = True
        shapes = dynamic_shapes(module, spec)
        if shapes is not None:
            kwargs["dynamic_shapes"] = shapes
    else:
        kwargs["dynamo"] = False
        axes = dynamic_axes(spec)
        if axes:
            kwargs["dynamic_axes"] = axes
    import contextlib
    import io
    import logging
    import warnings

    logging.getLogger("torch.onnx").setLevel(logging.ERROR)
    try:
        with torch.no_grad(), contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            torch.onnx.export(module, args, str(out_file), verbose=False, **kwargs)
    except Exception as exc:
        raise BuildError(
            f"model '{spec.name}': torch.onnx.export failed: {exc!r}", code="ExportFailed"
        ) from exc
    if not out_file.is_file():
        raise BuildError(f"model '{spec.name}': torch.onnx.export wrote no file", code="ExportFailed")
    strip_source_locations(out_file)


def _axes(spec: ModelSpec, t: TensorSpec) -> list[int]:
    """The dynamic axes of a tensor as exported: the batch dim (0) when batching, then each -1."""
    offset = 1 if spec.max_batch_size > 0 else 0
    return ([0] if offset else []) + [a + offset for a in t.dynamic_axes]


def dynamic_axes(spec: ModelSpec) -> dict[str, dict[int, str]]:
    """The legacy exporter's ``dynamic_axes``: every dynamic axis of every input and output, by name."""
    out = {}
    for t in (*spec.inputs, *spec.outputs):
        axes = _axes(spec, t)
        if axes:
            out[t.name] = {
                a: "batch" if a == 0 and spec.max_batch_size > 0 else f"{t.name}_{a}" for a in axes
            }
    return out


def forward_arg_names(module: Any, count: int) -> list[str] | None:
    """The names of the first ``count`` positional parameters of ``module.forward`` (None when it takes
    ``*args`` or fewer named parameters)."""
    import inspect as pyinspect

    try:
        params = list(pyinspect.signature(module.forward).parameters.values())
    except (TypeError, ValueError):
        return None
    named = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(named) < count:
        return None
    return [p.name for p in named[:count]]


def dynamic_shapes(module: Any, spec: ModelSpec) -> dict[str, Any] | tuple[Any, ...] | None:
    """The dynamo exporter's ``dynamic_shapes``: ``{forward() arg name: {axis: Dim.DYNAMIC}}`` (a tuple
    when forward() takes ``*args``); None when no axis is dynamic."""
    from torch.export import Dim

    per_input = [{a: Dim.DYNAMIC for a in _axes(spec, t)} or None for t in spec.inputs]
    if not any(per_input):
        return None
    names = forward_arg_names(module, len(spec.inputs))
    return dict(zip(names, per_input, strict=True)) if names else tuple(per_input)


def strip_source_locations(path: Path) -> None:
    """Drop the Python stack traces torch writes into node metadata and doc strings.

    They name absolute paths (the factory's file, site-packages), so the same model built in another
    checkout or venv would get other bytes (and another S3 key). They do not affect inference.
    """
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    changed = False

    def clean(nodes: Any) -> None:
        nonlocal changed
        for node in nodes:
            keep = [p for p in node.metadata_props if not p.key.endswith("stack_trace")]
            if len(keep) != len(node.metadata_props) or node.doc_string:
                changed = True
                del node.metadata_props[:]
                node.metadata_props.extend(keep)
                node.doc_string = ""
            for attr in node.attribute:
                for g in [attr.g] if attr.HasField("g") else list(attr.graphs):
                    clean(g.node)

    clean(model.graph.node)
    for fn in model.functions:
        clean(fn.node)
    if changed:
        onnx.save(model, str(path))


def inspect(
    path: Path, spec: ModelSpec, *, triton_version: str
) -> tuple[list[IoTensor], list[IoTensor], dict[str, Any]]:
    """Config inputs/outputs read from the ONNX graph, cross-checked with the declaration."""
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    try:
        onnx.checker.check_model(str(path))
    except Exception as exc:
        raise BuildError(
            f"model '{spec.name}': {path.name} fails onnx.checker: {exc}", code="OnnxInvalid"
        ) from exc
    opset, ir = check_onnx_model(model, triton_version, name=spec.name)
    inits = {i.name for i in model.graph.initializer}
    graph_in = [v for v in model.graph.input if v.name not in inits]

    def tensors(values: Any, group: str) -> list[IoTensor]:
        out = []
        for v in values:
            tt = v.type.tensor_type
            dims = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else -1 for d in tt.shape.dim]
            if spec.max_batch_size > 0:
                if not dims or dims[0] != -1:
                    raise BuildError(
                        f"model '{spec.name}': {group} '{v.name}' has shape {dims} without a dynamic batch dim, but "
                        f"max_batch_size is {spec.max_batch_size}; set max_batch_size: 0 (and declare the full shape) "
                        "or export with a dynamic batch dim",
                        code="NoBatchDim",
                    )
                dims = dims[1:]
            out.append(
                IoTensor(
                    name=v.name, dtype=_ONNX_TYPES.get(tt.elem_type, f"onnx:{tt.elem_type}"), dims=tuple(dims)
                )
            )
        return out

    obs_in, obs_out = tensors(graph_in, "input"), tensors(model.graph.output, "output")
    for group, declared, observed in (("inputs", spec.inputs, obs_in), ("outputs", spec.outputs, obs_out)):
        dn, on = [t.name for t in declared], [t.name for t in observed]
        if sorted(dn) != sorted(on) and len(dn) == len(on):
            raise BuildError(
                f"model '{spec.name}': the ONNX graph's {group} are {on}, the declaration says {dn}; "
                "declare the graph's names",
                code="TensorNameMismatch",
            )
    obs_in, obs_out = _declared_order(obs_in, spec.inputs), _declared_order(obs_out, spec.outputs)
    ins = check_io(spec, spec.inputs, obs_in, group="inputs", what="the ONNX graph")
    outs = check_io(spec, spec.outputs, obs_out, group="outputs", what="the ONNX graph")
    _check_dynamic_kept(spec, spec.inputs, ins, "inputs")
    return ins, outs, {"opset": opset, "ir_version": ir}


def _declared_order(observed: list[IoTensor], declared: tuple[TensorSpec, ...]) -> list[IoTensor]:
    """The graph's tensors in the declaration's order (an undeclared one keeps its graph position)."""
    names = [d.name for d in declared]
    position = {t.name: i for i, t in enumerate(observed)}
    return sorted(observed, key=lambda t: names.index(t.name) if t.name in names else position[t.name])


def _check_dynamic_kept(
    spec: ModelSpec, declared: tuple[TensorSpec, ...], seen: list[IoTensor], group: str
) -> None:
    """A dim declared -1 must be dynamic in the graph: a fixed one would refuse every other size."""
    for i, (d, o) in enumerate(zip(declared, seen, strict=True)):
        fixed = [a for a in d.dynamic_axes if o.dims[a] != -1]
        if fixed:
            raise BuildError(
                f"model '{spec.name}': {group}[{i}] '{d.name}' is declared with shape {list(d.shape)} but the ONNX "
                f"graph fixes it to {list(o.dims)} (without the batch dim); export the graph with dynamic axes "
                f"there, or declare shape: {list(o.dims)}",
                code="ShapeMismatch",
            )


def load_runner(path: Path, spec: ModelSpec) -> Runner:
    """An onnxruntime CPU session; outputs keyed by the declared names."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.intra_op_num_threads = RECORD_THREADS  # outputs never depend on --jobs or the cores
    opts.inter_op_num_threads = RECORD_THREADS
    sess = ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"])
    out_names = [t.name for t in spec.outputs]

    def run(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        import numpy as np

        feed = {t.name: np.ascontiguousarray(inputs[t.name]) for t in spec.inputs}
        res = sess.run(out_names, feed)
        return dict(zip(out_names, res, strict=True))

    return run


# ---------------------------------------------------------------------------- the Exporter protocol

skip_reason = artifact.no_skip
warnings = artifact.no_warnings


def check_source(spec: BuildSpec, m: ModelSpec) -> None:
    """A declared ``onnx.opset`` the target release's ONNX Runtime cannot load is refused."""
    if m.onnx.opset is not None:
        compat.check_onnx_opset(
            m.onnx.opset, None, spec.triton_version, what=f"model '{m.name}' (onnx.opset)"
        )


def export_model(ctx: BuildContext, m: ModelSpec, tmp: Path) -> Exported:
    """Export the factory's module (or copy the file) to ``1/model.onnx`` and check its parity."""
    return artifact.export_model(ctx, m, tmp, write=_write)


def _write(ctx: BuildContext, m: ModelSpec, src: artifact.Source) -> artifact.Written:
    return write_onnx(ctx, m, src, src.version_dir / str(m.row.artifact), what=f"the {m.format} artifact")


def write_onnx(
    ctx: BuildContext, m: ModelSpec, src: artifact.Source, onnx_file: Path, *, what: str
) -> artifact.Written:
    """Export (or copy) the ONNX file to ``onnx_file`` and read it back with ONNX Runtime."""
    if src.module is not None:
        opset = compat.choose_opset(ctx.spec.triton_version, m.onnx.opset, torch_max=torch_max_opset())
        export(src.module, m, src.export_sample, onnx_file, opset=opset)
    else:
        assert m.source is not None
        shutil.copyfile(ctx.spec.resolve_path(m.source.onnx or ""), onnx_file)
    ins, outs, info = inspect(onnx_file, m, triton_version=ctx.spec.triton_version)
    runner = load_runner(onnx_file, m)
    return artifact.Written(
        inputs=ins, outputs=outs, runner=runner, what=what, onnx=info, onnx_file=onnx_file
    )


def device_unavailable() -> str | None:
    """Why ONNX cannot run on CUDA here: onnxruntime without the CUDAExecutionProvider."""
    from cdk_triton.builder import device_parity

    if device_parity.onnx_cuda_session_available():
        return None
    return "ONNX on CUDA needs onnxruntime-gpu (CUDAExecutionProvider), not installed here"


def device_runner(torch: Any, m: ModelSpec, artifact_path: Path, device: str) -> tuple[Runner, bool]:
    """The ONNX artifact in an onnxruntime session on CUDA (outside torch's allocator)."""
    from cdk_triton.builder import device_parity

    session = device_parity.onnx_cuda_session(str(artifact_path))
    assert session is not None  # gpu_check.can_check asked device_unavailable() first
    names = [t.name for t in m.outputs]

    def run(inputs: dict[str, Any]) -> dict[str, Any]:
        return dict(zip(names, session.run(names, {t.name: inputs[t.name] for t in m.inputs}), strict=True))

    return run, False


def artifact_runner(ctx: BuildContext, m: ModelSpec, entry: Path) -> Runner:
    """The built ``1/model.onnx`` on CPU (ONNX Runtime)."""
    return load_runner(entry / "1" / str(m.row.artifact), m)
