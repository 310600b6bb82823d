"""The configurations a tuning run compares: formats x dynamic batching x instances per device.

Pure: works on the plain mapping of one ``models.yaml`` (what ``yaml.safe_load`` or ruamel returns).
A variant is a set of changes to the declared models' tuned fields (``format``, ``dynamic_batching``,
``instance_groups``). For an ensemble the changes go to its steps (an ensemble itself has no dynamic
batcher or instances); the format of a step changes only when the user asks (TorchScript renames
tensors ``INPUT__n`` / ``OUTPUT__n``, which the ensemble's maps would have to follow).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cdk_triton.config import formats as format_rows
from cdk_triton.config.declaration.view import RawDeclaration
from cdk_triton.errors import TritonValidationError

#: the fields a variant may change, in the order they are written back
TUNED_FIELDS = ("format", "dynamic_batching", "instance_groups")
#: default queue-delay candidates (microseconds) for the dynamic batcher
DEFAULT_QUEUE_DELAYS_US = (100,)


def exportable() -> tuple[str, ...]:
    """Formats a factory-built model can be exported to (the format table's ``tunable`` rows)."""
    return format_rows.where(tunable=True)


def local_formats() -> tuple[str, ...]:
    """Formats the local CPU stand-ins can serve (a GPU-only format needs a GPU)."""
    return format_rows.where(gpu_only=False)


@dataclass(frozen=True)
class Axes:
    """What a tuning run varies.

    Attributes:
        formats: export formats to try. Default: the declared format, plus the other exportable
            formats when the model is built from a factory (not for ensemble steps).
        batching: dynamic batching off and/or on. Default: both.
        queue_delays_us: ``max_queue_delay_microseconds`` candidates when batching is on.
            Default: 100.
        instance_counts: model instances per device. Default: 1 and 2.
        concurrency: closed-loop client counts each variant is driven at. Default: 16.
    """

    formats: tuple[str, ...] | None = None
    batching: tuple[bool, ...] = (False, True)
    queue_delays_us: tuple[int, ...] = DEFAULT_QUEUE_DELAYS_US
    instance_counts: tuple[int, ...] = (1, 2)
    concurrency: tuple[int, ...] = (16,)


@dataclass(frozen=True)
class Variant:
    """One configuration: the tuned fields of each changed model (``None`` removes a field)."""

    name: str
    changes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    current: bool = False

    @property
    def format(self) -> str:
        formats = sorted({str(c["format"]) for c in self.changes.values() if c.get("format")})
        return "+".join(formats) or "-"

    @property
    def dynamic_batching(self) -> str:
        db = [c.get("dynamic_batching") for c in self.changes.values() if "dynamic_batching" in c]
        if not any(db):
            return "off"
        delays = sorted({int(d.get("max_queue_delay_microseconds", 0)) for d in db if d})
        return "on (" + "/".join(f"{x} us" for x in delays) + ")"

    @property
    def instance_group(self) -> str:
        groups = [c.get("instance_groups") or [] for c in self.changes.values()]
        counts = sorted({int(g[0].get("count", 1)) for g in groups if g})
        kinds = sorted({str(g[0].get("kind", "KIND_GPU")) for g in groups if g})
        return (
            f"{'/'.join(map(str, counts)) or 1} x {'/'.join(k.removeprefix('KIND_') for k in kinds) or 'GPU'}"
        )


def _bad(prop: str, value: Any, problem: str, allowed: str, fix: str) -> TritonValidationError:
    return TritonValidationError(
        "TuneInvalid", prop=prop, value=value, problem=problem, allowed=allowed, fix=fix
    )


def find_model(doc: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """The ``models[]`` entry called ``name``; a clear error naming the declared ones otherwise."""
    view = RawDeclaration(doc)
    entry = view.model(name)
    if entry is not None:
        return entry
    raise _bad(
        "--model",
        name,
        "is not declared in models.yaml",
        ", ".join(view.model_names),
        "pass one of the declared model names",
    )


def tuned_models(doc: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    """The entries whose fields a variant changes: the model, or an ensemble's steps that are not ensembles."""
    entry = find_model(doc, name)
    if not format_rows.is_composed(entry.get("format")):
        return [entry]
    out = []
    for step in RawDeclaration(doc).steps(name):
        step_entry = find_model(doc, step)
        if not format_rows.is_composed(step_entry.get("format")) and step_entry not in out:
            out.append(step_entry)
    return out


def current_fields(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The declared values of the tuned fields (absent fields as ``None``)."""
    return {k: plain_data(entry.get(k)) for k in TUNED_FIELDS}


def batching_candidates(max_batch_size: int, delays: Sequence[int]) -> list[dict[str, Any]]:
    """Dynamic-batcher settings derived from ``max_batch_size``: the top two powers of two, per delay."""
    powers = {1 << i for i in range(max_batch_size.bit_length()) if 1 << i <= max_batch_size}
    sizes = sorted(s for s in powers | {max_batch_size} if s >= 2)
    out = []
    for delay in delays:
        cand: dict[str, Any] = {"max_queue_delay_microseconds": int(delay)}
        if sizes:
            cand = {"preferred_batch_sizes": sizes[-2:], **cand}
        out.append(cand)
    return out


def _formats_for(entry: Mapping[str, Any], axes: Axes, in_ensemble: bool) -> list[str]:
    declared = str(entry.get("format"))
    row = format_rows.lookup(declared)
    src = entry.get("source") or {}
    if axes.formats is not None:
        if row is None or row.kind != format_rows.EXPORTED:
            return [declared]
        if "factory" not in src:  # a file source: the formats that can be made from that file
            allowed = {declared} | {
                f for f in exportable() if set(src) & set(format_rows.get(f).source_kinds)
            }
            return [f for f in axes.formats if f in allowed] or [declared]
        return list(dict.fromkeys(axes.formats))
    if in_ensemble or declared not in exportable() or "factory" not in src:
        return [declared]
    return [declared] + [f for f in exportable() if f != declared and f in local_formats()]


def _instance_groups(entry: Mapping[str, Any], count: int) -> list[dict[str, Any]]:
    declared = entry.get("instance_groups") or []
    kind = str(declared[0].get("kind", "KIND_GPU")) if declared else "KIND_GPU"
    group: dict[str, Any] = {"kind": kind, "count": count}
    if declared and declared[0].get("gpus"):
        group["gpus"] = list(declared[0]["gpus"])
    return [group]


def generate(doc: Mapping[str, Any], name: str, axes: Axes = Axes()) -> list[Variant]:
    """The current declaration first, then every combination of the axes (duplicates removed).

    Every tuned model takes the same axis setting (an ensemble's steps are batched and replicated
    alike: a step-by-step cross product would explode).
    """
    for prop, values in (("--instances", axes.instance_counts), ("--concurrency", axes.concurrency)):
        if not values or any(int(v) < 1 for v in values):
            raise _bad(
                prop, list(values), "must be positive integers", "1, 2, 4, ...", f"pass e.g. {prop} 1,2"
            )
    if any(int(d) < 0 for d in axes.queue_delays_us):
        raise _bad(
            "--queue-delays",
            list(axes.queue_delays_us),
            "must not be negative",
            "0, 100, 1000, ...",
            "pass microseconds >= 0",
        )
    entries = tuned_models(doc, name)
    in_ensemble = format_rows.is_composed(find_model(doc, name).get("format"))
    current = Variant(f"{name}__current", {str(e["name"]): current_fields(e) for e in entries}, current=True)
    variants, seen = [current], {_key(current)}
    formats = _formats_for(entries[0], axes, in_ensemble) if not in_ensemble else [None]
    if in_ensemble and axes.formats is not None:
        formats = list(axes.formats)
    batch_choices: list[int | None] = []
    for on in dict.fromkeys(axes.batching):
        batch_choices += list(axes.queue_delays_us) if on else [None]
    for fmt, delay, count in itertools.product(formats, batch_choices, axes.instance_counts):
        changes: dict[str, dict[str, Any]] = {}
        for e in entries:
            mbs = int(e.get("max_batch_size") or 0)
            fmt_e = _formats_for(e, Axes(formats=(fmt,)), False)[0] if fmt else str(e.get("format"))
            changes[str(e["name"])] = {
                "format": fmt_e,
                "dynamic_batching": batching_candidates(mbs, [delay])[0]
                if delay is not None and mbs > 0
                else None,
                "instance_groups": _instance_groups(e, int(count)),
            }
        batch = f"db{delay}" if delay is not None else "nodb"
        v = Variant(f"{name}__{fmt + '_' if fmt else ''}{batch}_x{count}", changes)
        if _key(v) not in seen:
            seen.add(_key(v))
            variants.append(v)
    return variants


def _key(v: Variant) -> str:
    return json.dumps({m: _normalized(c) for m, c in v.changes.items()}, sort_keys=True)


def _normalized(change: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(change)
    groups = out.get("instance_groups") or [{"kind": "KIND_GPU", "count": 1}]
    out["instance_groups"] = [
        {
            "kind": g.get("kind", "KIND_GPU"),
            "count": int(g.get("count", 1)),
            "gpus": list(g.get("gpus") or []),
        }
        for g in groups
    ]
    db = out.get("dynamic_batching")
    out["dynamic_batching"] = (
        None
        if db is None
        else {
            "preferred_batch_sizes": list(db.get("preferred_batch_sizes") or []),
            "max_queue_delay_microseconds": int(db.get("max_queue_delay_microseconds") or 0),
        }
    )
    return out


def plain_data(value: Any) -> Any:
    """ruamel's commented containers as plain dicts, lists and scalars (no shared objects), as the
    build's loader would compare them."""
    if isinstance(value, Mapping):
        return {str(k): plain_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_data(v) for v in value]
    return value
