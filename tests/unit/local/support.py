"""Helpers of the local-endpoint tests: hand-written MME manifest documents, tar.gz archives."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Any


def mme_target(name: str, *, model: str, sha256: str, size_bytes: int) -> dict[str, Any]:
    """A ``target_models`` entry: the archive ``mme/<name>.tar.gz`` (at ``s3://b/mme/``) holding ``model``."""
    return {
        "logical_name": name,
        "target_model": f"{name}.tar.gz",
        "model": model,
        "models": [model],
        "local_path": f"mme/{name}.tar.gz",
        "sha256": sha256,
        "size_bytes": size_bytes,
        "s3_uri": f"s3://b/mme/{name}.tar.gz",
    }


def mme_document(endpoint: str, targets: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """A manifest document (Triton 24.09, bucket ``b``, not uploaded) of one multi-model ``endpoint``
    whose target models (see ``mme_target``) lie under ``s3://b/mme/``."""
    return {
        "schema_version": 1,
        "triton_version": "24.09",
        "uploaded": False,
        "artifact_location": {"bucket": "b"},
        "models": {},
        "endpoints": {
            endpoint: {
                "name": endpoint,
                "mode": "MultiModel",
                "instance_types": ["ml.g5.xlarge"],
                "s3_prefix": "s3://b/mme/",
                "target_models": targets,
            }
        },
    }


def write_tar_gz(path: Path, members: dict[str, bytes]) -> Path:
    """A gzipped tar at ``path`` holding ``members`` (archive name -> bytes), in their order."""
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path
