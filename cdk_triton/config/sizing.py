"""Host limits sized from the instance and model facts: startup timeouts, the ML storage volume, memory.

One author for the arithmetic that the endpoint constructs (and later hosting modes: inference
components, shadow variants) apply to a production variant; the build uses :func:`model_memory` for the
manifest. Pure, standard library only. Every constant is an assumption stated in the constructs README.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from cdk_triton.config import components, formats
from cdk_triton.errors import TritonValidationError

MB = 1000**2
GB = 1000**3
GiB = 1024**3

#: SageMaker's range for ModelDataDownloadTimeoutInSeconds and ContainerStartupHealthCheckTimeoutInSeconds.
TIMEOUT_MIN_S, TIMEOUT_MAX_S = 60, 3600
#: The fixed part of both timeouts: instance and container start before the bytes count.
TIMEOUT_BASE_S = 60
#: Assumed S3 -> instance throughput while downloading and unpacking the model data (one stream, gunzip).
DOWNLOAD_BYTES_PER_S = 50 * MB
#: Assumed throughput while Triton loads the repository (read from the volume, copy to host and GPU).
LOAD_BYTES_PER_S = 100 * MB
#: A computed timeout is emitted only above this: SageMaker publishes no number for its own defaults, and
#: its large-model guide asks for larger ones only for models above 30-40 GB; below, the template keeps
#: SageMaker's default (so small artifacts leave the template as it was).
EMIT_ABOVE_S = 600
#: The ML storage volume of EBS-only types: SageMaker's default and VolumeSizeInGB's maximum (GiB).
EBS_DEFAULT_VOLUME_GB, EBS_MAX_VOLUME_GB = 30, 512
#: Headroom on a sized EBS volume (filesystem overhead, Triton's logs and temporary files).
VOLUME_HEADROOM = 1.2
#: Host memory the Triton server itself holds before any model (process, CUDA context, pinned pool).
SERVER_HOST_BYTES = 2 * GiB

#: How a model's ``memory_bytes`` were found (the manifest's ``memory_source``). Schema 2 and 3 wrote
#: MEASURED / ESTIMATED (weight files + I/O at the largest batch, the same rule as FILES_IO, which
#: schema 4 writes under that name); schema 4 writes ACTIVATIONS where the build could run the eager
#: module on fake tensors (``builder/activations.py``).
MEASURED = "measured"
ESTIMATED = "estimated"
#: weight files + the peak of live tensors of one inference at max_batch_size (inputs, intermediates,
#: outputs), traced on fake tensors: the activation-aware estimate (schema 4)
ACTIVATIONS = "activations/fake-tensor"
#: the same peak counted on a CPU run of the module (its forward reads tensor values: fake tensors
#: cannot run it)
ACTIVATIONS_CPU = "activations/cpu-run"
#: weight files + inputs and outputs at max_batch_size: the stated fallback where activations cannot be
#: estimated (no factory module: a given file, a python model, an ensemble) (schema 4)
FILES_IO = "files+io"
#: Every memory_source a manifest may record.
MEMORY_SOURCES = (ACTIVATIONS, ACTIVATIONS_CPU, MEASURED, ESTIMATED, FILES_IO)

#: Bytes per element of Triton's data types (TYPE_STRING counted as 8: a length + short payload).
DTYPE_BYTES = {
    "TYPE_BOOL": 1,
    "TYPE_UINT8": 1,
    "TYPE_INT8": 1,
    "TYPE_UINT16": 2,
    "TYPE_INT16": 2,
    "TYPE_FP16": 2,
    "TYPE_BF16": 2,
    "TYPE_UINT32": 4,
    "TYPE_INT32": 4,
    "TYPE_FP32": 4,
    "TYPE_UINT64": 8,
    "TYPE_INT64": 8,
    "TYPE_FP64": 8,
    "TYPE_STRING": 8,
}


# ---------------------------------------------------------------------------- timeouts


def startup_seconds(nbytes: int, bytes_per_s: int) -> int:
    """``60 + ceil(nbytes / bytes_per_s)`` clamped to SageMaker's 60..3600 s."""
    raw = TIMEOUT_BASE_S + math.ceil(max(nbytes, 0) / bytes_per_s)
    return min(max(raw, TIMEOUT_MIN_S), TIMEOUT_MAX_S)


def over_maximum(nbytes: int, bytes_per_s: int) -> bool:
    """Whether the unclamped estimate exceeds SageMaker's 3600 s maximum."""
    return TIMEOUT_BASE_S + math.ceil(max(nbytes, 0) / bytes_per_s) > TIMEOUT_MAX_S


def model_data_download_timeout(artifact_bytes: int | None) -> int | None:
    """The default ModelDataDownloadTimeoutInSeconds for the model data (None: keep SageMaker's)."""
    if not artifact_bytes:
        return None
    s = startup_seconds(artifact_bytes, DOWNLOAD_BYTES_PER_S)
    return s if s > EMIT_ABOVE_S else None


def container_startup_health_check_timeout(model_bytes: int | None) -> int | None:
    """The default ContainerStartupHealthCheckTimeoutInSeconds for loading ``model_bytes`` (None: SageMaker's)."""
    if not model_bytes:
        return None
    s = startup_seconds(model_bytes, LOAD_BYTES_PER_S)
    return s if s > EMIT_ABOVE_S else None


# ---------------------------------------------------------------------------- the ML storage volume


def volume_need_bytes(*, artifact_bytes: int, unpacked_bytes: int, packaging: str | None) -> int:
    """What the ML storage volume (/opt/ml, /tmp) holds at start: the downloaded model data and, for a
    tar.gz, its unpacked copy beside it. The container image is not on it (it lives on the root volume)."""
    if packaging == "tar.gz":
        return artifact_bytes + unpacked_bytes
    return max(artifact_bytes, unpacked_bytes)


def sized_volume_gb(need_bytes: int, unit: int = GiB) -> int:
    """The volume in ``unit`` (an EBS "GB" is a GiB) that holds ``need_bytes`` with headroom (may exceed
    the maximum: the caller checks)."""
    return max(1, math.ceil(need_bytes * VOLUME_HEADROOM / unit))


# ---------------------------------------------------------------------------- inference components

#: MiB, the unit of an inference component's ``MinMemoryRequiredInMb`` (SageMaker's "MB" of host memory).
MiB = 1024**2
#: SageMaker's least ``MinMemoryRequiredInMb`` (``config/components.py``, from botocore's shape MemoryInMb).
COMPONENT_MIN_MEMORY_MB = components.MIN_MEMORY_MB
#: Headroom on a component's derived host memory (the same 20 % the sized ML storage volume gets).
COMPONENT_MEMORY_HEADROOM = VOLUME_HEADROOM


def component_memory_mb(models: Sequence[tuple[int | None, int]]) -> int | None:
    """The host memory one copy of a component reserves (``MinMemoryRequiredInMb``), in MiB.

    The rule of the host memory check (``placement.memory_warnings``): Triton's own share
    (SERVER_HOST_BYTES) plus, per model of the component's archive, its bytes x its copies in host
    memory (KIND_CPU instances, else the one copy read while it loads), with COMPONENT_MEMORY_HEADROOM;
    at least SageMaker's 128. ``models``: (bytes of one instance or None, copies in host memory).
    None when a model's size is unknown (the caller then asks for the prop).
    """
    if any(b is None for b, _ in models):
        return None
    need = SERVER_HOST_BYTES + sum((b or 0) * copies for b, copies in models)
    return max(COMPONENT_MIN_MEMORY_MB, math.ceil(need * COMPONENT_MEMORY_HEADROOM / MiB))


class SizedModel(Protocol):
    """What the memory rule reads of a built model (a manifest ``ModelEntry``)."""

    @property
    def memory_bytes(self) -> int | None: ...
    @property
    def size_bytes(self) -> int | None: ...
    @property
    def config(self) -> Mapping[str, Any]: ...


def host_copies(config: Mapping[str, Any]) -> int:
    """Copies of a model in host memory: its KIND_CPU instances, else one (the copy read while loading;
    ``placement``'s rule)."""
    groups = config.get("instance_group", []) or []
    return sum(int(g.get("count", 1)) for g in groups if str(g.get("kind", "KIND_GPU")) == "KIND_CPU") or 1


#: The label of a model's bytes when the manifest has no ``memory_bytes`` (schema 1): its files' bytes.
FILES = "files"


def recorded_model_bytes(m: SizedModel | None) -> tuple[int | None, str | None]:
    """(bytes one instance of a model holds, the label of that figure) from what the manifest records:
    its ``memory_bytes`` (labelled by its ``memory_source``), else its files' ``size_bytes`` (FILES),
    else (None, None): unknown.

    The one author of "memory_bytes, else size_bytes": capacity and the MME working set
    (``residency.model_bytes``, which adds GPU readings), the GPU/host oversubscription warnings, the
    sized startup timeout, the deploy verification's memory facts and the components' memory floor
    all read it."""
    if m is None:
        return None, None
    if m.memory_bytes is not None:
        return m.memory_bytes, getattr(m, "memory_source", None) or ESTIMATED
    if m.size_bytes is not None:
        return m.size_bytes, FILES
    return None, None


def component_model_sizes(models: Iterable[SizedModel]) -> list[tuple[int | None, int]]:
    """The (bytes of one instance, copies in host memory) of each model of a component's archive
    (:func:`recorded_model_bytes`); no model known is one of unknown size."""
    sizes = [(recorded_model_bytes(m)[0], host_copies(m.config)) for m in models]
    return sizes or [(None, 1)]


def component_min_memory_mb(declared: int | None, models: Iterable[SizedModel]) -> int | None:
    """A component's ``MinMemoryRequiredInMb``: as declared, else :func:`component_memory_mb` of its
    archive's models. The one rule of build (``builder.components``), synth (``TritonComponentsEndpoint``)
    and serve (``local.components``)."""
    return declared if declared is not None else component_memory_mb(component_model_sizes(models))


def component_fit_problems(
    models: Mapping[str, SizedModel],
    entry: Any,
    instance_type: str | None = None,
    path: str | None = None,
) -> list[TritonValidationError]:
    """``ComponentDoesNotFit`` for each component of an InferenceComponents manifest ``entry`` (an
    ``EndpointEntry``) whose requirements one instance of ``instance_type`` (default: every instance pool
    of the endpoint, since a copy may be placed on any; else its first type) cannot hold; memory by
    :func:`component_min_memory_mb` of ``models`` (the manifest's models by name; where a model's size is
    unknown, the rule on the known ones: a floor that already does not fit never will).
    Accelerators and CPU cores left unset are not judged (synth's defaults, 1, fit every type)."""
    pools = entry.instance_pools.instance_types if entry.instance_pools is not None else ()
    itypes = [instance_type] if instance_type else list(pools) or entry.instance_types[:1] or [""]
    where = path or f"manifest endpoint '{entry.name}'"
    out: list[TritonValidationError] = []
    for name, c in sorted(entry.components.items()):
        target = entry.target_models[c.target_model]
        archive = [models[m] for m in target.models if m in models]
        for itype in itypes:
            out += components.fit_problems(
                itype,
                component=name,
                accelerators=c.accelerators,
                cpu_cores=c.cpu_cores,
                memory_mb=_memory_at_least_mb(c.min_memory_mb, archive),
                path=f"{where} components.{name}",
            )
    return out


# ---------------------------------------------------------------------------- model memory


def _dims(raw: Any) -> list[int]:
    return [int(d) for d in raw or []]


def io_bytes(config: Mapping[str, Any]) -> tuple[int, bool]:
    """Bytes of the inputs and outputs of one request at the largest batch (``max_batch_size``, else 1),
    and whether every dimension is fixed (a ``-1`` dimension is counted as 1)."""
    batch = max(int(config.get("max_batch_size", 0) or 0), 1)
    total, fixed = 0, True
    for tensor in list(config.get("input", []) or []) + list(config.get("output", []) or []):
        dims = _dims(tensor.get("dims"))
        fixed = fixed and all(d >= 0 for d in dims)
        elems = math.prod(max(d, 1) for d in dims)
        total += elems * DTYPE_BYTES.get(str(tensor.get("data_type", "TYPE_FP32")), 4)
    return total * batch, fixed


def model_memory(
    fmt: str,
    files_bytes: int | None,
    config: Mapping[str, Any],
    activations: Mapping[str, Any] | None = None,
) -> tuple[int | None, str]:
    """(bytes one model instance holds at its largest batch, its ``memory_source``).

    The parameters are the artifact's weight files as built (their bytes are read from the files: a
    deterministic measure, unlike a peak RSS, which varies from run to run and would make manifests
    differ). To them come:

    - with ``activations`` (``{"peak_bytes", "method"}``, the build's ``builder.activations``: the peak
      of the tensors alive at once in one inference at ``max_batch_size``, inputs and outputs
      included): that peak, labelled ``activations/<method>`` (ACTIVATIONS for fake tensors);
    - else the stated fallback FILES_IO: the inputs and outputs at the largest batch (a python model's
      code bytes stand for its weights; an ensemble holds only its I/O, its steps count for themselves).
      Formats without an eager module (a given TorchScript / ONNX file, python, ensemble) take it.
    """
    if files_bytes is None:
        return None, FILES_IO
    row = formats.lookup(fmt)
    bearing = row is None or row.weight_bearing  # an unknown format's files are counted (conservative)
    weights = files_bytes if bearing else 0
    if activations is not None and bearing:
        return weights + int(activations["peak_bytes"]), f"activations/{activations['method']}"
    io, _fixed = io_bytes(config)
    return weights + io, FILES_IO


def _memory_at_least_mb(declared: int | None, models: Sequence[SizedModel]) -> int | None:
    """:func:`component_min_memory_mb`, else the same rule on the models of known size (None: none known)."""
    exact = component_min_memory_mb(declared, models)
    if exact is not None:
        return exact
    known = [(b, c) for b, c in component_model_sizes(models) if b is not None]
    return component_memory_mb(known) if known else None
