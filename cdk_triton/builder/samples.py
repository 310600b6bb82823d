"""Sample inputs (deterministic from the declared seed) and KServe v2 JSON bodies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdk_triton.config.declaration import DTYPES, ModelSpec, TensorSpec

if TYPE_CHECKING:
    import numpy as np

#: default parity tolerance (atol, rtol) per output dtype.
DEFAULT_TOLERANCE: dict[str, tuple[float, float]] = {
    "FP32": (1e-4, 1e-3),
    "FP64": (1e-6, 1e-6),
    "FP16": (1e-2, 1e-2),
    "BF16": (5e-2, 5e-2),
}


def np_dtype(dtype: str) -> np.dtype[Any]:
    """The numpy dtype of a Triton dtype name (FP32 -> float32)."""
    import numpy as np

    if dtype == "BF16":
        return np.dtype("float32")
    return np.dtype(DTYPES[dtype])


def triton_dtype(dt: Any) -> str:
    """The Triton dtype name of a numpy dtype."""
    import numpy as np

    name = np.dtype(dt).name
    for k, v in DTYPES.items():
        if v == name:
            return k
    raise KeyError(name)


def random_tensor(
    t: TensorSpec, batch: int | None, rng: np.random.Generator, *, dims: tuple[int, ...] | None = None
) -> np.ndarray:
    """Random data for ``t`` (with a leading batch dim when ``batch`` is given) of ``dims``
    (default: the sample's dims)."""
    shape = ((batch,) if batch is not None else ()) + (dims or t.concrete_shape())
    dt = np_dtype(t.dtype)
    if t.dtype == "STRING":  # text: words of 2-8 lowercase letters, 3-12 words per element (UTF-8 bytes)
        import numpy as np

        letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
        texts = [
            " ".join(
                "".join(rng.choice(letters, int(rng.integers(2, 9)))) for _ in range(int(rng.integers(3, 13)))
            )
            for _ in range(int(np.prod(shape, dtype=np.int64)))
        ]
        return np.array([s.encode() for s in texts], dtype=object).reshape(shape)
    if t.dtype == "BOOL":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dt.kind == "f":
        low, high = t.range or (0.0, 1.0)
        return (rng.random(size=shape) * (high - low) + low).astype(dt)
    if dt.kind in "iu":
        default = (0, 256) if t.dtype == "UINT8" else (0, 100)
        low, high = t.range or default
        return rng.integers(int(low), int(high), size=shape).astype(dt)
    raise ValueError(f"cannot make sample data of type {t.dtype}")


def sample_inputs(spec: ModelSpec, *, batch: int | None = None, other: bool = False) -> dict[str, np.ndarray]:
    """The declared sample input of ``spec``: one random tensor per input from ``spec.sample.seed``.

    ``other``: every dynamic non-batch dim at its second parity size (``TensorSpec.other_shape``)."""
    import numpy as np

    rng = np.random.default_rng(spec.sample.seed)
    b = batch if batch is not None else (spec.sample.batch_size if spec.max_batch_size > 0 else None)
    return {t.name: random_tensor(t, b, rng, dims=t.other_shape() if other else None) for t in spec.inputs}


def has_other_size(spec: ModelSpec) -> bool:
    """Whether parity runs at a second size (some input has a dynamic dim with another size)."""
    return any(t.other_shape() is not None for t in spec.inputs)


#: The correlation id of the sample: a one-request sequence (start and end).
SAMPLE_SEQUENCE_ID = 1


def sequence_controls(spec: ModelSpec, *, batch: int | None = None) -> dict[str, np.ndarray]:
    """The control tensors Triton gives a sequence-batched model on the sample: a sequence of one
    request (START, END and READY 1, CORRID the sample's correlation id); empty without sequence batching."""
    import numpy as np

    if spec.sequence_batching is None:
        return {}
    b = batch if batch is not None else (spec.sample.batch_size if spec.max_batch_size > 0 else None)
    shape = (b, 1) if b is not None else (1,)
    ctl = spec.sequence_batching.control_inputs
    out = {name: np.ones(shape, np.int32) for kind, name in ctl.names.items() if kind != "corrid"}
    if ctl.corrid:
        dt = np_dtype(ctl.corrid_dtype)
        value = str(SAMPLE_SEQUENCE_ID).encode() if ctl.corrid_dtype == "STRING" else SAMPLE_SEQUENCE_ID
        out[ctl.corrid] = np.full(shape, value, dtype=dt)
    return out


def sequence_parameters(spec: ModelSpec) -> dict[str, Any]:
    """The KServe v2 request parameters of the sample of a sequence-batched model (a one-request
    sequence); empty without sequence batching."""
    if spec.sequence_batching is None:
        return {}
    return {"sequence_id": SAMPLE_SEQUENCE_ID, "sequence_start": True, "sequence_end": True}


def tolerance(spec: ModelSpec, dtype: str) -> tuple[float, float]:
    atol, rtol = DEFAULT_TOLERANCE.get(dtype, (0.0, 0.0))
    return (
        spec.sample.atol if spec.sample.atol is not None else atol,
        spec.sample.rtol if spec.sample.rtol is not None else rtol,
    )


def v2_tensors(
    arrays: dict[str, np.ndarray], names: list[tuple[str, str]] | None = None
) -> list[dict[str, Any]]:
    """KServe v2 JSON tensors ``[{"name","shape","datatype","data"}]`` (data flattened, row-major)."""
    out = []
    for key, arr in arrays.items():
        name = key
        text = arr.dtype == object  # STRING in model_config, BYTES in KServe v2, UTF-8 text in JSON
        out.append(
            {
                "name": name,
                "shape": [int(d) for d in arr.shape],
                "datatype": "BYTES" if text else triton_dtype(arr.dtype),
                "data": [v.decode() if isinstance(v, bytes) else str(v) for v in arr.reshape(-1)]
                if text
                else arr.reshape(-1).tolist(),
            }
        )
    return out


def json_text(data: Any) -> str:
    """The bytes a sample file holds: compact, sorted JSON and a newline."""
    return json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n"


def write_json_if_changed(path: Path, data: Any) -> bool:
    """Write ``data`` as JSON unless the file already holds exactly these bytes (atomic rename)."""
    text = json_text(data)
    try:  # one open and read (no stat first): a fleet's no-op build compares thousands
        with open(path, encoding="utf-8") as fh:
            if fh.read() == text:
                return False
    except (OSError, UnicodeDecodeError):
        pass  # missing, not a file or not text: written below
    from cdk_triton.builder import space

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with space.guard(path, len(text.encode())):
            tmp.write_text(text, "utf-8")
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    tmp.replace(path)
    return True
