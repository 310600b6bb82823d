"""The model declaration: one Triton model to build (``ModelSpec``) and an ensemble's steps."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from cdk_triton.config import formats, python_env, tables
from cdk_triton.config.declaration.options import (
    DynamicBatching,
    InstanceGroup,
    OnnxOptions,
    SampleSpec,
    TensorRTOptions,
    Warmup,
)
from cdk_triton.config.declaration.sequence import SequenceBatching
from cdk_triton.config.declaration.source import ModelSource
from cdk_triton.config.declaration.tensors import TensorSpec, tensors_from_list
from cdk_triton.config.declaration.vocabulary import TORCHSCRIPT_MODES
from cdk_triton.config.layout import MODEL_NAME_RULE, is_model_name
from cdk_triton.config.parse import Errors, check_keys, closest, is_mapping, one_of, str_map, typed

T = TypeVar("T")


@dataclass(frozen=True, kw_only=True, slots=True)
class EnsembleStep:
    """One ensemble step: ``input_map`` step input -> ensemble tensor, ``output_map`` step output ->
    ensemble tensor (Triton's own direction of both maps)."""

    model: str
    input_map: dict[str, str]
    output_map: dict[str, str]
    model_version: int = -1

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: Errors) -> EnsembleStep | None:
        if not is_mapping(d, path, "step", "model, input_map, output_map", errs):
            return None
        check_keys(d, cls, path, errs)
        model = typed(d, "model", str, path, errs, required=True)
        im = str_map(d.get("input_map"), f"{path}.input_map", errs)
        om = str_map(d.get("output_map"), f"{path}.output_map", errs)
        if model is None:
            return None
        return cls(
            model=model,
            input_map=im,
            output_map=om,
            model_version=typed(d, "model_version", int, path, errs, default=-1),
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelSpec:
    """One Triton model to build.

    Attributes:
        name: the model directory name (unique in the declaration).
        format: a format of the format table (``cdk_triton.config.formats``): torchscript, onnx, tensorrt,
            python or ensemble.
        source: where the model comes from (none for an ensemble).
        inputs / outputs: the declared tensors (cross-checked with the exported artifact).
        max_batch_size: 0 = no batching; > 0 needs a leading batch dim on every tensor. Default: 0.
        dynamic_batching: Default: off.
        sequence_batching: Triton's sequence batcher for stateful models (never with dynamic_batching).
            Default: off.
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
        requirements: (python) PEP 508 lines the build packs into the model's execution environment
            (wheels only; numpy stays the container's). Default: none (standard library and numpy).
        calls: (python) the models its code calls through business logic scripting
            (``pb_utils.InferenceRequest(model_name=...)``): packaged with it, checked against its code.
            Default: none.
    """

    name: str
    format: str
    source: ModelSource | None = None
    inputs: tuple[TensorSpec, ...] = ()
    outputs: tuple[TensorSpec, ...] = ()
    max_batch_size: int = 0
    dynamic_batching: DynamicBatching | None = None
    sequence_batching: SequenceBatching | None = None
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
    requirements: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()

    @property
    def dependencies(self) -> list[str]:
        """The models this one needs in its repository: an ensemble's steps, a python model's calls."""
        return [s.model for s in self.steps] + list(self.calls)

    @property
    def row(self) -> formats.Format:
        """The format's registry row."""
        return formats.get(self.format)

    @property
    def is_ensemble(self) -> bool:
        """Whether the model is composed of other models (Triton's ensemble scheduling)."""
        return self.row.kind == formats.COMPOSED

    @classmethod
    def from_dict(cls, d: Any, path: str, errs: Errors) -> ModelSpec | None:
        if not is_mapping(d, path, "model", "name, format, source, inputs, ...", errs):
            return None
        check_keys(d, cls, path, errs)
        name = _name(d, path, errs)
        fmt = _format(d, path, errs)
        source = _block(d, "source", ModelSource.from_dict, None, path, errs)
        ins = tensors_from_list(d.get("inputs"), f"{path}.inputs", errs)
        outs = tensors_from_list(d.get("outputs"), f"{path}.outputs", errs)
        mbs, db = _batching(d, path, errs)
        groups = _entries(d, "instance_groups", InstanceGroup.from_dict, path, errs)
        warm = _entries(d, "warmup", Warmup.from_dict, path, errs)
        params = _pytorch_parameters(d, fmt, path, errs)
        mode = typed(d, "torchscript_mode", str, path, errs, default="trace")
        one_of(
            errs,
            path,
            "torchscript_mode",
            mode,
            TORCHSCRIPT_MODES,
            "InvalidOption",
            "a TorchScript mode",
            "use trace",
        )
        steps = _entries(d, "steps", EnsembleStep.from_dict, path, errs)
        spec_onnx = _block(d, "onnx", OnnxOptions.from_dict, OnnxOptions(), path, errs)
        spec_trt = _block(d, "tensorrt", TensorRTOptions.from_dict, TensorRTOptions(), path, errs)
        sample = _block(d, "sample", SampleSpec.from_dict, SampleSpec(), path, errs)
        seq = _block(d, "sequence_batching", SequenceBatching.from_dict, None, path, errs)
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
            sequence_batching=seq,
            instance_groups=tuple(g for g in groups if g),
            warmup=tuple(w for w in warm if w),
            pytorch_parameters=params,
            torchscript_mode=mode,
            onnx=spec_onnx,
            tensorrt=spec_trt,
            response_cache=typed(d, "response_cache", bool, path, errs, default=False),
            sample=sample,
            steps=tuple(s for s in steps if s),
            optional=typed(d, "optional", bool, path, errs, default=False),
            requirements=_requirements(d, fmt, path, errs),
            calls=_calls(d, fmt, path, errs),
        )
        spec._validate_own(path, errs)
        return spec

    def _validate_own(self, path: str, errs: Errors) -> None:
        """The checks that need the whole model (not its neighbours: see ``rules``)."""
        if self.is_ensemble:
            _check_ensemble_has_steps_only(self, path, errs)
        else:
            _check_source_fits_format(self, path, errs)
        _check_tensors_declared(self, path, errs)
        _check_tensor_names_and_dtypes(self, path, errs)
        _check_tensorrt_shape_ranges(self, path, errs)
        if self.sequence_batching is not None:
            _check_sequence_batching(self, self.sequence_batching, f"{path}.sequence_batching", errs)

    @property
    def has_dynamic_axes(self) -> bool:
        """Whether an input or output has a dynamic (-1) dim besides the batch dim."""
        return any(t.dynamic_axes for t in (*self.inputs, *self.outputs))

    def warnings(self) -> list[str]:
        """What the build should say about this model without failing (documented limits)."""
        out = []
        if self.dynamic_batching is not None and any(t.dynamic_axes for t in self.inputs):
            out.append(
                f"model '{self.name}': inputs with a dynamic non-batch dim and dynamic_batching: Triton "
                "batches only requests of equal shape (requests of different lengths run in separate "
                "batches); pad requests to a few lengths, or use a backend that supports ragged batching "
                "(allow_ragged_batch; not onnxruntime or pytorch)"
            )
        return out


# ---------------------------------------------------------------------------- reading the fields


def _name(d: dict[str, Any], path: str, errs: Errors) -> str | None:
    name = typed(d, "name", str, path, errs, required=True)
    if name is not None and not is_model_name(name):
        errs.add(
            "InvalidModelName",
            f"{path}.name",
            "model name",
            name,
            "is not a valid model directory name",
            MODEL_NAME_RULE,
            "rename the model",
        )
    return name


def _format(d: dict[str, Any], path: str, errs: Errors) -> str | None:
    """The format, or None when missing or unknown (an UnknownFormat error naming the closest)."""
    fmt = typed(d, "format", str, path, errs, required=True)
    if fmt is not None and fmt not in formats.FORMATS:
        close = closest(fmt, formats.names())
        errs.add(
            "UnknownFormat",
            f"{path}.format",
            "format",
            fmt,
            "is not a model format",
            formats.listed(),
            f"use {close}" if close else "use one of the allowed formats",
        )
        return None
    return fmt


def _block(
    d: dict[str, Any], key: str, parse: Callable[[Any, str, Errors], T], default: T, path: str, errs: Errors
) -> T:
    """A nested mapping parsed by ``parse``, or ``default`` when the key is absent or null."""
    return parse(d[key], f"{path}.{key}", errs) if d.get(key) is not None else default


def _entries(
    d: dict[str, Any], key: str, parse: Callable[[Any, str, Errors], T | None], path: str, errs: Errors
) -> list[T | None]:
    """Each entry of a list parsed by ``parse`` (None where one could not be read)."""
    return [
        parse(x, f"{path}.{key}[{i}]", errs)
        for i, x in enumerate(typed(d, key, list, path, errs, default=[]))
    ]


def _batching(d: dict[str, Any], path: str, errs: Errors) -> tuple[int, DynamicBatching | None]:
    """``max_batch_size`` and ``dynamic_batching``, checked against each other."""
    mbs = typed(d, "max_batch_size", int, path, errs, default=0)
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
    return mbs, db


def _python_only(
    key: str, value: list[Any], fmt: str | None, path: str, errs: Errors, *, fix: str, what: str = ""
) -> None:
    """``InvalidOption`` when ``key`` (a non-empty list) is given to a model whose format is not a python
    model's (``what``: the feature, in parentheses after "python models")."""
    if value and fmt is not None and formats.get(fmt).kind != formats.COPIED:
        errs.add(
            "InvalidOption", f"{path}.{key}", key, value, f"only apply to python models{what}, not {fmt}",
            "format: python", fix,
        )  # fmt: skip


def _requirements(d: dict[str, Any], fmt: str | None, path: str, errs: Errors) -> tuple[str, ...]:
    """The python model's requirement lines: PEP 508 names with optional extras, versions and markers;
    no URL, path or pip option, nothing the container provides (numpy), python models only."""
    lines = typed(d, "requirements", list, path, errs, default=[])
    _python_only(
        "requirements",
        lines,
        fmt,
        path,
        errs,
        fix="remove them, or move the code that needs them into a python model",
    )
    out: list[str] = []
    for i, line in enumerate(lines):
        here = f"{path}.requirements[{i}]"
        name = python_env.distribution_name(line) if isinstance(line, str) else None
        if name is None:
            errs.add(
                "InvalidRequirement",
                here,
                "requirement",
                line,
                "is not a PEP 508 requirement cdk-triton packs",
                "a name with optional [extras], version specifiers and ; marker (no URL, path or pip option)",
                "write it as name==version (put local wheels in the wheelhouse: CDK_TRITON_WHEELHOUSE)",
            )
        elif name in python_env.CONTAINER_PACKAGES:
            errs.add(
                "ContainerRequirement",
                here,
                "requirement",
                line,
                f"names {name}, which the Triton container provides to every python model",
                f"packages other than {', '.join(sorted(python_env.CONTAINER_PACKAGES))}",
                "remove it (the container's numpy is used)",
            )
        else:
            out.append(line)
    return tuple(out)


def _calls(d: dict[str, Any], fmt: str | None, path: str, errs: Errors) -> tuple[str, ...]:
    """The models a python model calls (business logic scripting): names, each once; python models only
    (which names are declared, and cycles: ``graph_rules.check_calls``)."""
    names = typed(d, "calls", list, path, errs, default=[])
    _python_only(
        "calls",
        names,
        fmt,
        path,
        errs,
        what=" (business logic scripting)",
        fix="remove them, or chain the models with an ensemble's steps",
    )
    out: list[str] = []
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name:
            errs.add(
                "InvalidType", f"{path}.calls[{i}]", "called model", name, "is not a model name",
                "a declared model's name", "write the callee's name",
            )  # fmt: skip
        elif name not in out:
            out.append(name)
    return tuple(out)


def _pytorch_parameters(d: dict[str, Any], fmt: str | None, path: str, errs: Errors) -> dict[str, str]:
    """The PyTorch backend parameters as strings; unknown or removed names and non-TorchScript
    formats are errors."""
    params: dict[str, str] = {}
    for k, v in typed(d, "pytorch_parameters", dict, path, errs, default={}).items():
        _check_pytorch_parameter(k, f"{path}.pytorch_parameters.{k}", errs)
        params[str(k)] = ("true" if v else "false") if isinstance(v, bool) else str(v)
    if params and fmt is not None and formats.get(fmt).backend != "pytorch":
        errs.add(
            "InvalidOption",
            f"{path}.pytorch_parameters",
            "pytorch_parameters",
            sorted(params),
            f"only apply to torchscript models, not {fmt}",
            "format: torchscript",
            "remove them",
        )
    return params


def _check_pytorch_parameter(k: Any, here: str, errs: Errors) -> None:
    """A name some release reads (which releases: ``rules.check_pytorch_parameters_in_release``)."""
    known = list(tables.pytorch_parameters())
    if k not in known:
        close = closest(str(k), known)
        errs.add(
            "UnknownPyTorchParameter",
            here,
            "pytorch parameter",
            k,
            "is not a PyTorch backend parameter",
            ", ".join(known),
            f"did you mean '{close}'?" if close else "remove it",
        )


# ---------------------------------------------------------------------------- checks of one model


def _check_sequence_batching(spec: ModelSpec, sb: SequenceBatching, path: str, errs: Errors) -> None:
    """Sequence batching: not with dynamic batching nor on an ensemble, implicit state only where the
    backend keeps it, control tensors apart from the declared inputs, oldest batches within max_batch_size."""
    if spec.dynamic_batching is not None:
        errs.add(
            "InvalidSequenceBatching",
            path,
            "sequence_batching",
            True,
            "cannot be combined with dynamic_batching (a model has one scheduler: dynamic batching for "
            "stateless models, sequence batching for stateful ones)",
            "one of dynamic_batching, sequence_batching",
            "remove dynamic_batching (the oldest strategy batches across sequences)",
        )
    if spec.is_ensemble:
        errs.add(
            "InvalidSequenceBatching",
            path,
            "sequence_batching",
            True,
            "does not apply to an ensemble (it uses ensemble scheduling)",
            "a step model",
            "declare sequence_batching on the stateful step model",
        )
    if sb.state and not spec.row.implicit_state:
        errs.add(
            "InvalidSequenceBatching",
            f"{path}.state",
            "state",
            [s.input_name for s in sb.state],
            f"is implicit state, which the {spec.format} backend does not keep",
            ", ".join(f"format: {f}" for f in formats.where(implicit_state=True)),
            "keep the state inside the model (python: a dict per correlation id) and remove state",
        )
    declared = {t.name for t in spec.inputs}
    for kind, name in sb.control_inputs.names.items():
        if name in declared:
            errs.add(
                "InvalidSequenceBatching",
                f"{path}.control_inputs.{kind}",
                kind,
                name,
                "is also a declared input; Triton supplies control tensors itself",
                "a name that is not in inputs",
                "remove it from inputs",
            )
    oldest = sb.oldest
    if oldest is not None and any(p > spec.max_batch_size for p in oldest.preferred_batch_sizes):
        errs.add(
            "PreferredBatchTooLarge",
            f"{path}.oldest.preferred_batch_sizes",
            "preferred_batch_sizes",
            list(oldest.preferred_batch_sizes),
            f"exceeds max_batch_size {spec.max_batch_size}",
            f"sizes up to {spec.max_batch_size}",
            "lower the preferred sizes or raise max_batch_size",
        )


def _check_tensorrt_shape_ranges(spec: ModelSpec, path: str, errs: Errors) -> None:
    """A TensorRT plan needs an optimization profile for every dynamic input dim: a shape_range."""
    if not spec.row.builds_plans:
        return
    for i, t in enumerate(spec.inputs):
        if t.dynamic_axes and t.shape_range is None:
            errs.add(
                "MissingShapeRange",
                f"{path}.inputs[{i}].shape_range",
                "shape_range",
                None,
                f"is required for input '{t.name}' with shape {list(t.shape)}: a TensorRT plan needs the "
                "min/opt/max size of each dynamic dim (its optimization profile)",
                "{min: [...], opt: [...], max: [...]} parallel to shape",
                "add shape_range, e.g. {min: [1], opt: [64], max: [128]} for shape [-1]",
            )


def _check_ensemble_has_steps_only(spec: ModelSpec, path: str, errs: Errors) -> None:
    """An ensemble is its steps: no source, at least one step."""
    if spec.source is not None:
        errs.add(
            "SourceFormatMismatch",
            f"{path}.source",
            "source",
            spec.source.kind,
            "is not allowed on an ensemble",
            "no source (an ensemble is its steps)",
            "remove source",
        )
    if not spec.steps:
        errs.add(
            "MissingField",
            f"{path}.steps",
            "steps",
            None,
            "is required for an ensemble",
            "a list of steps",
            "add the steps",
        )


def _check_source_fits_format(spec: ModelSpec, path: str, errs: Errors) -> None:
    """A non-ensemble has no steps and a source that can produce its format."""
    fmt, src = spec.format, spec.source
    if spec.steps:
        errs.add(
            "InvalidOption",
            f"{path}.steps",
            "steps",
            len(spec.steps),
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
        return
    allowed = spec.row.source_kinds
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


def _check_tensors_declared(spec: ModelSpec, path: str, errs: Errors) -> None:
    for group, tensors in (("inputs", spec.inputs), ("outputs", spec.outputs)):
        if not tensors:
            errs.add(
                "MissingField",
                f"{path}.{group}",
                group,
                None,
                "is required",
                "a list of tensors",
                f"declare every {group[:-1]} with name, dtype and shape",
            )


def _check_tensor_names_and_dtypes(spec: ModelSpec, path: str, errs: Errors) -> None:
    """Tensor names are unique per group; STRING tensors only in python models and ensembles."""
    fmt = spec.format
    for group, tensors in (("inputs", spec.inputs), ("outputs", spec.outputs)):
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
            if t.dtype == "STRING" and spec.row.kind == formats.EXPORTED:
                errs.add(
                    "UnknownDtype",
                    f"{path}.{group}[{i}].dtype",
                    "dtype",
                    t.dtype,
                    f"is not supported for {fmt} models",
                    "numeric types",
                    "use a python model for strings",
                )
