"""``--shard I/N`` and ``--list-shards N``: a stable share of the models for each of N machines.

The assignment rule (rendezvous, or highest-random-weight, hashing): the models are first joined into
groups, an ensemble with every model of its closure (a step shared by two ensembles joins them); a
group goes to the shard ``i`` in ``0..N-1`` with the highest weight
``sha256("<group name>\\0<i>")`` (first 8 bytes, big-endian; a tie goes to the lower ``i``), where
the group's name is its smallest model name (so the order of the declaration never matters). A model's shard depends only on its group's name and N:
adding or removing a model moves no other model (unless it joins or splits groups), and going from N
to N+1 shards moves about 1/(N+1) of the models, each to the new shard.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from cdk_triton.config.declaration import BuildSpec
from cdk_triton.errors import TritonValidationError


@dataclass(frozen=True, kw_only=True, slots=True)
class Shard:
    """Shard ``index`` of ``count`` (0-based, as a Step Functions Map index)."""

    index: int
    count: int


def _invalid(value: object, problem: str) -> TritonValidationError:
    return TritonValidationError(
        "InvalidShard",
        prop="--shard",
        value=value,
        problem=problem,
        allowed="I/N with integers 0 <= I < N (0-based: --shard 0/4 ... --shard 3/4)",
        fix="pass --shard 0/2 and --shard 1/2 on two machines, then merge their manifests with --merge-manifest",
    )


def parse_shard(value: str | Shard) -> Shard:
    """``"I/N"`` -> :class:`Shard`, refused with ``InvalidShard`` unless ``0 <= I < N``."""
    if isinstance(value, Shard):
        index, count = value.index, value.count
    else:
        head, sep, tail = str(value).partition("/")
        try:
            index, count = int(head), int(tail)
        except ValueError:
            raise _invalid(value, "is not I/N") from None
        if not sep:
            raise _invalid(value, "is not I/N")
    if count < 1 or not 0 <= index < count:
        raise _invalid(value if not isinstance(value, Shard) else f"{index}/{count}", "is out of range")
    return Shard(index=index, count=count)


def check_count(spec: BuildSpec, count: int, *, prop: str = "--shard", value: object = None) -> int:
    """``count`` shards for ``spec``: at most one per group (:func:`groups`), else ``InvalidShard`` naming
    the group count (a shard beyond it would be empty, and ``assign`` weighs every shard per group).
    Returns the number of groups."""
    n = len(groups(spec))
    if count > n:
        raise TritonValidationError(
            "InvalidShard",
            prop=prop,
            value=value if value is not None else count,
            problem=f"asks for {count} shards but the declaration has {n} shard groups (a model, or an "
            "ensemble with every model of its closure): a shard beyond them would build nothing",
            allowed=f"N from 1 to {n}",
            fix=f"pass N <= {n}, e.g. --shard 0/{min(n, 4)}",
        )
    return n


def parse_count(value: str | int) -> int:
    """``--list-shards N``: a positive number of shards."""
    try:
        n = int(value)
    except (TypeError, ValueError):
        n = 0
    if n < 1:
        raise TritonValidationError(
            "InvalidShard",
            prop="--list-shards",
            value=value,
            problem="is not a positive number of shards",
            allowed="an integer >= 1",
            fix="pass e.g. --list-shards 4",
        )
    return n


def groups(spec: BuildSpec) -> list[list[str]]:
    """The models joined by their ensembles (union-find over ensemble -> step edges), each group in
    declaration order, the groups in the order of their first model."""
    parent = {n: n for n in spec.model_names}

    def find(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for m in spec.models:
        for s in m.steps:
            a, b = find(m.name), find(s.model)
            if a != b:
                parent[max(a, b)] = min(a, b)
    out: dict[str, list[str]] = {}
    for n in spec.model_names:
        out.setdefault(find(n), []).append(n)
    return list(out.values())


def weight(name: str, shard: int) -> int:
    """The rendezvous weight of ``name`` on ``shard``."""
    return int.from_bytes(hashlib.sha256(f"{name}\0{shard}".encode()).digest()[:8], "big")


def shard_of(name: str, count: int) -> int:
    """The shard with the highest weight for ``name`` (the lower index on a tie)."""
    return max(range(count), key=lambda i: (weight(name, i), -i))


def assign(spec: BuildSpec, count: int) -> list[list[str]]:
    """Every declared model in exactly one of ``count`` shards (list index = shard index), each
    shard's models in declaration order, every ensemble with its closure."""
    shards: list[list[str]] = [[] for _ in range(count)]
    where: dict[str, int] = {}
    for group in groups(spec):
        i = shard_of(min(group), count)
        for n in group:
            where[n] = i
    for n in spec.model_names:
        shards[where[n]].append(n)
    return shards
