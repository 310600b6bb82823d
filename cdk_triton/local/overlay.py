"""The declared CPU overlay: the only change the local endpoint makes to the built repository.

It touches exactly three things in each non-ensemble model's config.pbtxt and nothing else:

- ``instance_group``: one group ``{kind: KIND_CPU, count: N}`` (a GPU group cannot load on CPU);
- the backend's thread parameters, named by the format registry's ``cpu_threads``:
  ``intra_op_thread_count`` / ``inter_op_thread_count`` (onnxruntime) or ``INTRA_OP_THREAD_COUNT`` /
  ``INTER_OP_THREAD_COUNT`` (pytorch).

Defaults follow what was measured with a real Triton server on CPU: one instance per core with one
intra-op thread each (2 instances gave 1.8-2.2x the throughput of one at concurrency 8; dynamic
batching alone gave 1.0-1.3x). Every change is returned and logged; :func:`apply_overlay` also
writes them to ``overlay.json`` beside the served copy.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cdk_triton.config import formats

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


def apply_overlay(
    repository: Path, overlay: CpuOverlay, *, record: Path | None = None
) -> list[OverlayChange]:
    """Apply the overlay to every ``<model>/config.pbtxt`` under a repository root (in place).

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
    for c in changes:
        log.info(
            "cpu overlay: model %s %s: %s -> %s", c.model, c.field, json.dumps(c.before), json.dumps(c.after)
        )
    if record is not None:
        record.write_text(json.dumps([asdict(c) for c in changes], indent=1))
    return changes
