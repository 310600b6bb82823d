"""Which models stay resident on an instance: usable memory, each TargetModel's footprint, the packing.

One author for the residency estimate that ``cdk-triton capacity`` reports and the constructs'
working-set warning checks, so that both say the same number. Pure, standard library only.

It is an estimate, and these are its assumptions (the README's capacity use case states them too):

- SageMaker routes a TargetModel's requests to an instance where it is already loaded, loads it on
  another instance only when traffic asks for it, and unloads unused models from an instance only when
  that instance's memory runs short for a newly targeted model (SageMaker "How multi-model endpoints
  work" and "Set SageMaker AI multi-model endpoint model caching behavior"; the container answers 507
  and SageMaker unloads, per the "Custom Containers Contract for Multi-Model Endpoints"). So the fleet's
  cache is about the sum of its instances' memory, each model held once (:func:`pack`).
- One GPU's memory is not all the models': the fixed terms of ``gpu_costs`` are set aside, each with
  its source (the server's CUDA context, Triton's CUDA pool, each in-process backend's cuBLAS / cuDNN
  workspaces; a python-backend ``KIND_GPU`` instance adds its stub's own context to its footprint),
  then :data:`GPU_FRAGMENTATION` of the rest (the caching allocator's reserve above the peak: one
  pool per process, so a share of the total rather than a term per model; the H100 reading has
  reserved 619 MB for a 465 MB peak, an assumption for a full GPU).
- Host memory: Triton's own share (``sizing.SERVER_HOST_BYTES``) is set aside; a model counts there for
  its ``KIND_CPU`` instances (a GPU model's host copy while it loads is transient and not counted).
- A model's bytes are its GPU reading for the instance type's GPU when a readings report is given
  (``gpu_readings``: peak allocated), else the manifest's ``memory_bytes`` (weights + activation peak,
  or the files + I/O rule); a manifest without them (schema 1) falls back on the model's files
  (``size_bytes``), else on the archive's bytes (compressed: a floor), each labelled.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cdk_triton.config import gpu_costs, sizing, tables
from cdk_triton.config.manifest import ModelEntry, TargetModel
from cdk_triton.config.sizing import GiB

if TYPE_CHECKING:
    from cdk_triton.config.gpu_readings import GpuReadings

#: The formats whose backends a server is assumed to load when the caller does not say (every
#: in-process backend: the conservative side).
ALL_FORMATS = gpu_costs.in_process_formats()
#: Share of the rest kept free for the caching allocator's reserve above the peak (fragmentation).
GPU_FRAGMENTATION = 0.10

#: The footprint labels, strongest first: a footprint carries the weakest label of its parts. A GPU
#: reading (``gpu_readings``, labelled ``reading:<device>``) is stronger than any of them.
MEASURED = sizing.MEASURED
ESTIMATED = sizing.ESTIMATED
FILES = sizing.FILES  # no memory recorded (manifest schema 1): the model directory's bytes
ARCHIVE = "archive"  # neither: the compressed archive's bytes, a floor
SOURCES = (
    sizing.ACTIVATIONS,
    sizing.ACTIVATIONS_CPU,
    MEASURED,
    ESTIMATED,
    sizing.FILES_IO,
    FILES,
    ARCHIVE,
)
#: The prefix of the label of a figure taken from a GPU reading.
READING = "reading"


def source_rank(label: str) -> int:
    """The order of labels, strongest first (a reading 0; an unknown label as weak as an archive)."""
    if label.startswith(READING):
        return -1
    return SOURCES.index(label) if label in SOURCES else len(SOURCES)


ASSUMPTIONS = (
    "SageMaker routes a TargetModel's requests to an instance that has it loaded and unloads unused models "
    "only when an instance runs short of memory (SageMaker 'How multi-model endpoints work', 'multi-model "
    "caching'): the fleet caches about the sum of its instances' usable memory, each model once",
    "usable GPU memory = (GPU memory - the server's fixed terms: CUDA context "
    f"{gpu_costs.CUDA_CONTEXT.bytes / 1e6:.0f} MB, Triton's CUDA pool {gpu_costs.TRITON_CUDA_POOL.bytes / 1e6:.0f} MB, "
    f"each backend's cuBLAS/cuDNN workspaces {gpu_costs.BACKEND_COSTS['libtorch'].bytes / 1e6:.0f} MB; H100 "
    f"reading 2026-11-27) x {1 - GPU_FRAGMENTATION:.2f} (allocator reserve: an assumption); each KIND_GPU "
    "python-backend instance adds its stub process's own CUDA context",
    f"usable host memory = host memory - {sizing.SERVER_HOST_BYTES / GiB:.0f} GiB for the Triton server; "
    "a model counts there for its KIND_CPU instances",
    "a model's bytes: its GPU reading's peak allocated bytes for the instance type's GPU (--gpu-readings), "
    "else memory_bytes of the manifest (weights + activation peak, or files + I/O), else its files "
    "(size_bytes), else its archive's compressed bytes, labelled; x its instance_group count",
)


@dataclass(frozen=True, kw_only=True, slots=True)
class Usable:
    """What one instance offers the models (bytes), after the server's share."""

    instance_type: str
    gpu_bytes: int  # per GPU (an MME has one); 0 on a CPU instance
    host_bytes: int
    gpu_count: int


def usable_memory(instance_type: str, formats: Iterable[str] = ALL_FORMATS) -> Usable | None:
    """The usable GPU (per GPU) and host memory of ``instance_type`` for a server serving models of
    ``formats`` (``gpu_costs.server_bytes``: default, every in-process backend); None when the table
    lacks the type."""
    info = tables.instance_type_info(instance_type)
    if info is None:
        return None
    fixed = gpu_costs.server_bytes(formats)
    gpu = max(int((info.gpu_memory_gib * GiB - fixed) * (1 - GPU_FRAGMENTATION)), 0)
    host = max(info.host_memory_gib * GiB - sizing.SERVER_HOST_BYTES, 0)
    return Usable(instance_type=instance_type, gpu_bytes=gpu, host_bytes=host, gpu_count=info.gpu_count)


@dataclass(frozen=True, kw_only=True, slots=True)
class Footprint:
    """What one TargetModel holds once loaded: GPU bytes, host bytes, and how the bytes are known."""

    name: str
    gpu_bytes: int
    host_bytes: int
    source: str  # one of SOURCES: the weakest of its models'

    @property
    def total_bytes(self) -> int:
        return self.gpu_bytes + self.host_bytes


def model_bytes(
    entry: ModelEntry | None, *, readings: GpuReadings | None = None, instance_type: str | None = None
) -> tuple[int | None, str]:
    """(bytes one instance of the model holds, label): its GPU reading on ``instance_type``'s GPU when
    ``readings`` has one (labelled ``reading:<device> peak allocated``), else memory_bytes, else
    size_bytes (``sizing.recorded_model_bytes``, the one author of that rule), else (None, archive)."""
    if entry is not None and readings is not None:  # the readings' module: loaded with a report only
        from cdk_triton.config import gpu_readings

        read = gpu_readings.model_reading(readings, instance_type, entry.name)
        if read is not None:
            return read
    nbytes, label = sizing.recorded_model_bytes(entry)
    return nbytes, label or ARCHIVE


def instance_counts(config: Mapping[str, object]) -> tuple[int, int]:
    """(instances on the GPU, instances on the host) of one model's ``instance_group`` (Triton's default,
    no groups: one instance on the GPU)."""
    groups = config.get("instance_group") or []
    if not isinstance(groups, list) or not groups:
        return 1, 0
    gpu = cpu = 0
    for g in groups:
        if not isinstance(g, Mapping):
            continue
        count = int(str(g.get("count", 1)))
        if str(g.get("kind", "KIND_GPU")) == "KIND_CPU":
            cpu += count
        else:
            gpu += count
    return gpu, cpu


def _weakest(labels: Iterable[str]) -> str:
    return max(labels, key=source_rank, default=ARCHIVE)


def target_footprint(
    name: str,
    target: TargetModel,
    models: Mapping[str, ModelEntry],
    *,
    has_gpu: bool = True,
    readings: GpuReadings | None = None,
    instance_type: str | None = None,
) -> Footprint:
    """The footprint of one TargetModel archive: the sum over its models (an ensemble and its steps) of
    bytes x instances, plus each KIND_GPU python-backend instance's stub context (``gpu_costs``). A
    model of unknown bytes makes the whole archive fall back on its compressed size."""
    gpu = host = 0
    labels = []
    for m in target.models:
        entry = models.get(m)
        nbytes, label = model_bytes(entry, readings=readings, instance_type=instance_type)
        if nbytes is None:
            return _archive_only(name, target, has_gpu)
        on_gpu, on_host = instance_counts(entry.config if entry else {})
        if not has_gpu:
            on_gpu, on_host = 0, on_gpu + on_host
        gpu += (nbytes + gpu_costs.instance_bytes(entry.format if entry else "")) * on_gpu
        host += nbytes * on_host
        labels.append(label)
    if not labels:
        return _archive_only(name, target, has_gpu)
    return Footprint(name=name, gpu_bytes=gpu, host_bytes=host, source=_weakest(labels))


def _archive_only(name: str, target: TargetModel, has_gpu: bool) -> Footprint:
    size = target.size_bytes
    return Footprint(
        name=name, gpu_bytes=size if has_gpu else 0, host_bytes=0 if has_gpu else size, source=ARCHIVE
    )


def fits(fp: Footprint, usable: Usable) -> bool:
    """Whether the footprint fits one empty instance at all."""
    return fp.gpu_bytes <= usable.gpu_bytes and fp.host_bytes <= usable.host_bytes


@dataclass(frozen=True, kw_only=True, slots=True)
class Packing:
    """Footprints placed on instances: ``instances[i]`` lists the names resident on instance ``i``."""

    instances: list[list[str]]
    unplaced: list[str]  # did not fit in the instances allowed (or on any instance)
    gpu_used: list[int]
    host_used: list[int]


def pack(footprints: Sequence[Footprint], usable: Usable, *, max_instances: int | None = None) -> Packing:
    """First fit, in the order given: each footprint goes to the first instance with room (GPU and host),
    a new instance opens while ``max_instances`` allows. Sorted by decreasing size this is first-fit
    decreasing (at most 11/9 of the optimum + 1 instances); sorted by decreasing traffic it keeps the
    most requested models resident."""
    instances: list[list[str]] = []
    gpu_used: list[int] = []
    host_used: list[int] = []
    unplaced: list[str] = []
    for fp in footprints:
        if not fits(fp, usable):
            unplaced.append(fp.name)
            continue
        for i in range(len(instances)):
            if (
                gpu_used[i] + fp.gpu_bytes <= usable.gpu_bytes
                and host_used[i] + fp.host_bytes <= usable.host_bytes
            ):
                instances[i].append(fp.name)
                gpu_used[i] += fp.gpu_bytes
                host_used[i] += fp.host_bytes
                break
        else:
            if max_instances is not None and len(instances) >= max_instances:
                unplaced.append(fp.name)
                continue
            instances.append([fp.name])
            gpu_used.append(fp.gpu_bytes)
            host_used.append(fp.host_bytes)
    return Packing(instances=instances, unplaced=unplaced, gpu_used=gpu_used, host_used=host_used)


def by_size(footprints: Iterable[Footprint]) -> list[Footprint]:
    """Largest first (ties by name): the order of first-fit decreasing."""
    return sorted(footprints, key=lambda f: (-max(f.gpu_bytes, f.host_bytes), f.name))


def instances_to_hold_all(footprints: Sequence[Footprint], usable: Usable) -> int | None:
    """Instances that keep every footprint resident at once (first-fit decreasing); None when one of
    them fits no instance of the type; 0 for none."""
    packing = pack(by_size(footprints), usable)
    return None if packing.unplaced else len(packing.instances)


def lower_bound(footprints: Sequence[Footprint], usable: Usable) -> int:
    """The fewest instances any packing could need: total bytes over one instance's (GPU and host)."""
    gpu = sum(f.gpu_bytes for f in footprints)
    host = sum(f.host_bytes for f in footprints)
    need = 0
    if usable.gpu_bytes:
        need = max(need, math.ceil(gpu / usable.gpu_bytes))
    if usable.host_bytes:
        need = max(need, math.ceil(host / usable.host_bytes))
    return need
