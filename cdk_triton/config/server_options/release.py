"""What the ``serve`` script of one Triton release makes of the ``SAGEMAKER_*`` variables.

The script changed between releases (``data/sagemaker-serve.json`` records each release's script):
gRPC, metrics, their ports, the additional arguments and the ping-mode override are read from 23.07,
model namespacing from 23.04, the inference type from 25.03. ``SAGEMAKER_TRITON_PING_MODE`` is
assigned by the script but never exported, so ``SAGEMAKER_TRITON_OVERRIDE_PING_MODE`` reaches
``tritonserver`` only when ``SAGEMAKER_TRITON_PING_MODE`` is itself in the container environment;
before 23.07 ``/ping`` is hard-coded to liveness. ``effective_environment`` turns a container
environment into the one whose settings reach ``tritonserver`` on that release, and names each
variable that has no effect there. Standard library only.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cdk_triton.config import tables

MULTI_MODEL = "SAGEMAKER_MULTI_MODEL"
OVERRIDE_PING_MODE = "SAGEMAKER_TRITON_OVERRIDE_PING_MODE"
PING_MODE = "SAGEMAKER_TRITON_PING_MODE"
NAMESPACING = "SAGEMAKER_TRITON_DISABLE_MODEL_NAMESPACING"

_HARD_CODED = re.compile(r"'(\w+)' hard-coded")


@dataclass(frozen=True, kw_only=True, slots=True)
class NoEffect:
    """A container variable the ``serve`` script of ``triton_version`` does not pass on to ``tritonserver``.

    Attributes:
        variable: the ``SAGEMAKER_*`` name.
        value: the value it was given.
        triton_version: the release whose script ignores it.
        reason: why it has no effect there (from ``data/sagemaker-serve.json``).
        read_from: the oldest recorded release whose script reads it, when one does.
        fix: how to give it an effect, when not by targeting ``read_from``.
    """

    variable: str
    value: str
    triton_version: str
    reason: str
    read_from: str | None = None
    fix: str | None = None

    @property
    def message(self) -> str:
        """One line for a warning or a log."""
        fix = self.fix or (
            f"remove it, or target Triton {self.read_from} or newer"
            if self.read_from
            else "remove it (it changes nothing on this release)"
        )
        return (
            f"{self.variable}={self.value!r} has no effect on sagemaker-tritonserver:"
            f"{self.triton_version}-py3: {self.reason.rstrip('.')}; {fix}"
        )


def _reads(rule: dict[str, Any] | None) -> bool:
    """Whether a variable's rule passes it on: as a flag, or as a variable the binary reads."""
    return rule is not None and (rule.get("flag") is not None or rule.get("exported") not in (False, None))


@functools.cache
def _recorded() -> dict[str, dict[str, Any]]:
    """Each release of the tables with its serve script record, oldest first."""
    out = {}
    for version in tables.release_versions():
        data = tables.serve_script_data(version)
        if data is not None:
            out[version] = data
    return out


def first_release_reading(variable: str) -> str | None:
    """The oldest recorded release whose serve script passes ``variable`` on (None: none does)."""
    for version, data in _recorded().items():
        if _reads(data.get("variables", {}).get(variable)):
            return version
    return None


def known_variables() -> set[str]:
    """Every variable some recorded release's serve script mentions."""
    return {name for data in _recorded().values() for name in data.get("variables", {})}


def effective_environment(
    env: Mapping[str, str], triton_version: str | None
) -> tuple[dict[str, str], list[NoEffect]]:
    """``env`` as the serve script of ``triton_version`` passes it on, and the variables that have no effect.

    Variables no recorded script mentions (CloudWatch publishing, which AWS adds, or any other) are
    kept as they are. Without a record for ``triton_version`` (None, a custom image, an unknown
    release) ``env`` is returned unchanged. The ping mode is rendered as
    ``SAGEMAKER_TRITON_OVERRIDE_PING_MODE`` (what ``ServerOptions.ping_mode`` reads) when it reaches
    the binary, and ``SAGEMAKER_TRITON_DISABLE_MODEL_NAMESPACING=false`` stands for a release without
    namespacing.
    """
    data = tables.serve_script_data(triton_version) if triton_version else None
    if data is None or triton_version is None:
        return dict(env), []
    rules: dict[str, Any] = data["variables"]
    known = known_variables()
    out: dict[str, str] = {}
    notes: list[NoEffect] = []

    def no_effect(name: str, reason: str, fix: str | None = None) -> None:
        first = first_release_reading(name)
        notes.append(
            NoEffect(
                variable=name,
                value=env[name],
                triton_version=triton_version,
                reason=reason,
                read_from=first if first and tables.is_newer(first, triton_version) else None,
                fix=fix,
            )
        )

    for name, value in env.items():
        if name in (OVERRIDE_PING_MODE, PING_MODE):
            continue
        if name not in known or _reads(rules.get(name)):
            out[name] = value
        elif name in rules:
            no_effect(name, rules[name].get("notes") or "the serve script does not pass it to tritonserver")
        else:
            no_effect(name, f"the serve script of Triton {triton_version} does not read it")
    _ping_mode(env, rules, out, no_effect)
    if NAMESPACING not in rules:
        out[NAMESPACING] = "false"  # no --model-namespacing flag: the binary's default (off)
    return out, notes


def _ping_mode(
    env: Mapping[str, str], rules: dict[str, Any], out: dict[str, str], no_effect: Callable[..., None]
) -> None:
    """What ``/ping`` answers on: hard-coded before 23.07; from 23.07 the override reaches the binary
    only through an inherited SAGEMAKER_TRITON_PING_MODE (the script assigns it, never exports it)."""
    hard = _HARD_CODED.search(str((rules.get(PING_MODE) or {}).get("default", "")))
    if hard:
        for name in (OVERRIDE_PING_MODE, PING_MODE):
            if name in env:
                no_effect(name, f"/ping is hard-coded to '{hard.group(1)}' in this release's tritonserver")
        out[OVERRIDE_PING_MODE] = hard.group(1)
    elif PING_MODE in env:
        mme = env.get(MULTI_MODEL) == "true"
        out[OVERRIDE_PING_MODE] = env.get(OVERRIDE_PING_MODE) or ("live" if mme else "ready")
    elif OVERRIDE_PING_MODE in env:
        no_effect(
            OVERRIDE_PING_MODE,
            "the script copies it into SAGEMAKER_TRITON_PING_MODE, which it never exports, so tritonserver "
            "keeps its default 'ready'",
            "also set SAGEMAKER_TRITON_PING_MODE (any value) in the container environment for the override "
            "to reach tritonserver, or remove it",
        )
