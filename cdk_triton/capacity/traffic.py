"""The traffic file: requests per second, or shares, per TargetModel.

```yaml
rps:                 # requests per second per model (or `share:` with weights: normalized to sum 1)
  classifier: 40
  resnet_ts: 0.5
```

Keys are the manifest's logical names (or the hashed TargetModel values). A model of the endpoint the
file does not name gets no traffic (the report lists them). JSON of the same shape reads too.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdk_triton.errors import TritonValidationError

RPS = "rps"
SHARE = "share"
NONE = "none"
EXAMPLE = "rps: {model: requests per second, ...} or share: {model: weight, ...}"


@dataclass(frozen=True, kw_only=True, slots=True)
class Traffic:
    """Traffic per model of one endpoint.

    Attributes:
        kind: ``rps`` (requests per second given), ``share`` (weights given) or ``none`` (no file).
        shares: model -> share of all requests (sums to 1; every share 0 when there is no traffic).
        rps: model -> requests per second (``rps`` files only).
        unlisted: the endpoint's models the file does not name (no traffic).
        source: the file read, if any.
    """

    kind: str
    shares: dict[str, float]
    rps: dict[str, float] = field(default_factory=dict)
    unlisted: list[str] = field(default_factory=list)
    source: str | None = None

    @property
    def total_rps(self) -> float | None:
        return sum(self.rps.values()) if self.kind == RPS else None

    @property
    def has_traffic(self) -> bool:
        return any(v > 0 for v in self.shares.values())


def no_traffic(models: Sequence[str]) -> Traffic:
    """No file: every model alike (no hit ratio can be computed)."""
    return Traffic(kind=NONE, shares=dict.fromkeys(models, 0.0), unlisted=[])


def _bad(
    problem: str, value: Any, source: str | None, *, code: str = "InvalidTraffic"
) -> TritonValidationError:
    return TritonValidationError(
        code,
        prop="traffic",
        value=value,
        problem=problem,
        allowed=EXAMPLE,
        fix="write the traffic file as in the capacity guide (docs/guides/capacity.md, 'Run it')",
        path=source,
    )


def read_traffic(
    path: str | Path, models: Sequence[str], aliases: Mapping[str, str] | None = None
) -> Traffic:
    """Read a YAML (``.yaml``/``.yml``) or JSON traffic file for ``models`` (logical names);
    ``aliases`` maps other accepted keys (hashed TargetModel values) to logical names."""
    p = Path(path)
    source = str(p)
    if not p.is_file():
        raise _bad("does not exist", source, None)
    text = p.read_text("utf-8")
    if p.suffix.lower() in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise _bad("is YAML, and PyYAML is not installed", source, None) from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise _bad(f"is not valid YAML ({exc})", source, None) from None
    else:
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise _bad(f"is not valid JSON ({exc}); name a YAML file .yaml", source, None) from None
    return traffic_from_mapping(data, models, aliases=aliases, source=source)


def traffic_from_mapping(
    data: Any,
    models: Sequence[str],
    *,
    aliases: Mapping[str, str] | None = None,
    source: str | None = None,
) -> Traffic:
    """Validate a parsed traffic document (see the module docstring) against ``models``."""
    if not isinstance(data, Mapping) or len(data) != 1 or next(iter(data)) not in (RPS, SHARE):
        keys = sorted(data) if isinstance(data, Mapping) else type(data).__name__
        raise _bad("must hold exactly one key, rps or share", keys, source)
    kind = next(iter(data))
    given = data[kind]
    if not isinstance(given, Mapping) or not given:
        raise _bad(f"{kind} must map model names to numbers", given, source)
    names = {**(aliases or {}), **{m: m for m in models}}
    values: dict[str, float] = {}
    for key, value in given.items():
        if str(key) not in names:
            raise TritonValidationError(
                "UnknownTrafficModel",
                prop=f"traffic {kind}",
                value=key,
                problem="is not a TargetModel of the endpoint",
                allowed=", ".join(sorted(models)),
                fix="use the manifest's logical names (or the hashed TargetModel values)",
                path=source,
            )
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < 0
        ):
            raise _bad(f"{kind} of '{key}' must be a number >= 0", value, source)
        model = names[str(key)]
        values[model] = values.get(model, 0.0) + float(value)
    total = sum(values.values())
    shares = {m: (values.get(m, 0.0) / total if total > 0 else 0.0) for m in models}
    return Traffic(
        kind=kind,
        shares=shares,
        rps={m: values.get(m, 0.0) for m in models} if kind == RPS else {},
        unlisted=sorted(m for m in models if m not in values),
        source=source,
    )
