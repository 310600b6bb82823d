"""The format table: one frozen row per Triton model format the build can produce.

A format is one of three kinds, each with the fields it requires (:data:`REQUIRED`):

- **exported** (torchscript, onnx, tensorrt): the build exports (or copies and inspects) an artifact
  with an exporter module of ``cdk_triton.builder.export``; Triton runs it with a backend whose
  version is a fact of the release table; the local endpoint serves it with a CPU stand-in.
- **copied** (python): the build copies the user's files into the version folder and checks what
  they import against the image.
- **composed** (ensemble): the build writes a config that chains other models; no artifact.

Adding a format is one row here (:func:`register`), one exporter module (the ``Exporter`` protocol of
``cdk_triton.builder.export``) and, to serve it locally, one CPU stand-in (a directory with a
``model.py`` python-based backend). The manifest schema's ``format`` enum and the README's Formats
table are checked against :data:`FORMATS` by tests. Every other module asks the row (``weight_bearing``,
``stub_per_instance``, ``gpu_checkable``, ``kind``, ``gpu_only``) and never compares a format's name
(``tests/unit/config/test_format_axis.py``). Standard library only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, fields

EXPORTED = "exported"
COPIED = "copied"
COMPOSED = "composed"
KINDS = (EXPORTED, COPIED, COMPOSED)

#: the values of ``Format.device_pinning`` (see its docstring)
DEVICE_PINNING = ("graph", "code", "architecture", "none")


@dataclass(frozen=True, kw_only=True, slots=True)
class Format:
    """One Triton model format.

    Attributes:
        name: the word a ``models.yaml`` writes in ``format:``.
        kind: ``exported``, ``copied`` or ``composed``.
        exporter: the dotted name of the build module that makes the artifact (``config`` cannot
            import ``builder``: the build imports it by name). Default: none.
        artifact: the artifact's file name in the version folder (``1/``). Default: none.
        platform: config.pbtxt ``platform``. Default: none (the config names ``backend`` instead).
        backend: the Triton backend serving it. Default: none (Triton's own scheduler).
        source_kinds: the ``source`` kinds that can produce it. Default: none (no source).
        gpu_only: built and run only on a GPU (no CPU runtime for parity or the ensemble check).
            Default: False.
        implicit_state: the backend keeps sequence-batching implicit state. Default: False.
        runs_onnx: Triton runs the ONNX file itself with ONNX Runtime (its opset and IR version are
            recorded and checked against the release; the TensorRT execution accelerator applies).
            Default: False.
        builds_plans: the artifact is a TensorRT plan, specific to one GPU architecture (prebuilt
            plans, shape ranges and ``opt_batch_size`` apply). Default: False.
        release_fact: the fact of the release table (``tables.TritonRelease``) that gives the
            backend's version. Default: none.
        cache_tools: the tools (distribution names) whose versions are in the cache key of its
            artifacts. Default: none.
        cpu_stand_in: the local endpoint's CPU stand-in: a directory holding a python-based
            backend ``model.py``, relative to ``cdk_triton/local/backends/`` or absolute; it is
            served under the name ``backend``. Default: none.
        cpu_threads: the config parameters that set the backend's intra-op and inter-op threads
            (the local endpoint's CPU overlay sets them). Default: none.
        tunable: ``cdk-triton tune`` may export a factory model to it. Default: False.
        files: (copied) the files the version folder must hold. Default: none.
        allowed_imports: (copied) the modules besides the standard library its files may import
            (the image has nothing else). Default: none.
        device_pinning: what can tie an artifact of this format to one device (a CPU, or GPU 0 of
            several): ``graph`` (device constants recorded in the artifact's graph: the build reads
            them and refuses them for GPU-placed models, ``DevicePinnedExport``), ``code`` (the
            user's code may name a device: the build warns, ``PythonDevicePinned``),
            ``architecture`` (a TensorRT plan is built for one GPU architecture: checked against the
            instance type's GPU, ``PlanArchitectureMismatch``, and never for a device index) or
            ``none`` (the format cannot record a device: an ONNX graph has no device; the runtime
            places it). Default: ``none``.
        weight_bearing: its version folder's files stand for the model's weights: sizing counts their
            bytes (and the activations measured on the eager model) in one instance's memory. A python
            model's code bytes stand for its weights; a composed model holds only its I/O. Default: True
            (the conservative side: a new format's files are counted).
        stub_per_instance: each KIND_GPU instance runs in a stub process of its own, with a CUDA
            context of its own (``gpu_costs.PYTHON_STUB``); otherwise the backend runs inside the
            server and costs its fixed bytes once per server (``gpu_costs.BACKEND_COSTS`` by
            ``release_fact``). Default: False.
        gpu_checkable: ``cdk-triton gpu-check`` runs the artifact on CUDA: the exporter module then
            implements ``device_unavailable()`` and ``device_runner(torch, m, artifact, device)``
            (``cdk_triton.builder.export.base.DeviceCheck``). Default: False.
        not_gpu_checked: why ``cdk-triton gpu-check`` does not run an artifact of this format on CUDA
            (when not ``gpu_checkable``). Default: none (a generic text: nothing of its own runs on a GPU).
        export_seconds: a model's export seconds before one was measured on the build machine (the
            parallel build's first estimate; measured on 2 shared cores). Default: 0.5.
    """

    name: str
    kind: str
    exporter: str | None = None
    artifact: str | None = None
    platform: str | None = None
    backend: str | None = None
    source_kinds: tuple[str, ...] = ()
    gpu_only: bool = False
    implicit_state: bool = False
    runs_onnx: bool = False
    builds_plans: bool = False
    release_fact: str | None = None
    cache_tools: tuple[str, ...] = ()
    cpu_stand_in: str | None = None
    cpu_threads: tuple[str, ...] = ()
    tunable: bool = False
    files: tuple[str, ...] = ()
    allowed_imports: frozenset[str] = frozenset()
    device_pinning: str = "none"
    weight_bearing: bool = True
    stub_per_instance: bool = False
    gpu_checkable: bool = False
    not_gpu_checked: str = ""
    export_seconds: float = 0.5

    def missing(self) -> list[str]:
        """The fields its kind requires that are empty (an unknown kind misses ``kind``)."""
        required = REQUIRED.get(self.kind)
        if required is None:
            return ["kind"]
        return [f for f in required if getattr(self, f) in (None, "", (), frozenset())]


#: kind -> the fields a row of that kind must fill
REQUIRED: dict[str, tuple[str, ...]] = {
    EXPORTED: (
        "exporter",
        "artifact",
        "backend",
        "source_kinds",
        "release_fact",
        "cache_tools",
        "cpu_stand_in",
    ),
    COPIED: ("exporter", "artifact", "backend", "source_kinds", "files", "allowed_imports"),
    COMPOSED: ("exporter", "platform"),
}

_EXPORT = "cdk_triton.builder.export"

#: name -> row, in the order formats are listed (errors, ``--formats``, the schema enum)
FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format(
            name="torchscript",
            kind=EXPORTED,
            exporter=f"{_EXPORT}.torchscript",
            artifact="model.pt",
            platform="pytorch_libtorch",
            backend="pytorch",
            source_kinds=("factory", "torchscript"),
            implicit_state=True,
            release_fact="libtorch",
            cache_tools=("torch",),
            cpu_stand_in="pytorch",
            cpu_threads=("INTRA_OP_THREAD_COUNT", "INTER_OP_THREAD_COUNT"),
            tunable=True,
            device_pinning="graph",
            gpu_checkable=True,
            export_seconds=0.05,
        ),
        Format(
            name="onnx",
            kind=EXPORTED,
            exporter=f"{_EXPORT}.onnx",
            artifact="model.onnx",
            platform="onnxruntime_onnx",
            backend="onnxruntime",
            source_kinds=("factory", "onnx"),
            implicit_state=True,
            runs_onnx=True,
            release_fact="onnxruntime",
            cache_tools=("torch", "onnx", "onnxscript", "onnxruntime"),
            cpu_stand_in="onnxruntime",
            cpu_threads=("intra_op_thread_count", "inter_op_thread_count"),
            tunable=True,
            gpu_checkable=True,
            export_seconds=0.8,
        ),
        Format(
            name="tensorrt",
            kind=EXPORTED,
            exporter=f"{_EXPORT}.tensorrt",
            artifact="model.plan",
            platform="tensorrt_plan",
            backend="tensorrt",
            source_kinds=("factory", "onnx"),
            gpu_only=True,
            implicit_state=True,
            builds_plans=True,
            release_fact="tensorrt",
            cache_tools=("torch", "onnx", "onnxscript", "onnxruntime", "tensorrt"),
            cpu_stand_in="tensorrt",
            tunable=True,
            device_pinning="architecture",
            not_gpu_checked="TensorRT plans: parity ran when the plan was built (on a GPU with TensorRT), not here",
            export_seconds=30.0,
        ),
        Format(
            name="python",
            kind=COPIED,
            exporter=f"{_EXPORT}.python",
            artifact="model.py",
            backend="python",
            source_kinds=("python",),
            release_fact="python",
            files=("model.py",),
            allowed_imports=frozenset({"numpy", "triton_python_backend_utils"}),
            device_pinning="code",
            stub_per_instance=True,
            not_gpu_checked="python models run their own code (Triton's python backend on the host's CPU)",
            export_seconds=0.02,
        ),
        Format(
            name="ensemble",
            kind=COMPOSED,
            exporter=f"{_EXPORT}.ensemble",
            platform="ensemble",
            weight_bearing=False,
            export_seconds=0.02,
        ),
    )
}


def get(name: str) -> Format:
    """The row of ``name``; KeyError for a format the table does not list (the declaration
    reports an unknown format as UnknownFormat before anything looks it up)."""
    return FORMATS[name]


def lookup(name: object) -> Format | None:
    """The row of ``name`` when it is a listed format, else None (a raw declaration's value)."""
    return FORMATS.get(name) if isinstance(name, str) else None


def is_composed(name: object) -> bool:
    """Whether ``name`` is a composed format (an ensemble): a raw declaration's value."""
    row = lookup(name)
    return row is not None and row.kind == COMPOSED


def is_gpu_only(name: object) -> bool:
    """Whether ``name`` is a format built and run only on a GPU: a raw declaration's value."""
    row = lookup(name)
    return row is not None and row.gpu_only


def gpu_only_names() -> tuple[str, ...]:
    """The formats built on the GPU job (``gpu_only``), in table order: what its ``--formats`` lists."""
    return where(gpu_only=True)


def names() -> tuple[str, ...]:
    """Every format, in table order."""
    return tuple(FORMATS)


def of_kind(kind: str) -> tuple[Format, ...]:
    """The rows of one kind, in table order."""
    return tuple(f for f in FORMATS.values() if f.kind == kind)


def where(**props: object) -> tuple[str, ...]:
    """The names of the rows whose fields equal ``props``, e.g. ``where(implicit_state=True)``."""
    return tuple(f.name for f in FORMATS.values() if all(getattr(f, k) == v for k, v in props.items()))


def listed() -> str:
    """The formats as an error text lists them: ``torchscript, onnx, ...``."""
    return ", ".join(FORMATS)


def by_platform() -> dict[str, str]:
    """config.pbtxt ``platform`` -> the backend serving it (the rows with both)."""
    return {f.platform: f.backend for f in FORMATS.values() if f.platform and f.backend}


def composed_platforms() -> frozenset[str]:
    """The config.pbtxt platforms of the composed formats (``ensemble``)."""
    return frozenset(str(f.platform) for f in of_kind(COMPOSED))


def register(row: Format) -> Format:
    """Add a format (the toy format of the tests; a plugin's). Refuses a name already listed or a
    row missing a field its kind requires (ValueError naming them)."""
    if row.name in FORMATS:
        raise ValueError(f"format '{row.name}' is already registered")
    if row.device_pinning not in DEVICE_PINNING:
        raise ValueError(
            f"format '{row.name}': device_pinning '{row.device_pinning}' is not one of {DEVICE_PINNING}"
        )
    missing = row.missing()
    if missing:
        raise ValueError(f"format '{row.name}' ({row.kind}) lacks {', '.join(missing)}")
    FORMATS[row.name] = row
    return row


def unregister(name: str) -> None:
    """Remove a format added with :func:`register`."""
    del FORMATS[name]


@contextlib.contextmanager
def registered(row: Format) -> Iterator[Format]:
    """``register(row)`` for the duration of a ``with`` block."""
    register(row)
    try:
        yield row
    finally:
        unregister(row.name)


FIELDS = tuple(f.name for f in fields(Format))
