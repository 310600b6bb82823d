"""Model options: dynamic batching, instance groups, warm-up, ONNX/TensorRT export, sample and parity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cdk_triton.config.declaration.vocabulary import (
    ACCELERATOR_PRECISIONS,
    INSTANCE_KINDS,
    ONNX_EXPORTERS,
    PRECISIONS,
    WARMUP_DATA,
)
from cdk_triton.config.parse import Errors, check_keys, is_mapping, one_of, positive_ints, typed


@dataclass(frozen=True, kw_only=True, slots=True)
class DynamicBatching:
    """Triton's dynamic batcher. ``max_queue_delay_microseconds``: Default: 0 (Triton's default)."""

    preferred_batch_sizes: tuple[int, ...] = ()
    max_queue_delay_microseconds: int = 0
    preserve_ordering: bool = False

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: Errors) -> DynamicBatching | None:
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
        check_keys(d, cls, path, errs)
        pref = positive_ints(d, "preferred_batch_sizes", path, errs)
        delay = typed(d, "max_queue_delay_microseconds", int, path, errs, default=0)
        return cls(
            preferred_batch_sizes=tuple(pref),
            max_queue_delay_microseconds=delay,
            preserve_ordering=typed(d, "preserve_ordering", bool, path, errs, default=False),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class InstanceGroup:
    """One ``instance_group`` entry. Default: one instance on each GPU (KIND_GPU, count 1)."""

    kind: str = "KIND_GPU"
    count: int = 1
    gpus: tuple[int, ...] = ()

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: Errors) -> InstanceGroup | None:
        if not is_mapping(d, path, "instance_group", "kind, count, gpus", errs):
            return None
        check_keys(d, cls, path, errs)
        kind = typed(d, "kind", str, path, errs, default="KIND_GPU").upper()
        if not kind.startswith("KIND_"):
            kind = "KIND_" + kind
        one_of(
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
        count = typed(d, "count", int, path, errs, default=1)
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
        gpus = typed(d, "gpus", list, path, errs, default=[])
        return cls(kind=kind, count=count, gpus=tuple(gpus))


@dataclass(frozen=True, kw_only=True, slots=True)
class Warmup:
    """One ``model_warmup`` entry: every input filled with zeros or random data."""

    name: str = "warmup"
    batch_size: int = 1
    count: int = 1
    data: str = "zero"

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: Errors) -> Warmup | None:
        if not is_mapping(d, path, "warmup", "name, batch_size, count, data", errs):
            return None
        check_keys(d, cls, path, errs)
        data = typed(d, "data", str, path, errs, default="zero")
        one_of(
            errs, path, "data", data, WARMUP_DATA, "InvalidWarmup", "a warmup data kind", "use zero or random"
        )
        return cls(
            name=typed(d, "name", str, path, errs, default="warmup"),
            batch_size=typed(d, "batch_size", int, path, errs, default=1),
            count=typed(d, "count", int, path, errs, default=1),
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
    def from_dict(cls, d: Any, path: str, errs: Errors) -> OnnxOptions:
        if not is_mapping(d, path, "onnx", "opset, exporter, tensorrt_accelerator", errs):
            return cls()
        check_keys(d, cls, path, errs)
        exporter = typed(d, "exporter", str, path, errs, default="dynamo")
        one_of(
            errs,
            path,
            "exporter",
            exporter,
            ONNX_EXPORTERS,
            "InvalidOption",
            "an ONNX exporter",
            "use dynamo",
        )
        prec = typed(d, "tensorrt_precision", str, path, errs, default="fp16")
        one_of(
            errs,
            path,
            "tensorrt_precision",
            prec,
            ACCELERATOR_PRECISIONS,
            "UnknownPrecision",
            "a TensorRT accelerator precision",
            "use fp16",
        )
        return cls(
            opset=typed(d, "opset", int, path, errs),
            exporter=exporter,
            tensorrt_accelerator=typed(d, "tensorrt_accelerator", bool, path, errs, default=False),
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
    def from_dict(cls, d: Any, path: str, errs: Errors) -> TensorRTOptions:
        if not is_mapping(d, path, "tensorrt", "precision, workspace_mib, ...", errs):
            return cls()
        check_keys(d, cls, path, errs)
        prec = typed(d, "precision", str, path, errs, default="fp16")
        one_of(
            errs, path, "precision", prec, PRECISIONS, "UnknownPrecision", "a TensorRT precision", "use fp16"
        )
        return cls(
            precision=prec,
            workspace_mib=typed(d, "workspace_mib", int, path, errs, default=1024),
            opt_batch_size=typed(d, "opt_batch_size", int, path, errs),
            timing_cache=typed(d, "timing_cache", str, path, errs),
            plans=tuple(str(x) for x in typed(d, "plans", list, path, errs, default=[])),
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
    def from_dict(cls, d: Any, path: str, errs: Errors) -> SampleSpec:
        if not is_mapping(d, path, "sample", "seed, batch_size, atol, rtol", errs):
            return cls()
        check_keys(d, cls, path, errs)
        return cls(
            seed=typed(d, "seed", int, path, errs, default=0),
            batch_size=typed(d, "batch_size", int, path, errs, default=1),
            atol=typed(d, "atol", (int, float), path, errs),
            rtol=typed(d, "rtol", (int, float), path, errs),
        )
