"""The catalogue of error codes ``cdk-triton tune`` raises (TritonValidationError, exit code 2).

Codes of ``cdk_triton.config.errors`` it raises too (reading models.yaml) are in :data:`SURFACED`.
"""

from __future__ import annotations

from cdk_triton.config.errors import pick

#: code -> what it means.
ALL_CODES: dict[str, str] = {
    "TuneInvalid": "a tune option, sweep or model that cannot be tuned (the message names the option)",
    "TuneNoSample": "a model with no recorded sample request in the tuning manifest",
    "TuneWriteBack": "--apply that would change more than the tuned model (its field is an anchor other models alias, or the model is) or would not read back to the tuned values; nothing is written",
    "TuneLocalApply": "--apply of results measured on the local CPU stand-ins without --allow-local-apply",
}

#: Codes of ``cdk_triton.config.errors`` tune raises.
SURFACED: dict[str, str] = pick(("DeclarationNotFound",))
