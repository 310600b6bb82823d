"""Model declarations: what the build stage turns into Triton model repositories.

A Python API of frozen dataclasses, and ``BuildSpec.from_dict`` which maps the GitOps YAML file
(``build/models.yaml``) onto it one to one: every YAML key is a dataclass field of the same name.
Unknown keys are errors naming their path (``models[2].inputs[0].dtype``) and the closest valid key.
Validation is eager: every problem is collected and raised once (TritonValidationErrors).

Standard library only: the build stage (``cdk_triton.builder``) does the side effects.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from cdk_triton.config import tables
from cdk_triton.config.manifest import MULTI_MODEL, SINGLE_MODEL, ArtifactLocation
from cdk_triton.errors import TritonValidationError, raise_all

#: Triton data types (model_config.proto TYPE_<x>) the build accepts, with their numpy names.
DTYPES: dict[str, str] = {
    "BOOL": "bool",
    "UINT8": "uint8",
    "UINT16": "uint16",
    "UINT32": "uint32",
    "UINT64": "uint64",
    "INT8": "int8",
    "INT16": "int16",
    "INT32": "int32",
    "INT64": "int64",
    "FP16": "float16",
    "FP32": "float32",
    "FP64": "float64",
    "BF16": "bfloat16",
    "STRING": "object",
}
FORMATS = ("torchscript", "onnx", "tensorrt", "python", "ensemble")
PACKAGINGS = ("directory", "tar.gz")
INSTANCE_KINDS = ("KIND_GPU", "KIND_CPU", "KIND_AUTO", "KIND_MODEL")
PRECISIONS = ("fp32", "tf32", "fp16", "int8")
WARMUP_DATA = ("zero", "random")
TORCHSCRIPT_MODES = ("trace", "script")
ONNX_EXPORTERS = ("dynamo", "torchscript")
#: PyTorch backend parameters (CONTRACT.md section 5); values are the strings "true"/"false" or counts.
PYTORCH_PARAMETERS = (
    "DISABLE_OPTIMIZED_EXECUTION",
    "INFERENCE_MODE",
    "ENABLE_WEIGHT_SHARING",
    "ENABLE_CACHE_CLEANING",
    "ENABLE_JIT_EXECUTOR",
    "ENABLE_JIT_PROFILING",
    "ENABLE_TENSOR_FUSER",
    "INTER_OP_THREAD_COUNT",
    "INTRA_OP_THREAD_COUNT",
)
#: Removed after 23.12 (rejected for newer images).
PYTORCH_REMOVED_PARAMETERS = {"ENABLE_NVFUSER": "23.12"}


_MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")


class _Errors:
    """Collects validation errors while a declaration is parsed."""

    def __init__(self, source: str | None) -> None:
        self.items: list[TritonValidationError] = []
        self.source = source

    def add(self, code: str, path: str, prop: str, value: Any, problem: str, allowed: str, fix: str) -> None:
        where = f"{self.source}: {path}" if self.source else path
        self.items.append(
            TritonValidationError(
                code, prop=prop, value=value, problem=problem, allowed=allowed, fix=fix, path=where
            )
        )


def _is_mapping(d: Any, path: str, what: str, allowed: str, errs: _Errors) -> bool:
    """True for a mapping; else records an InvalidType error naming what was expected."""
    if isinstance(d, dict):
        return True
    errs.add("InvalidType", path, what, d, "is not a mapping", allowed, "write a mapping")
    return False


def _one_of(
    errs: _Errors,
    path: str,
    key: str,
    value: Any,
    choices: tuple[str, ...],
    code: str,
    what: str,
    fix: str,
    shown: Any = None,
) -> bool:
    """True when ``value`` is one of ``choices``; else records ``code`` naming the allowed values."""
    if value in choices:
        return True
    errs.add(
        code,
        f"{path}.{key}",
        key,
        value if shown is None else shown,
        f"is not {what}",
        ", ".join(choices),
        fix,
    )
    return False


def _check_keys(
    d: Mapping[str, Any], cls: type, path: str, errs: _Errors, extra: tuple[str, ...] = ()
) -> None:
    allowed = [f.name for f in fields(cls) if not f.name.startswith("_") and f.name not in ("base_dir",)]
    allowed += list(extra)
    for key in d:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.5)
            hint = f"did you mean '{close[0]}'?" if close else "remove it"
            errs.add(
                "UnknownKey",
                f"{path}.{key}" if path else str(key),
                f"key '{key}'",
                key,
                "is not a valid key here",
                ", ".join(sorted(allowed)),
                hint,
            )


def _typed(
    d: Mapping[str, Any],
    key: str,
    typ: type | tuple[type, ...],
    path: str,
    errs: _Errors,
    default: Any = None,
    required: bool = False,
) -> Any:
    here = f"{path}.{key}" if path else key
    if key not in d or d[key] is None:
        if required:
            errs.add(
                "MissingField", here, key, None, "is required", _tname(typ), f"add '{key}' to the declaration"
            )
        return default
    v = d[key]
    ok = isinstance(v, typ) and not (isinstance(v, bool) and typ in (int, (int, float)))
    if typ is float and isinstance(v, int) and not isinstance(v, bool):
        return float(v)
    if not ok:
        errs.add(
            "InvalidType",
            here,
            key,
            v,
            f"has the wrong type ({type(v).__name__})",
            _tname(typ),
            f"write '{key}' as {_tname(typ)}",
        )
        return default
    return v


def _tname(typ: type | tuple[type, ...]) -> str:
    names = {
        "str": "a string",
        "int": "an integer",
        "float": "a number",
        "bool": "true or false",
        "list": "a list",
        "dict": "a mapping",
    }
    if isinstance(typ, tuple):
        return " or ".join(names.get(t.__name__, t.__name__) for t in typ)
    return names.get(typ.__name__, typ.__name__)


def _str_map(d: Any, here: str, errs: _Errors) -> dict[str, str]:
    if d is None:
        return {}
    if not isinstance(d, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in d.items()):
        errs.add(
            "InvalidType",
            here,
            here.rsplit(".", 1)[-1],
            d,
            "is not a mapping of strings",
            "a mapping",
            "write it as name: name pairs",
        )
        return {}
    return dict(d)


# ---------------------------------------------------------------------------- tensors


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
    """

    name: str
    dtype: str
    shape: tuple[int, ...]
    sample_shape: tuple[int, ...] | None = None
    range: tuple[float, float] | None = None

    @property
    def numpy_dtype(self) -> str:
        return DTYPES[self.dtype]

    def concrete_shape(self) -> tuple[int, ...]:
        if self.sample_shape is not None:
            return self.sample_shape
        return tuple(1 if d == -1 else d for d in self.shape)

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: _Errors) -> TensorSpec | None:
        if not _is_mapping(d, path, "tensor", "name, dtype, shape", errs):
            return None
        _check_keys(d, cls, path, errs)
        name = _typed(d, "name", str, path, errs, required=True)
        dtype = _typed(d, "dtype", str, path, errs, required=True)
        if isinstance(dtype, str):
            dt = dtype.upper().removeprefix("TYPE_")
            if dt not in DTYPES:
                close = difflib.get_close_matches(dt, list(DTYPES), n=1)
                errs.add(
                    "UnknownDtype",
                    f"{path}.dtype",
                    "dtype",
                    dtype,
                    "is not a Triton data type",
                    ", ".join(DTYPES),
                    f"use {close[0]}" if close else "use one of the allowed types",
                )
            dtype = dt
        shape = _shape(d.get("shape"), f"{path}.shape", errs, required=True)
        sample_shape = _shape(d.get("sample_shape"), f"{path}.sample_shape", errs, allow_dynamic=False)
        if (
            shape is not None
            and sample_shape is not None
            and (
                len(shape) != len(sample_shape)
                or any(a not in (-1, b) for a, b in zip(shape, sample_shape, strict=False))
            )
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
        rng = d.get("range")
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
            rng = None
        if name is None or dtype is None or shape is None:
            return None
        return cls(
            name=name,
            dtype=dtype,
            shape=shape,
            sample_shape=sample_shape,
            range=(float(rng[0]), float(rng[1])) if rng else None,
        )


def _shape(
    v: Any, here: str, errs: _Errors, *, required: bool = False, allow_dynamic: bool = True
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


# ---------------------------------------------------------------------------- model options


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelSource:
    """Where a model comes from: exactly one of ``factory``, ``torchscript``, ``onnx``, ``python``.

    Attributes:
        factory: ``module:callable`` returning an ``nn.Module``; the module is imported relative to
            the YAML file's directory.
        kwargs: keyword arguments of the factory. Default: none.
        seed: the torch seed set before the factory runs (required for a factory).
        state_dict: a ``torch.save``d state_dict file loaded into the factory's module. Default: none.
        torchscript: a TorchScript file. onnx: an ONNX file. python: a Python-backend model directory
            (holding ``model.py``) or a ``model.py`` file.

    For file sources the file itself is the reference: parity then checks that the artifact runs
    and that its outputs match the declaration.
    """

    factory: str | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    state_dict: str | None = None
    torchscript: str | None = None
    onnx: str | None = None
    python: str | None = None

    @property
    def kind(self) -> str:
        for k in ("factory", "torchscript", "onnx", "python"):
            if getattr(self, k):
                return k
        return "none"

    @property
    def path(self) -> str | None:
        return self.torchscript or self.onnx or self.python

    def to_dict(self) -> dict[str, Any]:
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) not in (None, {}, ())
        }

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: _Errors) -> ModelSource | None:
        if not _is_mapping(
            d, path, "source", "factory (+kwargs, seed, state_dict), torchscript, onnx or python", errs
        ):
            return None
        _check_keys(d, cls, path, errs)
        src = cls(
            factory=_typed(d, "factory", str, path, errs),
            kwargs=_typed(d, "kwargs", dict, path, errs, default={}),
            seed=_typed(d, "seed", int, path, errs),
            state_dict=_typed(d, "state_dict", str, path, errs),
            torchscript=_typed(d, "torchscript", str, path, errs),
            onnx=_typed(d, "onnx", str, path, errs),
            python=_typed(d, "python", str, path, errs),
        )
        kinds = [k for k in ("factory", "torchscript", "onnx", "python") if getattr(src, k)]
        if len(kinds) != 1:
            errs.add(
                "InvalidSource",
                path,
                "source",
                sorted(d),
                "must name exactly one kind of source",
                "factory, torchscript, onnx or python",
                "keep one of them",
            )
            return None
        if src.factory is not None:
            mod, sep, attr = src.factory.partition(":")
            if (
                not sep
                or not mod
                or not attr
                or not all(p.isidentifier() for p in mod.split("."))
                or not all(p.isidentifier() for p in attr.split("."))
            ):
                errs.add(
                    "InvalidFactoryReference",
                    f"{path}.factory",
                    "factory",
                    src.factory,
                    "is not a 'module:callable' reference",
                    "module:callable (e.g. example_models:resnet)",
                    "write the module path, a colon and the callable's name",
                )
            if src.seed is None:
                errs.add(
                    "MissingSeed",
                    f"{path}.seed",
                    "seed",
                    None,
                    "is required for a factory",
                    "an integer",
                    "add 'seed: 0' so weights and samples are reproducible",
                )
        elif src.seed is not None or src.kwargs or src.state_dict:
            errs.add(
                "InvalidSource",
                path,
                "source",
                sorted(d),
                "has factory options without a factory",
                "kwargs, seed and state_dict only with factory",
                "remove them",
            )
        return src


@dataclass(frozen=True, kw_only=True, slots=True)
class DynamicBatching:
    """Triton's dynamic batcher. ``max_queue_delay_microseconds``: Default: 0 (Triton's default)."""

    preferred_batch_sizes: tuple[int, ...] = ()
    max_queue_delay_microseconds: int = 0
    preserve_ordering: bool = False

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: _Errors) -> DynamicBatching | None:
        if d is True or d == {}:
            return cls()
        if d is None or d is False:
            return None
        if not isinstance(d, dict):
            errs.add(
                "InvalidType",
                path,
                "dynamic_batching",
                d,
                "is not a mapping or true",
                "true or {preferred_batch_sizes, max_queue_delay_microseconds}",
                "write a mapping",
            )
            return None
        _check_keys(d, cls, path, errs)
        pref = _typed(d, "preferred_batch_sizes", list, path, errs, default=[])
        if not all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in pref):
            errs.add(
                "InvalidType",
                f"{path}.preferred_batch_sizes",
                "preferred_batch_sizes",
                pref,
                "is not a list of positive integers",
                "positive integers",
                "fix the list",
            )
            pref = []
        delay = _typed(d, "max_queue_delay_microseconds", int, path, errs, default=0)
        return cls(
            preferred_batch_sizes=tuple(pref),
            max_queue_delay_microseconds=delay,
            preserve_ordering=_typed(d, "preserve_ordering", bool, path, errs, default=False),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class InstanceGroup:
    """One ``instance_group`` entry. Default: one instance on each GPU (KIND_GPU, count 1)."""

    kind: str = "KIND_GPU"
    count: int = 1
    gpus: tuple[int, ...] = ()

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: _Errors) -> InstanceGroup | None:
        if not _is_mapping(d, path, "instance_group", "kind, count, gpus", errs):
            return None
        _check_keys(d, cls, path, errs)
        kind = _typed(d, "kind", str, path, errs, default="KIND_GPU").upper()
        if not kind.startswith("KIND_"):
            kind = "KIND_" + kind
        _one_of(
            errs,
            path,
            "kind",
            kind,
            INSTANCE_KINDS,
            "InvalidInstanceGroup",
            "an instance group kind",
            "use KIND_GPU on GPU endpoints",
            d.get("kind"),
        )
        count = _typed(d, "count", int, path, errs, default=1)
        if count < 1:
            errs.add(
                "InvalidInstanceGroup",
                f"{path}.count",
                "count",
                count,
                "must be at least 1",
                ">= 1",
                "set count: 1",
            )
        gpus = _typed(d, "gpus", list, path, errs, default=[])
        return cls(kind=kind, count=count, gpus=tuple(gpus))


@dataclass(frozen=True, kw_only=True, slots=True)
class Warmup:
    """One ``model_warmup`` entry: every input filled with zeros or random data."""

    name: str = "warmup"
    batch_size: int = 1
    count: int = 1
    data: str = "zero"

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: _Errors) -> Warmup | None:
        if not _is_mapping(d, path, "warmup", "name, batch_size, count, data", errs):
            return None
        _check_keys(d, cls, path, errs)
        data = _typed(d, "data", str, path, errs, default="zero")
        _one_of(
            errs, path, "data", data, WARMUP_DATA, "InvalidWarmup", "a warmup data kind", "use zero or random"
        )
        return cls(
            name=_typed(d, "name", str, path, errs, default="warmup"),
            batch_size=_typed(d, "batch_size", int, path, errs, default=1),
            count=_typed(d, "count", int, path, errs, default=1),
            data=data,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class OnnxOptions:
    """ONNX export. ``opset``: Default: the highest opset both torch and the target's ONNX Runtime
    support. ``exporter``: dynamo (default) or torchscript. ``tensorrt_accelerator``: add ONNX
    Runtime's TensorRT execution accelerator (builds engines on the target at load time).
    Default: off."""

    opset: int | None = None
    exporter: str = "dynamo"
    tensorrt_accelerator: bool = False
    tensorrt_precision: str = "fp16"

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: _Errors) -> OnnxOptions:
        if not _is_mapping(d, path, "onnx", "opset, exporter, tensorrt_accelerator", errs):
            return cls()
        _check_keys(d, cls, path, errs)
        exporter = _typed(d, "exporter", str, path, errs, default="dynamo")
        _one_of(
            errs,
            path,
            "exporter",
            exporter,
            ONNX_EXPORTERS,
            "InvalidOption",
            "an ONNX exporter",
            "use dynamo",
        )
        prec = _typed(d, "tensorrt_precision", str, path, errs, default="fp16")
        _one_of(
            errs,
            path,
            "tensorrt_precision",
            prec,
            ("fp32", "fp16"),
            "UnknownPrecision",
            "a TensorRT accelerator precision",
            "use fp16",
        )
        return cls(
            opset=_typed(d, "opset", int, path, errs),
            exporter=exporter,
            tensorrt_accelerator=_typed(d, "tensorrt_accelerator", bool, path, errs, default=False),
            tensorrt_precision=prec,
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class TensorRTOptions:
    """TensorRT plan build (from the ONNX export, on a GPU).

    Attributes:
        precision: fp32, tf32, fp16 or int8 (int8 needs calibration data: not supported yet).
            Default: fp16.
        workspace_mib: builder workspace memory pool limit. Default: 1024.
        opt_batch_size: the profile's opt batch. Default: the largest preferred batch size, else
            max_batch_size.
        timing_cache: path of a timing cache file reused across builds. Default: ``<out>/tensorrt.cache``.
        plans: directories of plans built elsewhere (each a ``model.plan`` + ``plan.json`` as this build
            writes them, e.g. one per GPU architecture). With several plans the model ships them all
            and ``cc_model_filenames`` picks one per GPU. Default: none (build one plan on this GPU).
    """

    precision: str = "fp16"
    workspace_mib: int = 1024
    opt_batch_size: int | None = None
    timing_cache: str | None = None
    plans: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: _Errors) -> TensorRTOptions:
        if not _is_mapping(d, path, "tensorrt", "precision, workspace_mib, ...", errs):
            return cls()
        _check_keys(d, cls, path, errs)
        prec = _typed(d, "precision", str, path, errs, default="fp16")
        _one_of(
            errs, path, "precision", prec, PRECISIONS, "UnknownPrecision", "a TensorRT precision", "use fp16"
        )
        return cls(
            precision=prec,
            workspace_mib=_typed(d, "workspace_mib", int, path, errs, default=1024),
            opt_batch_size=_typed(d, "opt_batch_size", int, path, errs),
            timing_cache=_typed(d, "timing_cache", str, path, errs),
            plans=tuple(str(x) for x in _typed(d, "plans", list, path, errs, default=[])),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class SampleSpec:
    """The declared sample input (random data from ``seed``) and the parity tolerance.

    ``atol``/``rtol``: Default per output dtype (FP32 1e-4/1e-3, FP16 1e-2/1e-2, integers exact).
    """

    seed: int = 0
    batch_size: int = 1
    atol: float | None = None
    rtol: float | None = None

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: _Errors) -> SampleSpec:
        if not _is_mapping(d, path, "sample", "seed, batch_size, atol, rtol", errs):
            return cls()
        _check_keys(d, cls, path, errs)
        return cls(
            seed=_typed(d, "seed", int, path, errs, default=0),
            batch_size=_typed(d, "batch_size", int, path, errs, default=1),
            atol=_typed(d, "atol", (int, float), path, errs),
            rtol=_typed(d, "rtol", (int, float), path, errs),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class EnsembleStep:
    """One ensemble step: ``input_map`` step input -> ensemble tensor, ``output_map`` step output ->
    ensemble tensor (Triton's own direction of both maps)."""

    model: str
    input_map: dict[str, str]
    output_map: dict[str, str]
    model_version: int = -1

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: _Errors) -> EnsembleStep | None:
        if not _is_mapping(d, path, "step", "model, input_map, output_map", errs):
            return None
        _check_keys(d, cls, path, errs)
        model = _typed(d, "model", str, path, errs, required=True)
        im = _str_map(d.get("input_map"), f"{path}.input_map", errs)
        om = _str_map(d.get("output_map"), f"{path}.output_map", errs)
        if model is None:
            return None
        return cls(
            model=model,
            input_map=im,
            output_map=om,
            model_version=_typed(d, "model_version", int, path, errs, default=-1),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelSpec:
    """One Triton model to build.

    Attributes:
        name: the model directory name (unique in the declaration).
        format: torchscript, onnx, tensorrt, python or ensemble.
        source: where the model comes from (none for an ensemble).
        inputs / outputs: the declared tensors (cross-checked with the exported artifact).
        max_batch_size: 0 = no batching; > 0 needs a leading batch dim on every tensor. Default: 0.
        dynamic_batching: Default: off.
        instance_groups: Default: Triton's default (one instance per GPU).
        warmup: Default: none.
        pytorch_parameters: PyTorch backend parameters (``"true"``/``"false"`` or counts). Default: none.
        torchscript_mode: trace or script. Default: trace.
        onnx: ONNX export options. tensorrt: TensorRT plan options.
        response_cache: enable Triton's response cache for this model (needs the server's
            ``--cache-config``). Default: off.
        sample: the sample input and parity tolerance. Default: seed 0, batch 1.
        steps: the ensemble DAG (ensemble only).
        optional: skip the model (with a message) where its format cannot be built here, such as a
            TensorRT plan without a GPU. Default: false (fail the build).
    """

    name: str
    format: str
    source: ModelSource | None = None
    inputs: tuple[TensorSpec, ...] = ()
    outputs: tuple[TensorSpec, ...] = ()
    max_batch_size: int = 0
    dynamic_batching: DynamicBatching | None = None
    instance_groups: tuple[InstanceGroup, ...] = ()
    warmup: tuple[Warmup, ...] = ()
    pytorch_parameters: dict[str, str] = field(default_factory=dict)
    torchscript_mode: str = "trace"
    onnx: OnnxOptions = field(default_factory=OnnxOptions)
    tensorrt: TensorRTOptions = field(default_factory=TensorRTOptions)
    response_cache: bool = False
    sample: SampleSpec = field(default_factory=SampleSpec)
    steps: tuple[EnsembleStep, ...] = ()
    optional: bool = False

    @property
    def is_ensemble(self) -> bool:
        return self.format == "ensemble"

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: _Errors) -> ModelSpec | None:
        if not _is_mapping(d, path, "model", "name, format, source, inputs, ...", errs):
            return None
        _check_keys(d, cls, path, errs)
        name = _typed(d, "name", str, path, errs, required=True)
        if name is not None and not _MODEL_NAME.match(name):
            errs.add(
                "InvalidModelName",
                f"{path}.name",
                "model name",
                name,
                "is not a valid model directory name",
                "letters, digits, '_', '-' and '.', starting with a letter or digit (at most 200)",
                "rename the model",
            )
        fmt = _typed(d, "format", str, path, errs, required=True)
        if fmt is not None and fmt not in FORMATS:
            close = difflib.get_close_matches(fmt, FORMATS, n=1)
            errs.add(
                "UnknownFormat",
                f"{path}.format",
                "format",
                fmt,
                "is not a model format",
                ", ".join(FORMATS),
                f"use {close[0]}" if close else "use one of the allowed formats",
            )
            fmt = None
        source = (
            ModelSource.from_dict(d["source"], f"{path}.source", errs)
            if d.get("source") is not None
            else None
        )
        ins = _tensors(d.get("inputs"), f"{path}.inputs", errs)
        outs = _tensors(d.get("outputs"), f"{path}.outputs", errs)
        mbs = _typed(d, "max_batch_size", int, path, errs, default=0)
        if mbs < 0:
            errs.add(
                "InvalidMaxBatchSize",
                f"{path}.max_batch_size",
                "max_batch_size",
                mbs,
                "is negative",
                "0 (no batching) or a positive integer",
                "set 0 or the largest batch",
            )
        db = DynamicBatching.from_dict(d.get("dynamic_batching"), f"{path}.dynamic_batching", errs)
        if db is not None and mbs == 0:
            errs.add(
                "InvalidMaxBatchSize",
                f"{path}.dynamic_batching",
                "dynamic_batching",
                True,
                "needs max_batch_size > 0",
                "max_batch_size >= 1",
                "set max_batch_size or remove dynamic_batching",
            )
        if db is not None and any(p > mbs for p in db.preferred_batch_sizes) and mbs > 0:
            errs.add(
                "PreferredBatchTooLarge",
                f"{path}.dynamic_batching.preferred_batch_sizes",
                "preferred_batch_sizes",
                list(db.preferred_batch_sizes),
                f"exceeds max_batch_size {mbs}",
                f"sizes up to {mbs}",
                "lower the preferred sizes or raise max_batch_size",
            )
        groups = [
            InstanceGroup.from_dict(g, f"{path}.instance_groups[{i}]", errs)
            for i, g in enumerate(_typed(d, "instance_groups", list, path, errs, default=[]))
        ]
        warm = [
            Warmup.from_dict(w, f"{path}.warmup[{i}]", errs)
            for i, w in enumerate(_typed(d, "warmup", list, path, errs, default=[]))
        ]
        params_raw = _typed(d, "pytorch_parameters", dict, path, errs, default={})
        params: dict[str, str] = {}
        for k, v in params_raw.items():
            here = f"{path}.pytorch_parameters.{k}"
            if k in PYTORCH_REMOVED_PARAMETERS:
                errs.add(
                    "RemovedPyTorchParameter",
                    here,
                    "pytorch parameter",
                    k,
                    f"was removed after Triton {PYTORCH_REMOVED_PARAMETERS[k]}",
                    ", ".join(PYTORCH_PARAMETERS),
                    "remove it (use ENABLE_TENSOR_FUSER)",
                )
            elif k not in PYTORCH_PARAMETERS:
                close = difflib.get_close_matches(str(k), PYTORCH_PARAMETERS, n=1)
                errs.add(
                    "UnknownPyTorchParameter",
                    here,
                    "pytorch parameter",
                    k,
                    "is not a PyTorch backend parameter",
                    ", ".join(PYTORCH_PARAMETERS),
                    f"did you mean '{close[0]}'?" if close else "remove it",
                )
            params[str(k)] = ("true" if v else "false") if isinstance(v, bool) else str(v)
        if params and fmt not in (None, "torchscript"):
            errs.add(
                "InvalidOption",
                f"{path}.pytorch_parameters",
                "pytorch_parameters",
                sorted(params),
                f"only apply to torchscript models, not {fmt}",
                "format: torchscript",
                "remove them",
            )
        mode = _typed(d, "torchscript_mode", str, path, errs, default="trace")
        _one_of(
            errs,
            path,
            "torchscript_mode",
            mode,
            TORCHSCRIPT_MODES,
            "InvalidOption",
            "a TorchScript mode",
            "use trace",
        )
        steps = [
            EnsembleStep.from_dict(s, f"{path}.steps[{i}]", errs)
            for i, s in enumerate(_typed(d, "steps", list, path, errs, default=[]))
        ]
        spec_onnx = (
            OnnxOptions.from_dict(d["onnx"], f"{path}.onnx", errs)
            if d.get("onnx") is not None
            else OnnxOptions()
        )
        spec_trt = (
            TensorRTOptions.from_dict(d["tensorrt"], f"{path}.tensorrt", errs)
            if d.get("tensorrt") is not None
            else TensorRTOptions()
        )
        sample = (
            SampleSpec.from_dict(d["sample"], f"{path}.sample", errs)
            if d.get("sample") is not None
            else SampleSpec()
        )
        if name is None or fmt is None:
            return None
        spec = cls(
            name=name,
            format=fmt,
            source=source,
            inputs=tuple(t for t in ins if t),
            outputs=tuple(t for t in outs if t),
            max_batch_size=mbs,
            dynamic_batching=db,
            instance_groups=tuple(g for g in groups if g),
            warmup=tuple(w for w in warm if w),
            pytorch_parameters=params,
            torchscript_mode=mode,
            onnx=spec_onnx,
            tensorrt=spec_trt,
            response_cache=_typed(d, "response_cache", bool, path, errs, default=False),
            sample=sample,
            steps=tuple(s for s in steps if s),
            optional=_typed(d, "optional", bool, path, errs, default=False),
        )
        spec._validate_own(path, errs)
        return spec

    def _validate_own(self, path: str, errs: _Errors) -> None:
        fmt, src = self.format, self.source
        if fmt == "ensemble":
            if src is not None:
                errs.add(
                    "SourceFormatMismatch",
                    f"{path}.source",
                    "source",
                    src.kind,
                    "is not allowed on an ensemble",
                    "no source (an ensemble is its steps)",
                    "remove source",
                )
            if not self.steps:
                errs.add(
                    "MissingField",
                    f"{path}.steps",
                    "steps",
                    None,
                    "is required for an ensemble",
                    "a list of steps",
                    "add the steps",
                )
        else:
            if self.steps:
                errs.add(
                    "InvalidOption",
                    f"{path}.steps",
                    "steps",
                    len(self.steps),
                    f"only apply to ensembles, not {fmt}",
                    "format: ensemble",
                    "remove steps",
                )
            if src is None:
                errs.add(
                    "MissingField",
                    f"{path}.source",
                    "source",
                    None,
                    f"is required for a {fmt} model",
                    "factory, torchscript, onnx or python",
                    "add a source",
                )
            else:
                allowed = {
                    "torchscript": ("factory", "torchscript"),
                    "onnx": ("factory", "onnx"),
                    "tensorrt": ("factory", "onnx"),
                    "python": ("python",),
                }[fmt]
                if src.kind not in allowed and src.kind != "none":
                    errs.add(
                        "SourceFormatMismatch",
                        f"{path}.source",
                        "source",
                        src.kind,
                        f"cannot produce a {fmt} model",
                        ", ".join(allowed),
                        "change the source or the format",
                    )
        if not self.inputs:
            errs.add(
                "MissingField",
                f"{path}.inputs",
                "inputs",
                None,
                "is required",
                "a list of tensors",
                "declare every input with name, dtype and shape",
            )
        if not self.outputs:
            errs.add(
                "MissingField",
                f"{path}.outputs",
                "outputs",
                None,
                "is required",
                "a list of tensors",
                "declare every output with name, dtype and shape",
            )
        for group, tensors in (("inputs", self.inputs), ("outputs", self.outputs)):
            seen: set[str] = set()
            for i, t in enumerate(tensors):
                if t.name in seen:
                    errs.add(
                        "DuplicateTensorName",
                        f"{path}.{group}[{i}].name",
                        "tensor name",
                        t.name,
                        f"appears twice in {group}",
                        "unique names",
                        "rename one of them",
                    )
                seen.add(t.name)
                if t.dtype == "STRING" and fmt in ("onnx", "tensorrt", "torchscript"):
                    errs.add(
                        "UnknownDtype",
                        f"{path}.{group}[{i}].dtype",
                        "dtype",
                        t.dtype,
                        f"is not supported for {fmt} models",
                        "numeric types",
                        "use a python model for strings",
                    )


def _tensors(v: Any, here: str, errs: _Errors) -> list[TensorSpec | None]:
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


# ---------------------------------------------------------------------------- endpoints


@dataclass(frozen=True, kw_only=True, slots=True)
class EndpointSpec:
    """One endpoint's packaging.

    Attributes:
        name: the endpoint key (the constructs look it up in the manifest).
        mode: SingleModel or MultiModel.
        instance_types: the instance types it is packaged for (TensorRT plans must match their GPU).
        models: SME: the repository's models (ensembles bring their steps); MME: one TargetModel
            archive per entry (an ensemble with its steps in one archive).
        default_model: SME: the model behind ``/invocations``. Default: the only top-level model.
        packaging: SME: directory (uncompressed S3 prefix) or tar.gz. Default: directory.
    """

    name: str
    mode: str
    instance_types: tuple[str, ...]
    models: tuple[str, ...]
    default_model: str | None = None
    packaging: str = "directory"

    @property
    def is_multi_model(self) -> bool:
        return self.mode == MULTI_MODEL

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: _Errors) -> EndpointSpec | None:
        if not _is_mapping(d, path, "endpoint", "name, mode, instance_types, models", errs):
            return None
        _check_keys(d, cls, path, errs)
        name = _typed(d, "name", str, path, errs, required=True)
        mode = _typed(d, "mode", str, path, errs, required=True)
        aliases = {"single": SINGLE_MODEL, "sme": SINGLE_MODEL, "multi": MULTI_MODEL, "mme": MULTI_MODEL}
        mode = aliases.get(str(mode).lower(), mode) if mode else mode
        if mode is not None:
            _one_of(
                errs,
                path,
                "mode",
                mode,
                (SINGLE_MODEL, MULTI_MODEL),
                "UnknownEndpointMode",
                "an endpoint mode",
                "use SingleModel or MultiModel",
            )
        its = _typed(d, "instance_types", list, path, errs, required=True) or []
        models = _typed(d, "models", list, path, errs, required=True) or []
        packaging = _typed(d, "packaging", str, path, errs, default="directory")
        _one_of(
            errs, path, "packaging", packaging, PACKAGINGS, "InvalidPackaging", "a packaging", "use directory"
        )
        if mode == MULTI_MODEL and "packaging" in d and packaging != "tar.gz":
            errs.add(
                "InvalidPackaging",
                f"{path}.packaging",
                "packaging",
                packaging,
                "is not possible for a multi-model endpoint",
                "tar.gz (one archive per target model)",
                "remove packaging",
            )
        if name is None or mode is None:
            return None
        return cls(
            name=name,
            mode=mode,
            instance_types=tuple(str(x) for x in its),
            models=tuple(str(m) for m in models),
            default_model=_typed(d, "default_model", str, path, errs),
            packaging="tar.gz" if mode == MULTI_MODEL else packaging,
        )


# ---------------------------------------------------------------------------- the whole declaration


@dataclass(frozen=True, kw_only=True, slots=True)
class BuildSpec:
    """The whole declaration: target Triton release, artifact location, models and endpoints.

    ``base_dir``: the directory factory references and source paths resolve against (the YAML
    file's directory). Default: the current directory.
    """

    triton_version: str = tables.DEFAULT_TRITON_VERSION
    artifact_location: ArtifactLocation
    models: tuple[ModelSpec, ...]
    endpoints: tuple[EndpointSpec, ...] = ()
    base_dir: str = "."

    def model(self, name: str) -> ModelSpec:
        for m in self.models:
            if m.name == name:
                return m
        raise KeyError(name)

    @property
    def model_names(self) -> list[str]:
        return [m.name for m in self.models]

    def closure(self, name: str) -> list[str]:
        """The model and, for an ensemble, every step model (recursively), ensemble first."""
        out: list[str] = []

        def walk(n: str) -> None:
            if n in out:
                return
            out.append(n)
            m = self.model(n)
            for s in m.steps:
                walk(s.model)

        walk(name)
        return out

    def resolve_path(self, relative: str) -> Path:
        return (Path(self.base_dir) / relative).resolve()

    @classmethod
    def from_dict(
        cls,
        data: Any,
        *,
        base_dir: str | Path = ".",
        source: str | None = None,
        artifact_location: str | None = None,
    ) -> BuildSpec:
        """Parse and validate a declaration (the YAML document); raises every problem at once.

        ``artifact_location`` overrides the declared location (``--artifact-location`` or the
        ``CDK_TRITON_ARTIFACT_LOCATION`` environment variable).
        """
        errs = _Errors(source)
        if not isinstance(data, dict):
            errs.add(
                "InvalidType",
                "$",
                "declaration",
                type(data).__name__,
                "is not a mapping",
                "triton_version, artifact_location, models, endpoints",
                "write a YAML mapping",
            )
            raise_all(errs.items)
        _check_keys(data, cls, "", errs, extra=("kms_key_arn",))
        version = _typed(data, "triton_version", str, "", errs, default=tables.DEFAULT_TRITON_VERSION)
        try:
            tables.release(version)
        except TritonValidationError as exc:
            errs.items.append(exc.at(f"{source}: triton_version" if source else "triton_version"))
        loc_raw = artifact_location or data.get("artifact_location")
        kms = _typed(data, "kms_key_arn", str, "", errs)
        location = ArtifactLocation(bucket="unset")
        if loc_raw is None:
            errs.add(
                "MissingField",
                "artifact_location",
                "artifact_location",
                None,
                "is required",
                "s3://bucket/prefix",
                "declare where artifacts go (S3 URIs are computed without uploading)",
            )
        elif isinstance(loc_raw, str):
            try:
                location = ArtifactLocation.from_uri(loc_raw, kms_key_arn=kms)
                if not location.bucket:
                    raise TritonValidationError(
                        "InvalidS3Uri",
                        prop="artifact_location",
                        value=loc_raw,
                        problem="has no bucket",
                        allowed="s3://bucket/prefix",
                        fix="write the bucket name",
                    )
            except TritonValidationError as exc:
                errs.items.append(exc.at(f"{source}: artifact_location" if source else "artifact_location"))
        else:
            errs.add(
                "InvalidType",
                "artifact_location",
                "artifact_location",
                loc_raw,
                "is not an S3 URI string",
                "s3://bucket/prefix",
                "write the location as one string",
            )
        models: list[ModelSpec] = []
        raw_models = _typed(data, "models", list, "", errs, required=True) or []
        for i, m in enumerate(raw_models):
            spec = ModelSpec.from_dict(m, f"models[{i}]", errs)
            if spec:
                models.append(spec)
        endpoints = [
            e
            for e in (
                EndpointSpec.from_dict(e, f"endpoints[{i}]", errs)
                for i, e in enumerate(_typed(data, "endpoints", list, "", errs, default=[]))
            )
            if e
        ]
        build = cls(
            triton_version=version,
            artifact_location=location,
            models=tuple(models),
            endpoints=tuple(endpoints),
            base_dir=str(Path(base_dir).resolve()),
        )
        build._validate_references(raw_models, errs)
        raise_all(errs.items)
        return build

    def _validate_references(self, raw_models: list[Any], errs: _Errors) -> None:
        index: dict[str, int] = {}
        for i, m in enumerate(self.models):
            if m.name in index:
                errs.add(
                    "DuplicateModelName",
                    f"models[{i}].name",
                    "model name",
                    m.name,
                    f"is already used by models[{index[m.name]}]",
                    "unique model names",
                    "rename one of them",
                )
            index.setdefault(m.name, i)
        by_name = {m.name: m for m in self.models}
        for i, m in enumerate(self.models):
            if m.source is not None and m.source.path and not self.resolve_path(m.source.path).exists():
                errs.add(
                    "SourceNotFound",
                    f"models[{i}].source",
                    "source path",
                    m.source.path,
                    f"does not exist (resolved against {self.base_dir})",
                    "an existing file or directory",
                    "fix the path (relative to the YAML file)",
                )
            if (
                m.source is not None
                and m.source.state_dict
                and not self.resolve_path(m.source.state_dict).is_file()
            ):
                errs.add(
                    "SourceNotFound",
                    f"models[{i}].source.state_dict",
                    "state_dict",
                    m.source.state_dict,
                    f"does not exist (resolved against {self.base_dir})",
                    "an existing file",
                    "fix the path (relative to the YAML file)",
                )
            if (
                m.max_batch_size > 0
                and m.format == "tensorrt"
                and m.tensorrt.opt_batch_size
                and (m.tensorrt.opt_batch_size > m.max_batch_size)
            ):
                errs.add(
                    "PreferredBatchTooLarge",
                    f"models[{i}].tensorrt.opt_batch_size",
                    "opt_batch_size",
                    m.tensorrt.opt_batch_size,
                    f"exceeds max_batch_size {m.max_batch_size}",
                    f"1..{m.max_batch_size}",
                    "lower it",
                )
            for j, plan_dir in enumerate(m.tensorrt.plans):
                if not (self.resolve_path(plan_dir) / "model.plan").is_file():
                    errs.add(
                        "SourceNotFound",
                        f"models[{i}].tensorrt.plans[{j}]",
                        "plan directory",
                        plan_dir,
                        f"has no model.plan (resolved against {self.base_dir})",
                        "a directory with model.plan and plan.json",
                        "copy the plan and plan.json a GPU build wrote (cache/models/<model>-*/1/)",
                    )
            if m.tensorrt.plans and m.format != "tensorrt":
                errs.add(
                    "InvalidOption",
                    f"models[{i}].tensorrt.plans",
                    "tensorrt.plans",
                    list(m.tensorrt.plans),
                    f"only apply to tensorrt models, not {m.format}",
                    "format: tensorrt",
                    "remove them",
                )
            if not m.is_ensemble:
                continue
            produced = {t.name: t.dtype for t in m.inputs}
            for j, s in enumerate(m.steps):
                here = f"models[{i}].steps[{j}]"
                step = by_name.get(s.model)
                if step is None:
                    close = difflib.get_close_matches(s.model, list(by_name), n=1)
                    errs.add(
                        "UnknownModelReference",
                        f"{here}.model",
                        "step model",
                        s.model,
                        "is not a declared model",
                        ", ".join(by_name),
                        f"did you mean '{close[0]}'?" if close else "declare the model",
                    )
                    continue
                if step.name == m.name:
                    errs.add(
                        "EnsembleCycle",
                        f"{here}.model",
                        "step model",
                        s.model,
                        "is the ensemble itself",
                        "another model",
                        "reference a step model",
                    )
                    continue
                if step.max_batch_size < m.max_batch_size:
                    errs.add(
                        "InvalidMaxBatchSize",
                        f"models[{i}].max_batch_size",
                        "max_batch_size",
                        m.max_batch_size,
                        f"exceeds step '{step.name}' max_batch_size {step.max_batch_size}",
                        f"<= {step.max_batch_size}",
                        "lower the ensemble's max_batch_size",
                    )
                step_in = {t.name for t in step.inputs}
                step_dtypes_in = {t.name: t.dtype for t in step.inputs}
                step_dtypes_out = {t.name: t.dtype for t in step.outputs}
                step_out = {t.name for t in step.outputs}
                for k, v in s.input_map.items():
                    if k not in step_in:
                        errs.add(
                            "InvalidEnsembleMap",
                            f"{here}.input_map.{k}",
                            "input_map key",
                            k,
                            f"is not an input of '{step.name}'",
                            ", ".join(sorted(step_in)),
                            "use the step's input name",
                        )
                    elif v in produced and produced[v] != step_dtypes_in.get(k, produced[v]):
                        errs.add(
                            "InvalidEnsembleMap",
                            f"{here}.input_map.{k}",
                            "input_map value",
                            v,
                            f"is {produced[v]} but '{step.name}' input '{k}' is {step_dtypes_in[k]}",
                            step_dtypes_in[k],
                            "make the dtypes agree (cast in a step)",
                        )
                    elif v not in produced:
                        errs.add(
                            "InvalidEnsembleMap",
                            f"{here}.input_map.{k}",
                            "input_map value",
                            v,
                            "is not an ensemble input nor an earlier step's output",
                            ", ".join(sorted(produced)),
                            "order the steps so producers come first",
                        )
                missing = step_in - set(s.input_map)
                if missing:
                    errs.add(
                        "InvalidEnsembleMap",
                        f"{here}.input_map",
                        "input_map",
                        s.input_map,
                        f"leaves inputs of '{step.name}' unmapped: {', '.join(sorted(missing))}",
                        ", ".join(sorted(step_in)),
                        "map every step input",
                    )
                for k, v in s.output_map.items():
                    if k not in step_out:
                        errs.add(
                            "InvalidEnsembleMap",
                            f"{here}.output_map.{k}",
                            "output_map key",
                            k,
                            f"is not an output of '{step.name}'",
                            ", ".join(sorted(step_out)),
                            "use the step's output name",
                        )
                    produced[v] = step_dtypes_out.get(k, "")
            for o, t in enumerate(m.outputs):
                if t.name in produced and produced[t.name] and produced[t.name] != t.dtype:
                    errs.add(
                        "InvalidEnsembleMap",
                        f"models[{i}].outputs[{o}].dtype",
                        "ensemble output",
                        t.name,
                        f"is declared {t.dtype} but its step produces {produced[t.name]}",
                        produced[t.name],
                        "declare the step output's dtype",
                    )
                if t.name not in produced:
                    errs.add(
                        "InvalidEnsembleMap",
                        f"models[{i}].outputs[{o}].name",
                        "ensemble output",
                        t.name,
                        "is produced by no step",
                        ", ".join(sorted(produced)),
                        "map a step output to it",
                    )
        self._check_cycles(by_name, errs)
        for i, e in enumerate(self.endpoints):
            here = f"endpoints[{i}]"
            if not e.models:
                errs.add(
                    "MissingField",
                    f"{here}.models",
                    "models",
                    [],
                    "is empty",
                    "model names",
                    "list the models",
                )
            if not e.instance_types:
                errs.add(
                    "MissingField",
                    f"{here}.instance_types",
                    "instance_types",
                    [],
                    "is empty",
                    "e.g. ml.g5.xlarge",
                    "list the instance types",
                )
            ok = True
            for j, name in enumerate(e.models):
                if name not in by_name:
                    close = difflib.get_close_matches(name, list(by_name), n=1)
                    errs.add(
                        "UnknownModelReference",
                        f"{here}.models[{j}]",
                        "model",
                        name,
                        "is not a declared model",
                        ", ".join(by_name),
                        f"did you mean '{close[0]}'?" if close else "declare the model",
                    )
                    ok = False
            if not ok:
                continue
            if e.is_multi_model:
                owner: dict[str, str] = {}
                for name in e.models:
                    try:
                        members = self.closure(name)
                    except KeyError:
                        continue
                    for member in members:
                        if member in owner and owner[member] != name:
                            errs.add(
                                "DuplicateModelInEndpoint",
                                f"{here}.models",
                                "model name",
                                member,
                                f"appears in the archives of both '{owner[member]}' and '{name}'",
                                "model names unique across the endpoint",
                                "give each archive's models their own names (metrics of equal names merge)",
                            )
                        owner.setdefault(member, name)
                if len(set(e.models)) != len(e.models):
                    errs.add(
                        "DuplicateModelInEndpoint",
                        f"{here}.models",
                        "models",
                        list(e.models),
                        "lists a target model twice",
                        "unique entries",
                        "remove the duplicate",
                    )
            else:
                tops = list(e.models)
                if e.default_model is None and len(tops) != 1:
                    errs.add(
                        "MissingDefaultModel",
                        f"{here}.default_model",
                        "default_model",
                        None,
                        f"is required with {len(tops)} models",
                        ", ".join(tops),
                        "name the model behind /invocations (for an ensemble, the ensemble)",
                    )
                if e.default_model is not None:
                    repo = {x for n in tops for x in self.closure(n)}
                    if e.default_model not in repo:
                        errs.add(
                            "UnknownModelReference",
                            f"{here}.default_model",
                            "default_model",
                            e.default_model,
                            "is not in the endpoint's repository",
                            ", ".join(sorted(repo)),
                            "list it in models",
                        )
            for it in e.instance_types:
                if not it.startswith("ml."):
                    errs.add(
                        "InvalidInstanceType",
                        f"{here}.instance_types",
                        "instance type",
                        it,
                        "is not a SageMaker instance type",
                        "e.g. ml.g5.xlarge",
                        "prefix it with ml.",
                    )
        names = [e.name for e in self.endpoints]
        for i, n in enumerate(names):
            if names.index(n) != i:
                errs.add(
                    "DuplicateEndpointName",
                    f"endpoints[{i}].name",
                    "endpoint name",
                    n,
                    "is already used",
                    "unique endpoint names",
                    "rename one of them",
                )

    def _check_cycles(self, by_name: dict[str, ModelSpec], errs: _Errors) -> None:
        state: dict[str, int] = {}

        def visit(n: str, trail: list[str]) -> None:
            if state.get(n) == 2 or n not in by_name:
                return
            if state.get(n) == 1:
                errs.add(
                    "EnsembleCycle",
                    f"models[{self.model_names.index(n)}].steps",
                    "ensemble",
                    n,
                    f"is part of a cycle: {' -> '.join([*trail, n])}",
                    "a DAG",
                    "remove the cycle",
                )
                return
            state[n] = 1
            for s in by_name[n].steps:
                visit(s.model, [*trail, n])
            state[n] = 2

        for n in by_name:
            visit(n, [])
