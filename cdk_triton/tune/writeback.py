"""Which text edits write a variant into ``models.yaml``, and the check that the result reads back.

Per tuned model and field (``format``, ``dynamic_batching``, ``instance_groups``):

- an equal value, or the Triton default where the field is absent, is left as the user wrote it;
- a field the model has is replaced in place (:mod:`~cdk_triton.tune.splice`), in the style of its node;
- a field the model lacks, or gets from a merge key (``<<: *defaults``), is inserted after the field it
  follows in the declaration order, at the model's indentation (a model's own key wins over a merge);
- a removed field is deleted with its lines; one that comes from a merge key is written
  ``dynamic_batching: false`` (off), since the merge would bring it back;
- a field written as an alias (``dynamic_batching: *batching``) gets the new value at the alias: only
  this model changes, the anchor and its other users stay;
- a field whose value is an anchor other nodes alias (``dynamic_batching: &batching {...}`` used by a
  later ``*batching``) is refused (``TuneWriteBack``): writing it would change those models too.

The new text is parsed again with the build's loader and must equal the old document with exactly
these changes; anything else is refused before the file is touched.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from cdk_triton.errors import TritonValidationError
from cdk_triton.tune.splice import Edit, Renderer, Source, apply_edits, is_mapping, own_pairs, pair
from cdk_triton.tune.variants import TUNED_FIELDS, plain_data

#: where a new field goes among the keys of a model
DECLARATION_ORDER = (
    "name",
    "format",
    "optional",
    "source",
    "inputs",
    "outputs",
    "max_batch_size",
    "dynamic_batching",
    "instance_groups",
)
_OFF = object()  # a removed field written as `false` (its merge key would bring it back)


def is_default(key: str, value: Any) -> bool:
    """One instance of the default kind is what Triton does when ``instance_groups`` is absent."""
    return key == "instance_groups" and same(value, [{"kind": "KIND_GPU", "count": 1}])


def same(a: Any, b: Any) -> bool:
    return plain_data(a) == plain_data(b)


def insert_position(keys: list[str], key: str) -> int:
    """The index among ``keys`` where a new ``key`` goes (before the first key that follows it)."""
    order = list(DECLARATION_ORDER)
    want = order.index(key) if key in order else len(order)
    for i, k in enumerate(keys):
        if k in order and order.index(k) > want:
            return i
    return len(keys)


def refuse(prop: str, value: Any, problem: str, allowed: str, fix: str) -> TritonValidationError:
    return TritonValidationError(
        "TuneWriteBack", prop=prop, value=value, problem=problem, allowed=allowed, fix=fix
    )


def splice_variant(text: str, variant: Any) -> str:
    """``text`` (a models.yaml) with the variant's fields written in; every other line unchanged."""
    import yaml

    bom = "\ufeff" if text.startswith("\ufeff") else ""
    body = text[len(bom) :]
    src = Source.parse(body)
    expected = _normal(yaml.safe_load(body))
    edits: list[Edit] = []
    for model, change in variant.changes.items():
        index, node = _model_node(src, model)
        entry = expected["models"][index]
        for key in (k for k in TUNED_FIELDS if k in change):
            edit = _field_edit(src, node, index, entry, key, change[key], len(edits))
            if edit is not None:
                edits.append(edit)
    new = apply_edits(body, edits)
    try:
        back = _normal(yaml.safe_load(new))
    except yaml.YAMLError:
        back = None
    if back != expected:
        raise refuse(
            "models.yaml",
            ", ".join(variant.changes),
            "would not read back to the tuned values after the write-back (nothing was written)",
            "a declaration whose tuned fields are plain keys of each model",
            "apply the diff by hand, and report the file's style as a cdk-triton issue",
        )
    return bom + new


def _model_node(src: Source, model: str) -> tuple[int, Any]:
    models = pair(src.root, "models") if src.root is not None and is_mapping(src.root) else None
    items = models[1].value if models is not None and not is_mapping(models[1]) else []
    for i, node in enumerate(items):
        name = pair(node, "name") if is_mapping(node) else None
        if name is not None and name[1].value == model:
            if src.refs[id(node)] > 1:
                raise refuse(
                    f"models[{i}]",
                    model,
                    "is an anchored mapping other nodes alias: writing into it would change them too",
                    "a model written out in models[]",
                    f"write models[{i}] out in full (no alias of it), then apply again",
                )
            return i, node
    raise KeyError(model)


def _field_edit(
    src: Source, node: Any, index: int, entry: dict[str, Any], key: str, value: Any, order: int
) -> Edit | None:
    """The edit that gives ``key`` its new ``value`` (``None`` removes it), or None when nothing changes."""
    value = plain_data(value)
    own = pair(node, key)
    if value is None:
        if key not in entry:
            return None
        if own is not None:
            del entry[key]
            return _remove(src, node, own)
        value = _OFF if key == "dynamic_batching" else None
        if value is None:
            raise refuse(
                f"models[{index}].{key}",
                key,
                "comes from a merge key and has no off value to override it with",
                "dynamic_batching (written as `false`)",
                f"write {key} in models[{index}] itself, then apply again",
            )
        entry[key] = False
    elif same(entry.get(key), value) or (key not in entry and is_default(key, value)):
        return None
    else:
        entry[key] = value
    written = False if value is _OFF else value
    if own is None:
        return _insert(src, node, key, written, order)
    return _replace(src, own, f"models[{index}].{key}", written, order)


def _ref_for(src: Source, key: str, node: Any) -> Any:
    """The node whose style a new ``key`` copies: the same field in another model, first in the file."""
    models = pair(src.root, "models")
    for other in models[1].value if models else []:
        if other is not node and is_mapping(other):
            found = pair(other, key)
            if found is not None:
                return found[1]
    return None


def _replace(src: Source, own: tuple[Any, Any], prop: str, value: Any, order: int) -> Edit:
    k, v = own
    floor = src.off(k.end_mark)
    render = Renderer(src)
    if src.is_alias_at(v, floor):  # `key: *anchor`: this model gets its own value; the anchor stays
        _, end = src.alias_span(v, floor)
        return _rewrite_field(src, k, end, value, v, order)
    if src.refs[id(v)] > 1:
        raise refuse(
            prop,
            f"&{v.anchor}",
            f"is an anchor {src.refs[id(v)] - 1} other place(s) alias (*{v.anchor}): writing it would change them too",
            "a value this model owns, or an alias here (the new value is then written at the alias)",
            f"copy the anchored value to its other users or move &{v.anchor} to one of them, then apply again",
        )
    start, end = src.content_start(v), src.content_end(v, floor)
    if end <= start or src.line_start(start) != src.line_start(floor) and not _is_block(v):
        return _rewrite_field(src, k, end, value, v, order)
    if _is_block(v) and isinstance(value, Mapping | list) and value:
        col = src.column(start)
        lines = render.block(value, v, col)
        return Edit(start, end, src.newline.join(lines)[col:], order)
    if _is_block(v):  # block -> an empty or scalar value: rewrite the field on one line
        return _rewrite_field(src, k, end, value, v, order)
    return Edit(start, end, render.inline(value, v), order)


def _rewrite_field(src: Source, k: Any, end: int, value: Any, ref: Any, order: int) -> Edit:
    """``key: value`` from the key to ``end`` (an alias, an empty value): the key's text kept."""
    start = src.off(k.start_mark)
    key_text = src.text[start : src.off(k.end_mark)]
    col = src.column(start)
    lines = Renderer(src).field(key_text, value, ref, col)
    return Edit(start, end, src.newline.join(lines)[col:], order)


def _is_block(node: Any) -> bool:
    return type(node).__name__ != "ScalarNode" and not node.flow_style


def _remove(src: Source, node: Any, own: tuple[Any, Any]) -> Edit:
    pairs = own_pairs(node)
    i = pairs.index(own)
    k, v = own
    end = src.content_end(v, src.off(k.end_mark))
    if node.flow_style:
        if i > 0:
            pk, pv = pairs[i - 1]
            return Edit(src.content_end(pv, src.off(pk.end_mark)), end, "")
        nxt = src.off(pairs[i + 1][0].start_mark) if i + 1 < len(pairs) else end
        return Edit(src.off(k.start_mark), nxt, "")
    return Edit(src.line_start(src.off(k.start_mark)), src.line_end(end), "")


def _insert(src: Source, node: Any, key: str, value: Any, order: int) -> Edit:
    pairs = own_pairs(node)
    i = max(1, insert_position([str(k.value) for k, _ in pairs], key))
    pk, pv = pairs[i - 1]
    after = src.content_end(pv, src.off(pk.end_mark))
    ref = _ref_for(src, key, node)
    render = Renderer(src, key_style=pairs[0][0].style)
    name = render.key(key, None)
    if node.flow_style:
        return Edit(after, after, f", {name}: {render.flow(value, ref)}", order)
    col = pairs[0][0].start_mark.column
    text = src.newline.join(render.field(name, value, ref, col))
    at = src.line_end(after)
    if at == len(src.text) and not src.text.endswith("\n"):
        return Edit(at, at, src.newline + text, order)
    return Edit(at, at, text + src.newline, order)


def _normal(value: Any) -> Any:
    return json.loads(json.dumps(plain_data(value), default=str))
