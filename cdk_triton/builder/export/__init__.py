"""One exporter module per format (the ``Exporter`` protocol of ``base.py``; the format table's row
names the module): torchscript, onnx, tensorrt, python, ensemble. ``step.py`` dispatches to them.
torch / onnx / tensorrt are imported inside their functions only."""

from __future__ import annotations

from cdk_triton.builder.pbtxt import IoTensor
from cdk_triton.config.declaration import ModelSpec, TensorSpec
from cdk_triton.errors import BuildError


def check_io(
    spec: ModelSpec, declared: tuple[TensorSpec, ...], observed: list[IoTensor], *, group: str, what: str
) -> list[IoTensor]:
    """Cross-check the artifact's tensors with the declaration; return the config's tensors.

    Dims: a fixed artifact dim wins over a declared -1; a declared fixed dim must match the artifact's
    fixed dim; a dynamic artifact dim takes the declared value.
    """
    if len(declared) != len(observed):
        raise BuildError(
            f"model '{spec.name}': {what} has {len(observed)} {group} ({[o.name for o in observed]}), the declaration "
            f"{len(declared)} ({[d.name for d in declared]})",
            code="TensorCountMismatch",
        )
    out: list[IoTensor] = []
    for i, (d, o) in enumerate(zip(declared, observed, strict=True)):
        if o.dtype != d.dtype:
            raise BuildError(
                f"model '{spec.name}': {group}[{i}] '{d.name}' is declared {d.dtype} but {what} has {o.dtype}; "
                f"declare dtype: {o.dtype} or cast inside the model",
                code="DtypeMismatch",
            )
        if len(o.dims) != len(d.shape) or any(
            a != -1 and b != -1 and a != b for a, b in zip(o.dims, d.shape, strict=False)
        ):
            raise BuildError(
                f"model '{spec.name}': {group}[{i}] '{d.name}' is declared with shape {list(d.shape)} but {what} has "
                f"{list(o.dims)} (without the batch dim{'' if spec.max_batch_size > 0 else '; max_batch_size is 0'}); "
                f"declare shape: {list(o.dims)}",
                code="ShapeMismatch",
            )
        dims = tuple(a if a != -1 else b for a, b in zip(o.dims, d.shape, strict=True))
        out.append(IoTensor(name=o.name, dtype=o.dtype, dims=dims))
    return out
