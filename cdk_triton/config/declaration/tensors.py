"""Tensors: one model input or output (name, dtype, shape) and the sample data it gets."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cdk_triton.config.declaration.vocabulary import DTYPES
from cdk_triton.config.parse import Errors, check_keys, closest, is_mapping, typed


@dataclass(frozen=True, kw_only=True, slots=True)
class TensorSpec:
    """One model input or output.

    Attributes:
        name: the tensor name in config.pbtxt (TorchScript models are renamed ``INPUT__n``/``OUTPUT__n``
            unless the name already has that form).
        dtype: a Triton data type without ``TYPE_`` (FP32, UINT8, INT64, ...).
        shape: dims without the batch dim when max_batch_size > 0; -1 for a dynamic dim.
        sample_shape: concrete dims used for the sample/warmup data where ``shape`` has -1.
            Default: each -1 becomes 1.
        range: ``(low, high)`` of the random sample data (integers: high exclusive).
            Default: FP [0, 1), UINT8 [0, 256), other integers [0, 100), BOOL {0, 1}.
        shape_range: the sizes each dynamic (-1) dim takes: ``{min, opt, max}``, three lists parallel
            to ``shape`` (a fixed dim repeats its size). TensorRT builds its optimization profile
            from it (required there); parity also runs at ``max`` (or ``min``). Default: none.
    """

    name: str
    dtype: str
    shape: tuple[int, ...]
    sample_shape: tuple[int, ...] | None = None
    range: tuple[float, float] | None = None
    shape_range: ShapeRange | None = None

    @property
    def numpy_dtype(self) -> str:
        return DTYPES[self.dtype]

    @property
    def dynamic_axes(self) -> tuple[int, ...]:
        """The indices of the dynamic (-1) dims of ``shape`` (without the batch dim)."""
        return tuple(i for i, d in enumerate(self.shape) if d == -1)

    def concrete_shape(self) -> tuple[int, ...]:
        """The sample's dims: ``sample_shape``, else each -1 as ``shape_range.opt`` or 1."""
        if self.sample_shape is not None:
            return self.sample_shape
        if self.shape_range is not None:
            return self.shape_range.opt
        return tuple(1 if d == -1 else d for d in self.shape)

    def other_shape(self) -> tuple[int, ...] | None:
        """A second size of every dynamic dim for parity: ``shape_range.max`` (or ``min``) where it
        differs from the sample, else the sample's size + 1; None when there is no dynamic dim."""
        if not self.dynamic_axes:
            return None
        base = self.concrete_shape()
        out = list(base)
        for i in self.dynamic_axes:
            r = self.shape_range
            if r is None:
                out[i] = base[i] + 1
            elif r.max[i] != base[i] or r.min[i] != base[i]:
                out[i] = r.max[i] if r.max[i] != base[i] else r.min[i]
        return tuple(out) if tuple(out) != base else None

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: Errors) -> TensorSpec | None:
        if not is_mapping(d, path, "tensor", "name, dtype, shape", errs):
            return None
        check_keys(d, cls, path, errs)
        name = typed(d, "name", str, path, errs, required=True)
        dtype = _dtype(typed(d, "dtype", str, path, errs, required=True), path, errs)
        shape = _shape(d.get("shape"), f"{path}.shape", errs, required=True)
        sample_shape = _shape(d.get("sample_shape"), f"{path}.sample_shape", errs, allow_dynamic=False)
        _check_sample_shape(shape, sample_shape, path, errs)
        rng = _range(d.get("range"), path, errs)
        shape_range = ShapeRange.from_dict(d.get("shape_range"), shape, f"{path}.shape_range", errs)
        _check_sample_in_range(sample_shape, shape_range, path, errs)
        if name is None or dtype is None or shape is None:
            return None
        return cls(
            name=name,
            dtype=dtype,
            shape=shape,
            sample_shape=sample_shape,
            range=(float(rng[0]), float(rng[1])) if rng else None,
            shape_range=shape_range,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class ShapeRange:
    """The sizes of a tensor's dims: ``min``, ``opt`` and ``max``, each parallel to ``shape``
    (without the batch dim), as trtexec's ``--minShapes/--optShapes/--maxShapes`` name them."""

    min: tuple[int, ...]
    opt: tuple[int, ...]
    max: tuple[int, ...]

    @classmethod
    def from_dict(cls, d: Any, shape: tuple[int, ...] | None, path: str, errs: Errors) -> ShapeRange | None:
        if d is None:
            return None
        if not is_mapping(d, path, "shape_range", "min, opt, max", errs):
            return None
        check_keys(d, cls, path, errs)
        lists = {k: _shape(d.get(k), f"{path}.{k}", errs, required=True, allow_dynamic=False) for k in KEYS}
        if shape is None or any(v is None for v in lists.values()):
            return None
        r = cls(min=lists["min"] or (), opt=lists["opt"] or (), max=lists["max"] or ())
        fits = all(
            len(v) == len(shape) and all(s in (-1, x) for s, x in zip(shape, v, strict=True))
            for v in (r.min, r.opt, r.max)
        )
        ordered = fits and all(a <= b <= c for a, b, c in zip(r.min, r.opt, r.max, strict=True))
        if not ordered:
            errs.add(
                "InvalidShapeRange",
                path,
                "shape_range",
                {k: list(v or ()) for k, v in lists.items()},
                f"does not fit shape {list(shape)}" if not fits else "is not ordered min <= opt <= max",
                "three lists as long as shape, a fixed dim repeating its size, min <= opt <= max",
                "write e.g. {min: [1], opt: [64], max: [128]} for shape [-1]",
            )
            return None
        return r


KEYS = ("min", "opt", "max")


def _check_sample_in_range(
    sample_shape: tuple[int, ...] | None, r: ShapeRange | None, path: str, errs: Errors
) -> None:
    if sample_shape is None or r is None or len(sample_shape) != len(r.min):
        return
    if not all(a <= s <= b for a, s, b in zip(r.min, sample_shape, r.max, strict=True)):
        errs.add(
            "InvalidShapeRange",
            f"{path}.sample_shape",
            "sample_shape",
            list(sample_shape),
            f"lies outside shape_range min {list(r.min)} .. max {list(r.max)}",
            "sizes within the declared range",
            "pick a sample size within the range",
        )


def _dtype(dtype: str | None, path: str, errs: Errors) -> str | None:
    """The dtype upper-cased without ``TYPE_``; an UnknownDtype error when Triton has no such type."""
    if not isinstance(dtype, str):
        return dtype
    dt = dtype.upper().removeprefix("TYPE_")
    if dt not in DTYPES:
        close = closest(dt, DTYPES)
        errs.add(
            "UnknownDtype",
            f"{path}.dtype",
            "dtype",
            dtype,
            "is not a Triton data type",
            ", ".join(DTYPES),
            f"use {close}" if close else "use one of the allowed types",
        )
    return dt


def _check_sample_shape(
    shape: tuple[int, ...] | None, sample_shape: tuple[int, ...] | None, path: str, errs: Errors
) -> None:
    if shape is None or sample_shape is None:
        return
    if len(shape) != len(sample_shape) or any(
        a not in (-1, b) for a, b in zip(shape, sample_shape, strict=False)
    ):
        errs.add(
            "InvalidShape",
            f"{path}.sample_shape",
            "sample_shape",
            list(sample_shape),
            f"does not fit shape {list(shape)}",
            "the shape with each -1 replaced by a size",
            "make sample_shape agree with shape",
        )


def _range(rng: Any, path: str, errs: Errors) -> Any:
    """``[low, high]`` with low < high, or None (an InvalidType error when it is something else)."""
    if rng is not None and not (
        isinstance(rng, list)
        and len(rng) == 2
        and all(isinstance(x, (int, float)) for x in rng)
        and rng[0] < rng[1]
    ):
        errs.add(
            "InvalidType",
            f"{path}.range",
            "range",
            rng,
            "is not [low, high] with low < high",
            "[low, high]",
            "write two numbers",
        )
        return None
    return rng


def _shape(
    v: Any, here: str, errs: Errors, *, required: bool = False, allow_dynamic: bool = True
) -> tuple[int, ...] | None:
    if v is None:
        if required:
            errs.add(
                "MissingField",
                here,
                "shape",
                None,
                "is required",
                "a list of dims (-1 = dynamic)",
                "add the shape without the batch dim",
            )
        return None
    ok = isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in v)
    if ok:
        low = -1 if allow_dynamic else 1
        ok = all(x >= low and x != 0 for x in v)
    if not ok:
        errs.add(
            "InvalidShape",
            here,
            here.rsplit(".", 1)[-1],
            v,
            "is not a list of positive dims",
            "positive integers, -1 for a dynamic dim" if allow_dynamic else "positive integers",
            "omit the batch dim and write -1 for dynamic dims",
        )
        return None
    return tuple(v)


def tensors_from_list(v: Any, here: str, errs: Errors) -> list[TensorSpec | None]:
    """The tensors of an ``inputs``/``outputs`` list (None where one could not be read)."""
    if v is None:
        return []
    if not isinstance(v, list):
        errs.add(
            "InvalidType",
            here,
            here.rsplit(".", 1)[-1],
            v,
            "is not a list",
            "a list of tensors",
            "write a list",
        )
        return []
    return [TensorSpec.from_dict(t, f"{here}[{i}]", errs) for i, t in enumerate(v)]
