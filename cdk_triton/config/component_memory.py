"""An inference component's declared memory against its models' record, at build and synth (one author).

``memory_floor_findings``: the build's components step runs it on the models it built, synth
(``constructs/components.py``) on the manifest's; a model's memory is ``residency.model_bytes`` (its
``memory_bytes``, else its files). Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping

from cdk_triton.config import residency
from cdk_triton.config.manifest import ModelEntry
from cdk_triton.errors import TritonValidationError

#: the warning id (synth: ``cdk-triton:<id>`` annotations; build: the warning's text carries it)
MEMORY_BELOW_MODEL = "ComponentMemoryBelowModel"


def memory_floor_findings(
    component: str, min_memory_mb: int | None, models: Mapping[str, ModelEntry], path: str | None = None
) -> tuple[list[str], list[TritonValidationError]]:
    """A component's declared ``min_memory_mb`` against the models of its archive (the manifest's
    entries, by name): below the bytes the models hold at run time (``memory_bytes``, by
    ``residency.model_bytes``) a warning (``ComponentMemoryBelowModel``: SageMaker places copies on it,
    and the copy may run out of memory), below their weights (``size_bytes``) the error
    ``ComponentMemoryTooSmall`` (no copy could load them). Models without a record are not judged."""
    if min_memory_mb is None or not models:
        return [], []
    declared = min_memory_mb * (1 << 20)
    weights = sum(e.size_bytes or 0 for e in models.values())
    memory = sum(residency.model_bytes(e)[0] or 0 for e in models.values())
    names = ", ".join(sorted(models))
    if weights and declared < weights:
        need = -(-weights // (1 << 20))
        return [], [
            TritonValidationError(
                "ComponentMemoryTooSmall",
                prop=f"component '{component}' min_memory_mb",
                value=min_memory_mb,
                problem=f"is below the weights of its models ({names}: {weights} bytes, {need} MB): no copy "
                "could load them",
                allowed=f">= {need} MB (the weights), better >= the models' memory_bytes",
                fix=f"raise min_memory_mb to at least {need}, or leave it unset (derived from the manifest)",
                path=f"{path}.min_memory_mb" if path else None,
            )
        ]
    if memory and declared < memory:
        need = -(-memory // (1 << 20))
        return [
            f"component '{component}' min_memory_mb {min_memory_mb} is below the memory_bytes of its models "
            f"({names}: {memory} bytes, {need} MB): a copy may run out of memory; raise it to {need} or leave "
            f"it unset (derived) [{MEMORY_BELOW_MODEL}]"
        ], []
    return [], []
