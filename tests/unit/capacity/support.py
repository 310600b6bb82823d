"""Hand-made manifests for the capacity tests: one MME whose TargetModels have the bytes a test names."""

from __future__ import annotations

from typing import Any

from cdk_triton.config import residency
from cdk_triton.config.manifest import Manifest, manifest_from_dict

INSTANCE = "ml.g5.xlarge"
USABLE = residency.usable_memory(INSTANCE, ["onnx"])  # the formats of these manifests: ONNX only
assert USABLE is not None
#: One instance's usable GPU bytes (the unit the tests size models in).
U = USABLE.gpu_bytes


def model(
    name: str, *, memory: int | None, size: int | None = None, groups: list[Any] | None = None
) -> dict[str, Any]:
    config: dict[str, Any] = {"name": name, "max_batch_size": 8}
    if groups is not None:
        config["instance_group"] = groups
    entry: dict[str, Any] = {
        "name": name,
        "format": "onnx",
        "platform": "onnxruntime_onnx",
        "backend": "onnxruntime",
        "config": config,
        "config_sha256": "0" * 64,
        "files": {"1/model.onnx": "0" * 64},
    }
    if memory is not None:
        entry.update(memory_bytes=memory, memory_source="measured")
    if size is not None:
        entry["size_bytes"] = size
    return entry


def mme(models: dict[str, dict[str, Any]], *, archive: int = 1000, version: int = 2) -> Manifest:
    """A manifest whose endpoint ``multi`` has one TargetModel per model (logical name = model name)."""
    prefix = "s3://models/mme/multi/"
    targets = {
        name: {
            "logical_name": name,
            "target_model": f"{name}-0123456789ab.tar.gz",
            "model": name,
            "models": [name],
            "local_path": f"mme/multi/{name}-0123456789ab.tar.gz",
            "sha256": "0" * 64,
            "size_bytes": archive,
            "s3_uri": f"{prefix}{name}-0123456789ab.tar.gz",
        }
        for name in models
    }
    data = {
        "schema_version": version,
        "triton_version": "24.09",
        "artifact_location": {"bucket": "models"},
        "uploaded": True,
        "models": models,
        "endpoints": {
            "multi": {
                "name": "multi",
                "mode": "MultiModel",
                "instance_types": [INSTANCE],
                "s3_prefix": prefix,
                "target_models": targets,
            }
        },
    }
    return manifest_from_dict(data, source="/tmp/hand-made/manifest.json")


def sized(**memory: float) -> Manifest:
    """``sized(a=0.4, b=0.6)``: models whose memory is that share of one instance's usable GPU bytes."""
    return mme({n: model(n, memory=int(f * U)) for n, f in memory.items()})
