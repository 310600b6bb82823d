"""A single-model manifest endpoint entry and a failure factory, for the tests that read one block of it."""

from __future__ import annotations

from typing import Any

from cdk_triton.config.manifest import ManifestError


def sme_entry(instance_types: list[str], **blocks: Any) -> dict[str, Any]:
    """The raw manifest entry of a SingleModel endpoint ``a`` (one model ``m``), plus ``blocks``."""
    return {
        "name": "a",
        "mode": "SingleModel",
        "instance_types": instance_types,
        "models": ["m"],
        "packaging": "directory",
        "s3_uri": "s3://b/p/",
        "local_path": "sme/a",
        "sha256": "0" * 64,
        "size_bytes": 1,
        **blocks,
    }


def fail(where: str, value: object, problem: str, allowed: str) -> ManifestError:
    """The manifest reader's failure factory, as ``read_manifest`` passes it."""
    return ManifestError(
        "InvalidManifest", prop=where, value=value, problem=problem, allowed=allowed, fix="-"
    )
