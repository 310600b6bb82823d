"""The hosting-mode table: one frozen row per way SageMaker hosts the models of one endpoint.

A mode's row holds everything that differs between modes: the word ``models.yaml`` and the manifest
write, the aliases a declaration may use, which manifest fields it fills, how its
models are packaged (one repository or one archive per model), what picks the model of a request
(local routing, the deploy verification), the metrics only it publishes, its scaling dimension, and
which features it supports: a feature a mode does not support is a :class:`Refusal` (reason and error
code), never a branch elsewhere. The rest of the code asks the row (``modes.of(entry)``,
``entry.hosting_mode``); no module outside this package compares a mode's name (a test scans for it).

Adding a mode is one module of this package holding its row (:func:`register` at import) and its
import line in ``__init__.py``; the construct side registers its endpoint behaviour by the row's name
in ``cdk_triton.constructs.modes``. The README's "Hosting modes" table is checked against
:data:`MODES`. Standard library only.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, fields

from cdk_triton import _deprecation
from cdk_triton.errors import TritonValidationError

#: The release that made SME / MME / IC in ``EndpointAttributes.mode`` deprecated.
ABBREVIATIONS_SINCE = "0.2.0"

#: What picks the model of a request (``routing``).
ROUTE_DEFAULT_MODEL = "default_model"  # the repository's one default model: ``/invocations``
ROUTE_TARGET_MODEL = "target_model"  # the ``TargetModel`` header names an archive, loaded on demand
ROUTE_COMPONENT = "component"  # ``InferenceComponentName`` names a component
ROUTES = (ROUTE_DEFAULT_MODEL, ROUTE_TARGET_MODEL, ROUTE_COMPONENT)

#: The features a row supports or refuses (each a ``Refusal | None`` field).
FEATURES = (
    "auto_scale",
    "capacity",
    "tune",
    "shadow",
    "guardrails",
    "instance_pools",
    "async_inference",
    "business_logic",
)


@dataclass(frozen=True, kw_only=True, slots=True)
class Refusal:
    """A feature a mode does not support: why, and the error code that says so."""

    code: str
    reason: str

    def error(self, *, prop: str, value: object, allowed: str, fix: str) -> TritonValidationError:
        """The refusal as an error (the caller locates it at its construct path or YAML location)."""
        return TritonValidationError(
            self.code, prop=prop, value=value, problem=self.reason, allowed=allowed, fix=fix
        )


@dataclass(frozen=True, kw_only=True, slots=True)
class HostingMode:
    """One hosting mode.

    Attributes:
        name: the word ``models.yaml`` and the manifest write in ``mode:`` (the persisted form).
        abbreviation: the short form of prose and of earlier ``EndpointAttributes.mode`` values
            (SME, MME, IC); read, never written.
        label: the mode in prose ("multi-model").
        aliases: the other words ``models.yaml`` accepts (compared in lower case).
        manifest_fields: the manifest endpoint fields this mode fills (besides name, mode, instance
            types, GPU architectures, the AMI version and the sample); the manifest reader does not refuse
            the others, ``tests/unit/config/test_modes.py`` checks the fixture manifests against it.
        per_model_archives: each model has its own archive (``target_models``, packaging tar.gz);
            else one model repository (directory or tar.gz).
        loads_on_demand: the container runs in SageMaker's multi-model mode
            (``SAGEMAKER_MULTI_MODEL=true``): models load on request, so only single-GPU instances,
            the working set of one instance and cold loads matter.
        routing: what picks the model of a request (:data:`ROUTES`): the local endpoint's routing and
            the deploy verification's invocations.
        components: the endpoint holds inference components (each with its own copies).
        construct: the construct that deploys it (its name, for error texts).
        metrics: the SageMaker metrics only this mode publishes (``constructs.metrics`` defines them).
        scaling_dimension: the Application Auto Scaling dimension its capacity scales on.
        auto_scale: ``auto_scale`` of the variant's instances. Default: supported.
        capacity: ``cdk-triton capacity`` (residency of models loaded on demand). Default: supported.
        tune: ``cdk-triton tune`` serving its variants side by side on an endpoint of this mode.
            Default: supported.
        shadow: a shadow variant. Default: supported.
        guardrails: deployment guardrails (blue/green or rolling). Default: supported.
        instance_pools: several instance pools behind one endpoint. Default: supported.
        async_inference: asynchronous inference. Default: supported.
        business_logic: a python model calling other models (business logic scripting, ``calls``),
            which needs its callees loaded beside it in the same server. Default: supported.
    """

    name: str
    abbreviation: str
    label: str
    aliases: tuple[str, ...]
    manifest_fields: tuple[str, ...]
    per_model_archives: bool
    loads_on_demand: bool
    routing: str
    components: bool
    construct: str
    metrics: tuple[str, ...]
    scaling_dimension: str
    auto_scale: Refusal | None = None
    capacity: Refusal | None = None
    tune: Refusal | None = None
    shadow: Refusal | None = None
    guardrails: Refusal | None = None
    instance_pools: Refusal | None = None
    async_inference: Refusal | None = None
    business_logic: Refusal | None = None

    def missing(self) -> list[str]:
        """The required fields left empty, and a routing that is not one of :data:`ROUTES`."""
        empty = [f for f in REQUIRED if getattr(self, f) in (None, "", ())]
        return empty + (["routing"] if self.routing not in ROUTES and "routing" not in empty else [])

    def supports(self, feature: str) -> bool:
        """Whether the mode supports ``feature`` (one of :data:`FEATURES`)."""
        return self.refusal(feature) is None

    def refusal(self, feature: str) -> Refusal | None:
        """The row's refusal of ``feature``; None when supported."""
        if feature not in FEATURES:
            raise KeyError(f"{feature!r} is not a feature of a hosting mode ({', '.join(FEATURES)})")
        refusal: Refusal | None = getattr(self, feature)
        return refusal


#: The fields every row fills (the test of the axis checks each row against it).
REQUIRED = (
    "name",
    "abbreviation",
    "label",
    "aliases",
    "manifest_fields",
    "routing",
    "construct",
    "scaling_dimension",
)
FIELDS = tuple(f.name for f in fields(HostingMode))

#: name -> row, in the order modes are listed (errors, the README table).
MODES: dict[str, HostingMode] = {}


def register(row: HostingMode) -> HostingMode:
    """Add a mode (each mode module registers its row; a plugin's, a test's). Refuses a name, an
    abbreviation or an alias already taken, or a row missing a field (ValueError naming them)."""
    taken = {w.lower() for m in MODES.values() for w in (m.name, m.abbreviation, *m.aliases)}
    clash = sorted({w for w in (row.name, row.abbreviation, *row.aliases) if w.lower() in taken})
    if clash:
        raise ValueError(f"mode '{row.name}': {', '.join(clash)} already name a registered mode")
    missing = row.missing()
    if missing:
        raise ValueError(f"mode '{row.name}' lacks {', '.join(missing)}")
    MODES[row.name] = row
    return row


def unregister(name: str) -> None:
    """Remove a mode added with :func:`register`."""
    del MODES[name]


@contextlib.contextmanager
def registered(row: HostingMode) -> Iterator[HostingMode]:
    """``register(row)`` for the duration of a ``with`` block."""
    register(row)
    try:
        yield row
    finally:
        unregister(row.name)


def get(name: str) -> HostingMode:
    """The row of ``name`` (a persisted mode word); KeyError for a mode the table does not list (the
    manifest reader and the declaration refuse an unknown mode before anything looks it up)."""
    return MODES[name]


def lookup(name: object) -> HostingMode | None:
    """The row of ``name`` when it is a listed mode's persisted word, else None."""
    return MODES.get(name) if isinstance(name, str) else None


def resolve(word: object) -> HostingMode | None:
    """The row a ``models.yaml`` word names: the mode's name or one of its aliases or its abbreviation,
    in any case; None for any other value."""
    if not isinstance(word, str):
        return None
    lowered = word.lower()
    return next(
        (m for m in MODES.values() if lowered in (m.name.lower(), m.abbreviation.lower(), *m.aliases)),
        None,
    )


def from_abbreviation(word: str, *, warn: bool = True) -> HostingMode | None:
    """The row of an ``EndpointAttributes.mode`` value: a mode's name, or (deprecated, with a
    DeprecationWarning when ``warn``) its abbreviation; None for anything else."""
    row = lookup(word)
    if row is not None:
        return row
    row = next((m for m in MODES.values() if m.abbreviation == word), None)
    if row is not None and warn:
        warnings.warn(
            _deprecation.message(f"mode '{word}'", f"mode='{row.name}'", ABBREVIATIONS_SINCE),
            DeprecationWarning,
            stacklevel=3,
        )
    return row


def names() -> tuple[str, ...]:
    """Every mode's name, in table order."""
    return tuple(MODES)


def listed(sep: str = ", ") -> str:
    """The modes as an error text lists them: ``SingleModel, MultiModel, InferenceComponents``."""
    return sep.join(MODES)


def spoken() -> str:
    """The modes as a sentence lists them: ``SingleModel, MultiModel or InferenceComponents``."""
    *rest, last = MODES
    return f"{', '.join(rest)} or {last}" if rest else last


def where(**props: object) -> tuple[HostingMode, ...]:
    """The rows whose fields equal ``props``, e.g. ``where(loads_on_demand=True)``."""
    return tuple(m for m in MODES.values() if all(getattr(m, k) == v for k, v in props.items()))


def only(**props: object) -> HostingMode:
    """The one row whose fields equal ``props`` (LookupError when none or several)."""
    rows = where(**props)
    if len(rows) != 1:
        raise LookupError(f"{len(rows)} hosting modes have {props}")
    return rows[0]


def readme_table() -> str:
    """The README's "Hosting modes" table, one row per mode (``tests/unit/config/test_modes.py`` checks
    the README against it; run ``python -m cdk_triton.config.modes`` to print it)."""
    lines = [
        "| mode | short | models.yaml aliases | packaging | a request picks its model by | deployed by | refuses |",
        "|---|---|---|---|---|---|---|",
    ]
    for m in MODES.values():
        refused = ", ".join(f"{f} (`{r.code}`)" for f in FEATURES if (r := m.refusal(f)) is not None)
        lines.append(
            f"| `{m.name}` | {m.abbreviation} | {', '.join(m.aliases)} | "
            f"{'one tar.gz per model' if m.per_model_archives else 'one repository'} | {m.routing} | "
            f"`{m.construct}` | {refused or 'nothing'} |"
        )
    return "\n".join(lines)
