"""Write a variant's tuned fields back into ``models.yaml``: only those fields' text changes.

:func:`render_change` splices the new values into the file's own text at the nodes' spans
(:mod:`~cdk_triton.tune.writeback`, :mod:`~cdk_triton.tune.splice`): every other line stays byte for
byte as the user wrote it (indentation, document markers, comments, blank lines, anchors, flow or
block style, quoting, CRLF line ends), the result is read back and checked before it is returned, and
:func:`write_atomically` replaces the file through a temp file. The in-memory round trip
(:func:`load_document` / :func:`apply_variant` / :func:`dump_document`) is for the files tune writes
itself (each variant's declaration, the tuning endpoint's declaration), never the user's.
"""

from __future__ import annotations

import difflib
import io
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cdk_triton.config.declaration.file import invalid_yaml
from cdk_triton.config.declaration.view import RawDeclaration
from cdk_triton.tune.variants import TUNED_FIELDS, Variant
from cdk_triton.tune.writeback import insert_position, is_default, same, splice_variant


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
    """A document tune wrote itself as text (never used on the user's models.yaml)."""
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
    """Set the variant's fields on its models in ``doc`` (in place); ``None`` removes a field.

    For the declarations tune builds each variant from; the user's file goes through :func:`render_change`.
    """
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
                if key in getattr(entry, "_ok", entry):  # the model's own key (ruamel: not merged)
                    del entry[key]
                elif key in entry:  # from a merge key, which would bring it back: off, as the write-back
                    entry.insert(insert_position(list(entry.keys()), key), key, False)
                continue
            if same(entry.get(key), value) or (key not in entry and is_default(key, value)):
                continue  # keep the user's spelling of an equal value; never spell out a default
            if key in entry:
                entry[key] = _flow(value)
            else:  # a new key goes after the one it follows in the declaration order
                entry.insert(insert_position(list(entry.keys()), key), key, _flow(value))


def render_change(path: Path, variant: Variant) -> tuple[str, str]:
    """(the new text of ``path`` with ``variant`` applied, a unified diff against the current text).

    The new text is the current one with the tuned fields' spans replaced (``writeback.splice_variant``):
    every other line is the same, byte for byte, and it has been read back and checked.
    """
    load_document(path)  # an unreadable file fails here, with the loader's own error
    raw = path.read_bytes().decode("utf-8")
    new = splice_variant(raw, variant)
    diff = "".join(
        difflib.unified_diff(
            raw.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path.name}", f"b/{path.name}"
        )
    )
    return new, diff


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` through a temp file in the same directory (never half-written)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        data = text.encode("utf-8")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if Path(tmp).read_bytes() != data:  # what replaces the file is what was meant, or nothing
            raise OSError(f"{tmp}: the written bytes do not read back")
        os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
