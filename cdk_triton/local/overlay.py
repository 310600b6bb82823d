"""The declared CPU overlay: the only change the local endpoint makes to the built repository.

It touches exactly three things in each non-ensemble model's config.pbtxt, and one file: a python
model's packed environment, replaced by the same requirements packed for the local Python where the
target container's Python differs (:func:`swap_python_env`):

- ``instance_group``: one group ``{kind: KIND_CPU, count: N}`` (a GPU group cannot load on CPU);
- the backend's thread parameters, named by the format registry's ``cpu_threads``:
  ``intra_op_thread_count`` / ``inter_op_thread_count`` (onnxruntime) or ``INTRA_OP_THREAD_COUNT`` /
  ``INTER_OP_THREAD_COUNT`` (pytorch).

Defaults follow what was measured with a real Triton server on CPU: one instance per core with one
intra-op thread each (2 instances gave 1.8-2.2x the throughput of one at concurrency 8; dynamic
batching alone gave 1.0-1.3x). Every change is returned and logged; :func:`apply_overlay` also
writes them to ``overlay.json`` beside the served copy.

The SageMaker Triton container (``serve --runtime container``) serves the repository as built, with one
change on a host without a GPU: :func:`move_gpu_groups_to_cpu` (each ``KIND_GPU`` group becomes ``KIND_CPU``).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import tarfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cdk_triton.config import formats, python_env
from cdk_triton.errors import TritonValidationError

log = logging.getLogger("cdk_triton.local")


def _thread_keys(backend: str) -> tuple[str, ...]:
    """The backend's intra-op / inter-op thread parameters (the format registry's ``cpu_threads``)."""
    return next((f.cpu_threads for f in formats.FORMATS.values() if f.backend == backend), ())


@dataclass(frozen=True, kw_only=True, slots=True)
class CpuOverlay:
    """How served models run on this CPU.

    Attributes:
        instance_count: model instances per model. Default: ``os.cpu_count()``.
        intra_op_threads: threads inside one inference. Default: 1.
        inter_op_threads: threads across independent operators. Default: 1.
        python_instance_count: instances of python models (each is a process). Default: instance_count.
    """

    instance_count: int | None = None
    intra_op_threads: int = 1
    inter_op_threads: int = 1
    python_instance_count: int | None = None

    def count(self, backend: str | None) -> int:
        n = self.instance_count or os.cpu_count() or 1
        if backend == "python" and self.python_instance_count is not None:
            return self.python_instance_count
        return n


@dataclass(frozen=True, kw_only=True, slots=True)
class OverlayChange:
    """One field the overlay changed in one model's config."""

    model: str
    field: str
    before: Any
    after: Any


def backend_of(config: Any) -> str | None:
    """The Triton backend serving a ModelConfig (platform mapped to backend name), None for ensembles."""
    if config.platform in formats.composed_platforms():
        return None
    return config.backend or formats.by_platform().get(config.platform) or None


def overlay_config(config: Any, overlay: CpuOverlay) -> list[OverlayChange]:
    """Apply the overlay to one ``model_config_pb2.ModelConfig`` in place; return the changes."""
    from google.protobuf import json_format
    from tritonclient.grpc import model_config_pb2 as mc

    backend = backend_of(config)
    if backend is None:
        return []
    changes: list[OverlayChange] = []
    before = [json_format.MessageToDict(g, preserving_proto_field_name=True) for g in config.instance_group]
    group = mc.ModelInstanceGroup(kind=mc.ModelInstanceGroup.KIND_CPU, count=overlay.count(backend))
    after = [json_format.MessageToDict(group, preserving_proto_field_name=True)]
    if before != after:
        del config.instance_group[:]
        config.instance_group.append(group)
        changes.append(OverlayChange(model=config.name, field="instance_group", before=before, after=after))
    for key, value in zip(
        _thread_keys(backend), (overlay.intra_op_threads, overlay.inter_op_threads), strict=False
    ):
        old = config.parameters[key].string_value if key in config.parameters else None
        if old != str(value):
            config.parameters[key].string_value = str(value)
            changes.append(
                OverlayChange(model=config.name, field=f"parameters.{key}", before=old, after=str(value))
            )
    return changes


def local_python() -> str:
    """The Python the local stub runs (the running interpreter's: ``runtime.prepare_backend_directory``)."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def swap_python_env(model_dir: Path, build_out: Path | None) -> OverlayChange | None:
    """A python model's packed environment for the local stub's Python: where the archive beside
    config.pbtxt was packed for another Python (the target container's), it is replaced by the same
    requirements packed for this one, which the build keeps at ``python_env.local_variant``. The
    parameter stays ``$$TRITON_MODEL_DIRECTORY/...``, so Triton extracts and activates it as on SageMaker."""
    archive = model_dir / python_env.ENV_ARCHIVE
    if not archive.is_file():
        return None
    with tarfile.open(archive, "r:gz") as tar:
        f = tar.extractfile(python_env.ENV_METADATA)
        meta = json.loads(f.read()) if f else {}
    py = str(meta.get("python", ""))
    if py == local_python():
        return None
    variant = (
        python_env.local_variant(build_out, str(meta.get("key", "")), local_python()) if build_out else None
    )
    if variant is None or not variant.is_file():
        raise TritonValidationError(
            "LocalPythonEnvMissing",
            prop=f"model '{model_dir.name}' execution environment",
            value=f"packed for Python {py}",
            problem=f"cannot load in the local stub, which runs Python {local_python()}, and the build left no "
            f"variant for it ({variant})",
            allowed=f"an environment for Python {local_python()} (the build packs one beside the target's)",
            fix="rebuild with `cdk-triton build` on this machine",
        )
    shutil.copyfile(variant, archive)
    return OverlayChange(
        model=model_dir.name,
        field=python_env.ENV_ARCHIVE,
        before=f"python {py}",
        after=f"python {local_python()}",
    )


def apply_overlay(
    repository: Path, overlay: CpuOverlay, *, record: Path | None = None, build_out: Path | None = None
) -> list[OverlayChange]:
    """Apply the overlay to every ``<model>/config.pbtxt`` under a repository root (in place), and
    give each python model's packed environment the local Python (:func:`swap_python_env`; ``build_out``:
    the build's output directory, where the local variants are).

    Configs the overlay does not change are left byte for byte as built.
    """
    from google.protobuf import text_format
    from tritonclient.grpc import model_config_pb2 as mc

    changes: list[OverlayChange] = []
    for cfg_path in sorted(Path(repository).glob("*/config.pbtxt")):
        config = mc.ModelConfig()
        text_format.Parse(cfg_path.read_text(), config)
        these = overlay_config(config, overlay)
        if these:
            cfg_path.write_text(text_format.MessageToString(config))
            changes += these
        swapped = swap_python_env(cfg_path.parent, build_out)
        if swapped is not None:
            changes.append(swapped)
    for c in changes:
        log.info(
            "cpu overlay: model %s %s: %s -> %s", c.model, c.field, json.dumps(c.before), json.dumps(c.after)
        )
    if record is not None:
        record.write_text(json.dumps([asdict(c) for c in changes], indent=1))
    return changes


def move_gpu_groups_to_cpu(repository: Path) -> list[OverlayChange]:
    """In each ``<model>/config.pbtxt`` under ``repository``: every ``KIND_GPU`` instance group becomes
    ``KIND_CPU`` (its count kept, its ``gpus`` dropped); nothing else changes. The moves are returned."""
    from google.protobuf import json_format, text_format
    from tritonclient.grpc import model_config_pb2 as mc

    moves: list[OverlayChange] = []
    for cfg_path in sorted(Path(repository).glob("*/config.pbtxt")):
        config = mc.ModelConfig()
        text_format.Parse(cfg_path.read_text(), config)
        if not any(g.kind == mc.ModelInstanceGroup.KIND_GPU for g in config.instance_group):
            continue
        before = [
            json_format.MessageToDict(g, preserving_proto_field_name=True) for g in config.instance_group
        ]
        for group in config.instance_group:
            if group.kind == mc.ModelInstanceGroup.KIND_GPU:
                group.kind = mc.ModelInstanceGroup.KIND_CPU
                del group.gpus[:]
        after = [
            json_format.MessageToDict(g, preserving_proto_field_name=True) for g in config.instance_group
        ]
        cfg_path.write_text(text_format.MessageToString(config))
        moves.append(
            OverlayChange(model=cfg_path.parent.name, field="instance_group", before=before, after=after)
        )
    return moves


def describe_moves(moves: Sequence[OverlayChange], gpu_only: Sequence[str], *, where: str) -> list[str]:
    """One line per moved model (and per model that needs a GPU whatever its groups say)."""
    lines = [
        f"no GPU visible (nvidia-smi -L): {where} model {m.model}: instance_group "
        f"{json.dumps(m.before)} -> {json.dumps(m.after)}"
        for m in moves
    ]
    lines += [
        f"no GPU visible (nvidia-smi -L): {where} model {name} needs a GPU (its format is GPU-only) and will not "
        "load in this container"
        for name in gpu_only
    ]
    return lines


def gpu_only_models(repository: Path) -> list[str]:
    """Models of ``repository`` whose format cannot run without a GPU (the format rows' ``gpu_only``)."""
    from google.protobuf import text_format
    from tritonclient.grpc import model_config_pb2 as mc

    configs = {}
    for cfg_path in sorted(Path(repository).glob("*/config.pbtxt")):
        configs[cfg_path.parent.name] = text_format.Parse(cfg_path.read_text(), mc.ModelConfig())
    gpu_only = {f.platform for f in formats.FORMATS.values() if f.gpu_only and f.platform}
    gpu_only |= {f.backend for f in formats.FORMATS.values() if f.gpu_only and f.backend}
    return sorted(
        name
        for name, cfg in configs.items()
        if {getattr(cfg, "platform", ""), getattr(cfg, "backend", "")} & gpu_only
    )
