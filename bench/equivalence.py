"""Whether two synthesized apps define the same templates, logical ids aside.

The synth benchmarks compare cdk-triton's constructs with hand-written L1 code; the ratio means
something only when both write the same CloudFormation. ``differences`` compares, per stack, the
multiset of resources (type, properties, DependsOn, policies) and of outputs after replacing every
logical id and every cross-stack export name with ``#``: ids differ by construction (the constructs'
carry path hashes), everything else must match.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

_EXPORT = re.compile(r"ExportsOutput\w+")


def canonical(templates: dict[str, dict[str, Any]]) -> dict[str, tuple[list[str], list[str]]]:
    """Per stack: sorted resources and sorted outputs as JSON texts with logical ids replaced by ``#``."""
    ids: set[str] = set()
    for tpl in templates.values():
        ids |= set(tpl.get("Resources", {})) | set(tpl.get("Outputs", {}))
    out = {}
    for name, tpl in templates.items():
        text = json.dumps(
            {"r": list(tpl.get("Resources", {}).values()), "o": list(tpl.get("Outputs", {}).values())}
        )
        text = _EXPORT.sub("EXPORT", text)
        for logical_id in sorted(ids, key=len, reverse=True):
            text = text.replace(f'"{logical_id}"', '"#"')
        data = json.loads(text)
        out[name] = (
            sorted(json.dumps(r, sort_keys=True) for r in data["r"]),
            sorted(json.dumps(o, sort_keys=True) for o in data["o"]),
        )
    return out


def differences(a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]]) -> list[str]:
    """What one app's templates have that the other's lack (empty when they are equivalent)."""
    if set(a) != set(b):
        return [f"stacks differ: {sorted(a)} vs {sorted(b)}"]
    ca, cb = canonical(a), canonical(b)
    found = []
    for stack in sorted(ca):
        for part, xs, ys in (
            ("resource", ca[stack][0], cb[stack][0]),
            ("output", ca[stack][1], cb[stack][1]),
        ):
            rest = list(ys)
            for x in xs:
                if x in rest:
                    rest.remove(x)
                else:
                    found.append(f"{stack}: {part} only in the first: {x}")
            found += [f"{stack}: {part} only in the second: {y}" for y in rest]
    return found


ACKNOWLEDGED = "aws:cdk:acknowledged-rules"


def acknowledged(outdir: str | Path) -> dict[str, set[str]]:
    """Per stack of a cloud assembly: the validation findings acknowledged anywhere in it (ids).

    A stack that passes cdk-nag carries the same acknowledgments whoever wrote it, so the hand-written
    apps write them too (one metadata entry per stack; the constructs write one per endpoint).
    """
    root = Path(outdir)
    manifest = json.loads((root / "manifest.json").read_text())
    out: dict[str, set[str]] = {}
    for name, artifact in manifest["artifacts"].items():
        if artifact.get("type") != "aws:cloudformation:stack":
            continue
        metadata = dict(artifact.get("metadata") or {})
        if artifact.get("additionalMetadataFile"):
            metadata.update(json.loads((root / artifact["additionalMetadataFile"]).read_text()))
        out[name] = {
            rule
            for entries in metadata.values()
            for entry in entries
            if entry.get("type") == ACKNOWLEDGED
            for rule in entry.get("data") or {}
        }
    return out
