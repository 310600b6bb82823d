"""Text edits of ``models.yaml`` at the spans of its nodes: every untouched line stays byte-identical.

ruamel.yaml composes the file into nodes that carry the line and column where they start and end
(``compose``; nothing is ever dumped). An edit replaces the text of one value (from its first
character to its last, so an anchor before it and a comment after it stay), deletes the lines of one
field, or inserts the lines of a new field after the field it follows, at the model's own indentation.
A value is rendered in the style of the node it replaces (flow stays flow, block stays block at the
same indentation, quoting kept); a new field in the style the same field has in another model of the
file, else in the style the file uses most (:class:`Profile`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./+-]*")


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` with ``new`` (an insertion when ``start == end``); ``order`` breaks ties."""

    start: int
    end: int
    new: str
    order: int = 0


@dataclass
class Profile:
    """The file's habits, used for what has no node to copy: indents and flow or block collections."""

    map_indent: int = 2
    seq_offset: int = 2
    item_offset: int = 2
    scalar_seq_flow: bool = True
    map_seq_flow: bool = True
    leaf_map_flow: bool = True


@dataclass
class Source:
    """The text of one file (byte order mark removed) and its composed nodes."""

    text: str
    root: Any
    newline: str = "\n"
    starts: list[int] = field(default_factory=list)
    refs: Counter[int] = field(default_factory=Counter)
    key_col: dict[int, int] = field(default_factory=dict)
    profile: Profile = field(default_factory=Profile)

    @classmethod
    def parse(cls, text: str) -> Source:
        from ruamel.yaml import YAML

        root = YAML(typ="rt").compose(text)
        src = cls(text, root, "\r\n" if "\r\n" in text else "\n")
        src.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        if root is not None:
            src._walk(root)
        src.settle()
        return src

    def off(self, mark: Any) -> int:
        return self.starts[mark.line] + mark.column

    def line_start(self, pos: int) -> int:
        return self.text.rfind("\n", 0, pos) + 1

    def line_end(self, pos: int) -> int:
        """The offset after the newline of the line holding ``pos`` (the text's end on the last line)."""
        nl = self.text.find("\n", pos)
        return len(self.text) if nl < 0 else nl + 1

    def column(self, pos: int) -> int:
        return pos - self.line_start(pos)

    # -- spans -----------------------------------------------------------------------------------
    def is_alias_at(self, node: Any, floor: int) -> bool:
        """Whether ``node`` appears here as an alias (its anchor was defined before ``floor``)."""
        return self.off(node.start_mark) < floor

    def alias_span(self, node: Any, floor: int) -> tuple[int, int]:
        start = self.text.index("*" + str(node.anchor), floor)
        return start, start + 1 + len(str(node.anchor))

    def content_start(self, node: Any) -> int:
        """The first character of ``node``'s own content (after its anchor, tag and any blank space)."""
        pos = self.off(node.start_mark)
        while self.text[pos] in "&!":
            while pos < len(self.text) and not self.text[pos].isspace():
                pos += 1
            while pos < len(self.text) and self.text[pos] in " \t\r\n":
                pos += 1
        return pos

    def content_end(self, node: Any, floor: int) -> int:
        """The offset after the last character of ``node`` at this place (comments after it excluded)."""
        if self.is_alias_at(node, floor):
            return self.alias_span(node, floor)[1]
        if is_scalar(node) and node.style in ("|", ">"):  # a block scalar ends at its last character
            return len(self.text[: self.off(node.end_mark)].rstrip(" \t\r\n"))
        if is_scalar(node) or node.flow_style:
            return self.off(node.end_mark)
        end = self.off(node.start_mark)
        if is_mapping(node):
            for k, v in node.value:
                end = max(self.off(k.end_mark), self.content_end(v, self.off(k.end_mark)))
            return end
        for item in node.value:
            end = self.content_end(item, end)
        return end

    # -- the file's habits -------------------------------------------------------------------------
    def _walk(self, node: Any, seen: set[int] | None = None) -> None:
        seen = set() if seen is None else seen
        self.refs[id(node)] += 1
        if id(node) in seen or is_scalar(node):
            return
        seen.add(id(node))
        votes = self._votes
        if is_mapping(node):
            if node.value and all(is_scalar(v) for _, v in node.value):
                votes["leaf_map_flow"][bool(node.flow_style)] += 1
            for k, v in node.value:
                self.key_col.setdefault(id(v), k.start_mark.column)
                if not is_scalar(v) and not v.flow_style and not node.flow_style and self.refs[id(v)] == 0:
                    col = self.column(self.content_start(v))
                    key = "map_indent" if is_mapping(v) else "seq_offset"
                    votes[key][col - k.start_mark.column] += 1
                self._walk(v, seen)
            return
        if node.value and all(is_scalar(i) for i in node.value):
            votes["scalar_seq_flow"][bool(node.flow_style)] += 1
        if node.value and all(is_mapping(i) and all(_leaf_node(v) for _, v in i.value) for i in node.value):
            votes["map_seq_flow"][bool(node.flow_style)] += 1
        for item in node.value:
            if is_mapping(item) and not item.flow_style and not node.flow_style and item.value:
                votes["item_offset"][item.value[0][0].start_mark.column - node.start_mark.column] += 1
            self._walk(item, seen)

    def __post_init__(self) -> None:
        self._votes: dict[str, Counter[Any]] = {k: Counter() for k in Profile.__dataclass_fields__}

    def settle(self) -> None:
        """Fix :attr:`profile` from the votes the walk collected (the most common habit wins)."""
        for name, counter in self._votes.items():
            if counter:
                setattr(self.profile, name, counter.most_common(1)[0][0])


def is_scalar(node: Any) -> bool:
    return type(node).__name__ == "ScalarNode"


def is_mapping(node: Any) -> bool:
    return type(node).__name__ == "MappingNode"


def own_pairs(node: Any) -> list[tuple[Any, Any]]:
    """A mapping node's own key/value pairs (merge keys ``<<`` left out)."""
    return [(k, v) for k, v in node.value if not (is_scalar(k) and k.value == "<<")]


def pair(node: Any, key: str) -> tuple[Any, Any] | None:
    return next(((k, v) for k, v in own_pairs(node) if is_scalar(k) and k.value == key), None)


# -- rendering ---------------------------------------------------------------------------------------
class Renderer:
    """Plain values as YAML text in the style of a reference node (or the file's profile without one)."""

    def __init__(self, src: Source, key_style: str | None = None) -> None:
        self.src = src
        self.p = src.profile
        self.key_style = key_style  # how keys with no node to copy are quoted

    def key(self, key: Any, ref: Any) -> str:
        """``key`` quoted as the same key of ``ref`` is, else as ``ref``'s first key, else :attr:`key_style`."""
        style = self.key_style
        if ref is not None and is_mapping(ref) and ref.value:
            found = pair(ref, str(key))
            style = (found[0] if found is not None else ref.value[0][0]).style
        if style == "'":
            return "'" + str(key).replace("'", "''") + "'"
        return json.dumps(str(key)) if style == '"' else str(key)

    def flow_of(self, value: Any, ref: Any) -> bool:
        if ref is not None and not is_scalar(ref) and is_mapping(ref) == isinstance(value, Mapping):
            return bool(ref.flow_style)
        if isinstance(value, Mapping):
            return self.p.leaf_map_flow and all(_leafish(v) for v in value.values())
        if all(not isinstance(v, Mapping | list | tuple) for v in value):
            return self.p.scalar_seq_flow
        if all(isinstance(v, Mapping) and all(_leafish(x) for x in v.values()) for v in value):
            return self.p.map_seq_flow and self.p.leaf_map_flow
        return False

    def scalar(self, value: Any, ref: Any) -> str:
        if isinstance(value, bool) or value is None:
            return {True: "true", False: "false", None: "null"}[value]
        if not isinstance(value, str):
            return str(value)
        style = ref.style if ref is not None and is_scalar(ref) else None
        if style == "'":
            return "'" + value.replace("'", "''") + "'"
        if style == '"' or not _plain_ok(value):
            return json.dumps(value)
        return value

    def flow(self, value: Any, ref: Any) -> str:
        if isinstance(value, Mapping):
            pad = " " if self._padded(ref, "{") else ""
            body = ", ".join(f"{self.key(k, ref)}: {self.flow(v, _child(ref, k))}" for k, v in value.items())
            return "{" + pad + body + pad + "}" if body else "{}"
        if isinstance(value, list | tuple):
            pad = " " if self._padded(ref, "[") else ""
            body = ", ".join(self.flow(v, _item(ref)) for v in value)
            return "[" + pad + body + pad + "]" if body else "[]"
        return self.scalar(value, ref)

    def _padded(self, ref: Any, bracket: str) -> bool:
        if ref is None or is_scalar(ref) or not ref.flow_style:
            return False
        pos = self.src.content_start(ref)
        return self.src.text[pos] == bracket and self.src.text[pos + 1 : pos + 2] == " "

    def block(self, value: Any, ref: Any, col: int) -> list[str]:
        """Lines of a block collection whose first key or ``-`` sits at ``col`` (each line indented)."""
        lines: list[str] = []
        if isinstance(value, Mapping):
            for k, v in value.items():
                lines += self.field(self.key(k, ref), v, _child(ref, k), col)
            return lines
        item_ref = _item(ref)
        offset = self._item_offset(ref)
        for item in value:
            if isinstance(item, Mapping) and item and not self.flow_of(item, item_ref):
                sub = self.block(item, item_ref, col + offset)
                sub[0] = " " * col + "-" + " " * (offset - 1) + sub[0][col + offset :]
                lines += sub
            else:
                lines.append(" " * col + "- " + self.inline(item, item_ref))
        return lines

    def _item_offset(self, ref: Any) -> int:
        first = _item(ref)
        if first is not None and is_mapping(first) and not first.flow_style and first.value:
            return max(2, first.value[0][0].start_mark.column - ref.start_mark.column)
        return max(2, self.p.item_offset)

    def inline(self, value: Any, ref: Any) -> str:
        if isinstance(value, Mapping | list | tuple):
            return self.flow(value, ref)
        return self.scalar(value, ref)

    def field(self, key: str, value: Any, ref: Any, col: int) -> list[str]:
        """The lines of ``key: value`` at ``col``."""
        if not isinstance(value, Mapping | list | tuple) or not value or self.flow_of(value, ref):
            return [" " * col + f"{key}: {self.inline(value, ref)}"]
        return [" " * col + f"{key}:", *self.block(value, ref, col + self.indent_of(value, ref))]

    def indent_of(self, value: Any, ref: Any) -> int:
        """How far a block value sits right of its key: the reference's own indent, else the profile's."""
        if ref is not None and not is_scalar(ref) and not ref.flow_style:
            key_col = self.src.key_col.get(id(ref))
            if key_col is not None:
                return self.src.column(self.src.content_start(ref)) - key_col
        return self.p.map_indent if isinstance(value, Mapping) else self.p.seq_offset


def _leaf_node(node: Any) -> bool:
    return is_scalar(node) or (not is_mapping(node) and all(is_scalar(i) for i in node.value))


def _leafish(value: Any) -> bool:
    return not isinstance(value, Mapping) and not (
        isinstance(value, list | tuple) and any(isinstance(v, Mapping | list | tuple) for v in value)
    )


def _child(ref: Any, key: Any) -> Any:
    if ref is None or not is_mapping(ref):
        return None
    found = pair(ref, str(key))
    return None if found is None else found[1]


def _item(ref: Any) -> Any:
    if ref is None or is_scalar(ref) or is_mapping(ref) or not ref.value:
        return None
    return ref.value[0]


def _plain_ok(value: str) -> bool:
    if not _PLAIN.fullmatch(value):
        return False
    try:
        return bool(yaml.safe_load(value) == value)
    except yaml.YAMLError:
        return False


def apply_edits(text: str, edits: list[Edit]) -> str:
    """``text`` with every edit made (spans must not overlap)."""
    out = text
    for e in sorted(edits, key=lambda e: (e.start, e.order), reverse=True):
        out = out[: e.start] + e.new + out[e.end :]
    return out


def walk_pairs(node: Any) -> Iterator[tuple[Any, Any]]:
    """Every key/value pair under ``node`` (each node once)."""
    seen: set[int] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if id(n) in seen or is_scalar(n):
            continue
        seen.add(id(n))
        if is_mapping(n):
            for k, v in n.value:
                yield k, v
                stack.append(v)
        else:
            stack.extend(n.value)
