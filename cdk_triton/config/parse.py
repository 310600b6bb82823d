"""The parse kit: read plain data (YAML/JSON mappings) into dataclasses and report what is wrong.

One kit for both readers of ``cdk_triton.config``:

- the declaration (``config.declaration``, ``build/models.yaml``) COLLECTS every problem in an
  :class:`Errors` and raises them once: :func:`typed`, :func:`check_keys`, :func:`is_mapping`,
  :func:`one_of`, :func:`str_map`;
- the manifest (``config.manifest``) RAISES the first problem: :func:`required`, :func:`optional`,
  :func:`known_keys`, given a ``fail`` function that builds its error.

Both share the primitives: :func:`has_type` (``true`` is not a number), :func:`unknown_keys`,
:func:`dataclass_keys`, :func:`closest`. Standard library only.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import fields
from typing import Any

from cdk_triton.errors import TritonValidationError

TypeSpec = type | tuple[type, ...]

#: Types for which a bool (``true``/``false``) is rejected although Python counts it as an int.
NUMBER_TYPES: tuple[TypeSpec, ...] = (int, (int, float))


# ---------------------------------------------------------------------------- shared primitives


def has_type(value: Any, typ: TypeSpec, *, bool_rejected_for: tuple[TypeSpec, ...] = NUMBER_TYPES) -> bool:
    """``isinstance(value, typ)``, except that a bool is not accepted for ``bool_rejected_for``."""
    return isinstance(value, typ) and not (isinstance(value, bool) and typ in bool_rejected_for)


def dataclass_keys(cls: type, *, exclude: Iterable[str] = ()) -> list[str]:
    """The field names of dataclass ``cls`` (the keys its document may hold), in field order."""
    skip = set(exclude)
    return [n for n in _field_names(cls) if n not in skip]


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    """``dataclasses.fields`` once per class (a fleet's declaration checks thousands of blocks)."""
    return tuple(f.name for f in fields(cls))


def unknown_keys(d: Mapping[str, Any], allowed: Iterable[str]) -> list[Any]:
    """The keys of ``d`` not in ``allowed``, in the document's order."""
    known = set(allowed)
    return [key for key in d if key not in known]


def closest(word: str, choices: Iterable[str], *, cutoff: float = 0.6) -> str | None:
    """The closest of ``choices`` to ``word`` (for 'did you mean'), or None."""
    import difflib  # only for an error's hint: not on every build's import path

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff)
    return close[0] if close else None


# ---------------------------------------------------------------------------- collecting (declarations)


class Errors:
    """Collects validation errors while a declaration is parsed; ``source`` prefixes every path."""

    def __init__(self, source: str | None) -> None:
        self.items: list[TritonValidationError] = []
        self.source = source

    def where(self, path: str) -> str:
        return f"{self.source}: {path}" if self.source else path

    def add(self, code: str, path: str, prop: str, value: Any, problem: str, allowed: str, fix: str) -> None:
        self.items.append(
            TritonValidationError(
                code,
                prop=prop,
                value=value,
                problem=problem,
                allowed=allowed,
                fix=fix,
                path=self.where(path),
            )
        )

    def extend(self, errors: Iterable[TritonValidationError]) -> None:
        """Add errors located by document path (no source yet), prefixing the source."""
        for e in errors:
            self.items.append(e.at(self.where(e.path)) if self.source and e.path else e)


def problem(
    code: str, path: str, prop: str, value: Any, problem: str, allowed: str, fix: str
) -> TritonValidationError:
    """One error located at a document path (the :class:`Errors` that collects it adds the source)."""
    return TritonValidationError(
        code, prop=prop, value=value, problem=problem, allowed=allowed, fix=fix, path=path
    )


def type_name(typ: TypeSpec) -> str:
    """The YAML word for a Python type: ``a string``, ``an integer``, ``a number or ...``."""
    names = {
        "str": "a string",
        "int": "an integer",
        "float": "a number",
        "bool": "true or false",
        "list": "a list",
        "dict": "a mapping",
    }
    if isinstance(typ, tuple):
        return " or ".join(names.get(t.__name__, t.__name__) for t in typ)
    return names.get(typ.__name__, typ.__name__)


def is_mapping(d: Any, path: str, what: str, allowed: str, errs: Errors) -> bool:
    """True for a mapping; else records an InvalidType error naming what was expected."""
    if isinstance(d, dict):
        return True
    errs.add("InvalidType", path, what, d, "is not a mapping", allowed, "write a mapping")
    return False


def one_of(
    errs: Errors,
    path: str,
    key: str,
    value: Any,
    choices: tuple[str, ...],
    code: str,
    what: str,
    fix: str,
    shown: Any = None,
) -> bool:
    """True when ``value`` is one of ``choices``; else records ``code`` naming the allowed values."""
    if value in choices:
        return True
    errs.add(
        code,
        f"{path}.{key}",
        key,
        value if shown is None else shown,
        f"is not {what}",
        ", ".join(choices),
        fix,
    )
    return False


def check_keys(d: Mapping[str, Any], cls: type, path: str, errs: Errors, extra: tuple[str, ...] = ()) -> None:
    """Records an UnknownKey error (with the closest valid key) for each key that is not a field."""
    allowed = [k for k in dataclass_keys(cls, exclude=("base_dir",)) if not k.startswith("_")]
    allowed += list(extra)
    for key in unknown_keys(d, allowed):
        close = closest(str(key), allowed, cutoff=0.5)
        errs.add(
            "UnknownKey",
            f"{path}.{key}" if path else str(key),
            f"key '{key}'",
            key,
            "is not a valid key here",
            ", ".join(sorted(allowed)),
            f"did you mean '{close}'?" if close else "remove it",
        )


def typed(
    d: Mapping[str, Any],
    key: str,
    typ: TypeSpec,
    path: str,
    errs: Errors,
    default: Any = None,
    required: bool = False,
) -> Any:
    """``d[key]`` when it has type ``typ`` (an int is widened for float), else ``default``.

    A missing or null key is a MissingField error when ``required``; a wrong type an InvalidType.
    """
    here = f"{path}.{key}" if path else key
    if key not in d or d[key] is None:
        if required:
            errs.add(
                "MissingField",
                here,
                key,
                None,
                "is required",
                type_name(typ),
                f"add '{key}' to the declaration",
            )
        return default
    v = d[key]
    if typ is float and isinstance(v, int) and not isinstance(v, bool):
        return float(v)
    if not has_type(v, typ):
        errs.add(
            "InvalidType",
            here,
            key,
            v,
            f"has the wrong type ({type(v).__name__})",
            type_name(typ),
            f"write '{key}' as {type_name(typ)}",
        )
        return default
    return v


def positive_ints(d: Mapping[str, Any], key: str, path: str, errs: Errors) -> list[int]:
    """``d[key]`` as a list of positive integers (default empty); an ``InvalidType`` error otherwise."""
    values = typed(d, key, list, path, errs, default=[])
    if all(isinstance(x, int) and not isinstance(x, bool) and x > 0 for x in values):
        return values
    errs.add(
        "InvalidType",
        f"{path}.{key}",
        key,
        values,
        "is not a list of positive integers",
        "positive integers",
        "fix the list",
    )
    return []


def str_map(d: Any, here: str, errs: Errors) -> dict[str, str]:
    """A mapping of strings to strings (None is empty); else an InvalidType error and ``{}``."""
    if d is None:
        return {}
    if not isinstance(d, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in d.items()):
        errs.add(
            "InvalidType",
            here,
            here.rsplit(".", 1)[-1],
            d,
            "is not a mapping of strings",
            "a mapping",
            "write it as name: name pairs",
        )
        return {}
    return dict(d)


# ---------------------------------------------------------------------------- first error raises (manifest)

#: Builds the error for ``(where, value, problem, allowed)``; the reader raises it.
Fail = Callable[[str, Any, str, str], Exception]


def python_type_name(typ: TypeSpec) -> str:
    """``str``, ``int or float``: the Python names, as the manifest's messages show them."""
    return typ.__name__ if isinstance(typ, type) else " or ".join(t.__name__ for t in typ)


#: The manifest reader has always accepted true/false where a number (int or float) is read.
MANIFEST_BOOL_REJECTED_FOR: tuple[TypeSpec, ...] = (int,)


def required(d: Mapping[str, Any], key: str, typ: TypeSpec, where: str, fail: Fail) -> Any:
    """``d[key]``, which must be present and of type ``typ``; else raises ``fail(...)``."""
    if key not in d:
        raise fail(f"{where}.{key}", None, "is missing", python_type_name(typ))
    v = d[key]
    if not has_type(v, typ, bool_rejected_for=MANIFEST_BOOL_REJECTED_FOR):
        raise fail(f"{where}.{key}", v, "has the wrong type", python_type_name(typ))
    return v


def optional(d: Mapping[str, Any], key: str, typ: TypeSpec, where: str, fail: Fail) -> Any:
    """``d[key]``, None when absent or null; else it must have type ``typ``."""
    if d.get(key) is None:
        return None
    return required(d, key, typ, where, fail)


def known_keys(d: Mapping[str, Any], allowed: set[str], where: str, fail: Fail, *, what: str) -> None:
    """Raises ``fail(...)`` for the first (sorted) key of ``d`` that is not in ``allowed``."""
    extra = sorted(unknown_keys(d, allowed))
    if extra:
        raise fail(f"{where}.{extra[0]}", extra[0], f"is not {what}", ", ".join(sorted(allowed)))
