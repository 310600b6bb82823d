"""A lenient, typed view of a raw ``models.yaml`` document: read it without running the rules.

``BuildSpec.from_dict`` parses a declaration and runs every rule; the GPU build placement of the
pipeline and ``cdk-triton tune`` must read a partial or not yet valid file too (a model not served
yet, a variant being written). They read the parsed YAML through :class:`RawDeclaration` instead of
walking dicts themselves: entries that are not mappings are skipped, missing keys read as empty,
and the ensemble closure is the declaration's own (:func:`closure_of`, shared with ``BuildSpec``).

The view holds the document's own entry objects (no copy), so a caller that edits the document in
place (``tune --apply``) edits what it found through the view.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any


def closure_of(name: str, steps: Callable[[str], Iterable[str]]) -> list[str]:
    """The model and every model it needs (``steps``: an ensemble's steps, a python model's calls),
    recursively, the model first; each once."""
    out: list[str] = []

    def walk(n: str) -> None:
        if n in out:
            return
        out.append(n)
        for step in steps(n):
            walk(step)

    walk(name)
    return out


def loaded_at_start(
    name: str, steps: Callable[[str], Iterable[str]], calls: Callable[[str], Iterable[str]]
) -> list[str]:
    """The models a single-model endpoint must name to Triton beside its default model ``name``: every
    model a python model of ``name``'s closure calls (business logic scripting), in closure order.

    The container's ``serve`` script starts Triton with ``--model-control-mode=explicit
    --load-model=<name>``, which loads an ensemble's steps (recursively) but not a python model's callees;
    each callee then needs its own ``--load-model`` (``ServerOptions.load_models``). One rule for the
    build (the manifest's ``load_models``), synth (the container environment) and the local server.
    """
    closure = closure_of(name, lambda n: [*steps(n), *calls(n)])
    called = {c for n in closure for c in calls(n)}
    return [n for n in closure if n in called and n != name]


def _entries(doc: Mapping[str, Any], key: str) -> tuple[Mapping[str, Any], ...]:
    return tuple(e for e in doc.get(key) or [] if isinstance(e, Mapping))


@dataclass(frozen=True, slots=True)
class RawDeclaration:
    """A parsed ``models.yaml`` mapping, read leniently (see the module docstring)."""

    doc: Mapping[str, Any]

    @property
    def triton_version(self) -> str | None:
        version = self.doc.get("triton_version")
        return None if version is None else str(version)

    @property
    def models(self) -> tuple[Mapping[str, Any], ...]:
        """The ``models[]`` entries (mappings only), in document order."""
        return _entries(self.doc, "models")

    @property
    def model_names(self) -> list[str]:
        return [str(m.get("name")) for m in self.models]

    def model(self, name: str) -> Mapping[str, Any] | None:
        """The first ``models[]`` entry called ``name``, or None."""
        return next((m for m in self.models if m.get("name") == name), None)

    def format_of(self, name: str) -> str | None:
        """The declared ``format`` of a model (None when the model or its format is missing)."""
        fmt = (self.model(name) or {}).get("format")
        return None if fmt is None else str(fmt)

    def steps(self, name: str) -> list[str]:
        """The step models of an ensemble, in order (empty for any other model)."""
        steps = (self.model(name) or {}).get("steps") or []
        return [str(s.get("model")) for s in steps if isinstance(s, Mapping)]

    def calls(self, name: str) -> list[str]:
        """The models a python model calls (business logic scripting; empty for any other model)."""
        return [str(c) for c in (self.model(name) or {}).get("calls") or []]

    def closure(self, name: str) -> list[str]:
        """The model and its steps and calls (recursively), as ``BuildSpec.closure``."""
        return closure_of(name, lambda n: [*self.steps(n), *self.calls(n)])

    @property
    def endpoints(self) -> tuple[Mapping[str, Any], ...]:
        """The ``endpoints[]`` entries (mappings only), in document order."""
        return _entries(self.doc, "endpoints")

    def instance_types(self, endpoint: Mapping[str, Any]) -> list[str]:
        return [str(t) for t in endpoint.get("instance_types") or []]

    def endpoint_models(self, endpoint: Mapping[str, Any]) -> list[str]:
        return [str(m) for m in endpoint.get("models") or []]

    def serving(self, model: str) -> dict[str, list[str]]:
        """endpoint name -> instance types, for the endpoints serving ``model`` (directly or as a step)."""
        return {
            str(ep.get("name")): self.instance_types(ep)
            for ep in self.endpoints
            if any(model in self.closure(m) for m in self.endpoint_models(ep))
        }
