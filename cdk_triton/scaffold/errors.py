"""The catalogue of error codes ``cdk-triton init`` raises (all before anything is written)."""

from __future__ import annotations

#: Raised as TritonValidationError before any file is written: code -> what it means.
VALIDATION_ERRORS: dict[str, str] = {
    "InvalidReleaseString": "a cdk-triton advisories --release that is not a Triton release string (YY.MM)",
    "ScaffoldDirectoryNotEmpty": "the target directory holds files (--force writes over the scaffold's own files)",
    "ScaffoldTargetNotADirectory": "the target path exists and is not a directory",
    "UnknownScaffoldMode": "a --mode other than the scaffold's modes (single, multi)",
}

ALL_CODES: dict[str, str] = dict(VALIDATION_ERRORS)

#: Codes of ``cdk_triton.config.errors`` init raises: none.
SURFACED: dict[str, str] = {}
