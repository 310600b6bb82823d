"""Write a variant's tuned fields back into ``models.yaml``, keeping comments, order and formatting.

ruamel.yaml's round-trip mode re-emits the untouched parts of the file as they were; only the tuned
fields (``format``, ``dynamic_batching``, ``instance_groups``) of the changed models differ. New
mappings are written in flow style (``{kind: KIND_GPU, count: 2}``), as the example declares them.
"""

from __future__ import annotations

import difflib
import io
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cdk_triton.builder.declarations import invalid_yaml
from cdk_triton.config.declaration.view import RawDeclaration
from cdk_triton.tune.variants import TUNED_FIELDS, Variant


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never fold a long line the user wrote on one
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def load_document(path: Path) -> Any:
    """The round-trip document of ``path`` (comments and anchors kept)."""
    try:
        return _yaml().load(path.read_text("utf-8"))
    except Exception as exc:  # ruamel raises several parser error types
        raise invalid_yaml(path, exc) from None


def dump_document(doc: Any) -> str:
    buf = io.StringIO()
    _yaml().dump(doc, buf)
    return buf.getvalue()


def _flow(value: Any) -> Any:
    """Plain data as ruamel containers in flow style (one line, like the example's declarations)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(value, Mapping):
        m = CommentedMap((k, _flow(v)) for k, v in value.items())
        m.fa.set_flow_style()
        return m
    if isinstance(value, list | tuple):
        s = CommentedSeq(_flow(v) for v in value)
        s.fa.set_flow_style()
        return s
    return value


def apply_variant(doc: Any, variant: Variant) -> None:
    """Set the variant's fields on its models in ``doc`` (in place); ``None`` removes a field."""
    view = RawDeclaration(doc)
    for model, change in variant.changes.items():
        entry: Any = view.model(model)
        if entry is None:
            raise KeyError(model)
        for key in TUNED_FIELDS:
            if key not in change:
                continue
            value = change[key]
            if value is None:
                if key in entry:
                    del entry[key]
                continue
            if _same(entry.get(key), value) or (key not in entry and _is_default(key, value)):
                continue  # keep the user's spelling of an equal value; never spell out a default
            if key in entry:
                entry[key] = _flow(value)
            else:  # a new key goes after the one it follows in the declaration order
                anchor = _insert_position(entry, key)
                entry.insert(anchor, key, _flow(value))


def _insert_position(entry: Any, key: str) -> int:
    order = ["name", "format", "optional", "source", "inputs", "outputs", "max_batch_size", *TUNED_FIELDS[1:]]
    keys = list(entry.keys())
    want = order.index(key) if key in order else len(order)
    for i, k in enumerate(keys):
        if k in order and order.index(k) > want:
            return i
    return len(keys)


def _is_default(key: str, value: Any) -> bool:
    """One instance of the default kind is what Triton does when ``instance_groups`` is absent."""
    return key == "instance_groups" and _same(value, [{"kind": "KIND_GPU", "count": 1}])


def _same(a: Any, b: Any) -> bool:
    from cdk_triton.tune.variants import _plain

    return _plain(a) == _plain(b)


def render_change(path: Path, variant: Variant) -> tuple[str, str]:
    """(the new text of ``path`` with ``variant`` applied, a unified diff against the current text)."""
    old = path.read_text("utf-8")
    doc = load_document(path)
    apply_variant(doc, variant)
    new = dump_document(doc)
    diff = "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path.name}", f"b/{path.name}"
        )
    )
    return new, diff


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` through a temp file in the same directory (never half-written)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
