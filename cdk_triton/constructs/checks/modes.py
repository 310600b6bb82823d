"""A hosting mode's refusal of a feature (a ``Refusal`` field of its ``config.modes`` row) as an error."""

from __future__ import annotations

from cdk_triton.config import modes
from cdk_triton.errors import TritonValidationError


def supporting(feature: str) -> str:
    """The modes whose row supports ``feature`` (its field is None), by name: ``'SingleModel or ...'``."""
    return " or ".join(m.name for m in modes.MODES.values() if getattr(m, feature) is None)


def refused(
    row: modes.HostingMode, feature: str, *, prop: str, allowed: str, fix: str
) -> list[TritonValidationError]:
    """``row``'s refusal of ``feature`` (the name of a ``Refusal | None`` field of ``HostingMode``) as
    the error naming ``prop`` and the mode; none when the row supports it. ``{supported}`` in ``allowed``
    and ``fix`` becomes the modes that support it (:func:`supporting`)."""
    refusal: modes.Refusal | None = getattr(row, feature)
    if refusal is None:
        return []
    supported = supporting(feature)
    return [
        refusal.error(
            prop=prop,
            value=row.name,
            allowed=allowed.format(supported=supported),
            fix=fix.format(supported=supported),
        )
    ]
