"""The release-runtime check's rules, written once for the build (which runs it), the manifest (which
records it), synth (which shows it) and ``serve --runtime target`` (which serves in its environment).

The build exports with the torch / onnxruntime installed beside it and checks parity there; the endpoint
runs the release's own libraries (Triton 24.09: libtorch 2.5.0, ONNX Runtime 1.19.2, from the release
table ``data/triton-releases.json``). The check loads every TorchScript / ONNX artifact in an environment
holding exactly the release's versions (pip, from the package index) and runs the samples the build
wrote. This module says which packages that environment pins, where it is cached, how its completion
marker reads and what a model's record in the manifest holds. Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cdk_triton.config import formats, tables
from cdk_triton.config.parse import Fail, known_keys, optional, required

#: the release-table fact of a format (``Format.release_fact``) -> the PyPI distribution of that runtime
RUNTIME_PACKAGES: dict[str, str] = {
    "libtorch": "torch",
    "onnxruntime": "onnxruntime",
    "tensorrt": "tensorrt-cu12",
}

#: the module each runtime is imported as (the environment is verified by importing it)
RUNTIME_MODULES: dict[str, str] = {"libtorch": "torch", "onnxruntime": "onnxruntime", "tensorrt": "tensorrt"}

#: the runtimes a CPU build host can run (a TensorRT plan needs the GPU job)
CPU_RUNTIMES = frozenset({"libtorch", "onnxruntime"})

#: numpy of every environment: torch 2.5 and the Triton python stub need numpy 1
NUMPY = "numpy<2"

#: what the check found for one model (the manifest's ``target_runtime.status``)
PASSED, FAILED, SKIPPED, UNAVAILABLE = "passed", "failed", "skipped", "unavailable"
STATUSES = (PASSED, FAILED, SKIPPED, UNAVAILABLE)

#: the environment variable naming the environments' root (default: the user's cache)
ROOT_VARIABLE = "CDK_TRITON_RUNTIMES_DIR"
#: the environment variable that turns the check off (``off``, ``0``, ``false``, ``no``): what
#: ``--no-target-runtime`` does for one build; the test suite sets it
SWITCH_VARIABLE = "CDK_TRITON_TARGET_RUNTIME"
#: the variable naming the ``bin/`` of the environment whose ``python3`` the local server's python stubs run
#: (``cdk-triton serve --runtime target``); unset: this interpreter's (the stand-ins' default)
STUB_PYTHON_VARIABLE = "CDK_TRITON_STUB_PYTHON_BIN"
#: the ``serve --runtime`` choices: the CPU stand-ins with the build's libraries, the release's own
#: libraries, the real Triton container
SERVE_RUNTIMES = ("stand-in", "target", "container")
#: the completion marker inside an environment: the hash of its pinned requirements
MARKER = "cdk-triton-runtime.json"


@dataclass(frozen=True, kw_only=True, slots=True)
class TargetRuntimeCheck:
    """One model's artifact in the release's own runtime (the manifest's ``models.<name>.target_runtime``).

    Attributes:
        runtime: the release-table fact (``libtorch``, ``onnxruntime``, ``tensorrt``).
        version: the runtime's version in the release table (None: the table has none).
        confirmed: whether the release table marks that version confirmed.
        status: ``passed`` (loaded and matched the expected outputs), ``failed`` (the build refused it),
            ``skipped`` (``--no-target-runtime``, or nothing here can run it), ``unavailable`` (the
            environment could not be created: no package index, no wheel for this Python).
        max_abs_diff: the largest absolute difference from the expected outputs (passed / failed).
        reason: why it was skipped, unavailable or failed.
        environment: the environment's directory name (``<release>-<hash12>``) it ran in.
    """

    runtime: str
    version: str | None
    confirmed: bool
    status: str
    max_abs_diff: float | None = None
    reason: str | None = None
    environment: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "runtime": self.runtime,
            "version": self.version,
            "confirmed": self.confirmed,
            "status": self.status,
            "max_abs_diff": self.max_abs_diff,
            "reason": self.reason,
            "environment": self.environment,
        }
        return {k: v for k, v in out.items() if v is not None}


_KEYS = {"runtime", "version", "confirmed", "status", "max_abs_diff", "reason", "environment"}


def check_from_dict(d: Any, where: str, fail: Fail) -> TargetRuntimeCheck | None:
    """Read a manifest's ``target_runtime`` object (None when absent: a manifest written before it)."""
    if d is None:
        return None
    if not isinstance(d, dict):
        raise fail(where, d, "is not an object", "object")
    known_keys(d, _KEYS, where, fail, what="a target_runtime field")
    status = required(d, "status", str, where, fail)
    if status not in STATUSES:
        raise fail(f"{where}.status", status, "is not a target runtime status", ", ".join(STATUSES))
    diff = optional(d, "max_abs_diff", (int, float), where, fail)
    return TargetRuntimeCheck(
        runtime=required(d, "runtime", str, where, fail),
        version=optional(d, "version", str, where, fail),
        confirmed=bool(optional(d, "confirmed", bool, where, fail)),
        status=status,
        max_abs_diff=float(diff) if diff is not None else None,
        reason=optional(d, "reason", str, where, fail),
        environment=optional(d, "environment", str, where, fail),
    )


def runtime_version(triton_version: str, runtime: str) -> tuple[str | None, bool]:
    """(version, confirmed) of ``runtime`` in the release table's row of ``triton_version``."""
    fact = getattr(tables.release(triton_version), runtime)
    return fact.value, bool(fact.confirmed)


def requirements(triton_version: str, runtimes: Iterable[str]) -> tuple[str, ...]:
    """The pinned requirements of the environment that runs ``runtimes`` of ``triton_version``:
    ``torch==2.5.0``, ``onnxruntime==1.19.2`` ... and :data:`NUMPY`, sorted (runtimes without a version in
    the table are left out: the caller reports them skipped)."""
    wanted = set(runtimes)
    plan_runtimes = {f.release_fact for f in formats.FORMATS.values() if f.builds_plans}
    if wanted & plan_runtimes:  # the probe holds a plan's buffers in CUDA tensors of the release's own torch
        wanted |= {"libtorch"}
    out = {NUMPY}
    for r in wanted:
        version, _ = runtime_version(triton_version, r)
        if version:
            out.add(f"{RUNTIME_PACKAGES[r]}=={version}")
    return tuple(sorted(out))


def environment_name(triton_version: str, reqs: Iterable[str], python: str) -> str:
    """``<release>-<hash12>``: the directory of the environment of ``reqs`` for Python ``python``
    (``3.11``): the hash covers both, so a change of either is another environment."""
    return f"{triton_version}-{requirements_hash(reqs, python)[:12]}"


def requirements_hash(reqs: Iterable[str], python: str) -> str:
    """sha256 of the sorted requirements and the Python minor version (the completion marker's)."""
    text = json.dumps({"requirements": sorted(reqs), "python": python}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def root(environ: Mapping[str, str] | None = None) -> Path:
    """Where the environments live, shared by every build and project of the user: ``$CDK_TRITON_RUNTIMES_DIR``,
    else ``$XDG_CACHE_HOME/cdk-triton/runtimes``, else ``~/.cache/cdk-triton/runtimes``."""
    env = os.environ if environ is None else environ
    if env.get(ROOT_VARIABLE):
        return Path(env[ROOT_VARIABLE]).expanduser()
    base = Path(env["XDG_CACHE_HOME"]).expanduser() if env.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return base / "cdk-triton" / "runtimes"


def switched_off(environ: Mapping[str, str] | None = None) -> bool:
    """Whether :data:`SWITCH_VARIABLE` turns the check off."""
    env = os.environ if environ is None else environ
    return env.get(SWITCH_VARIABLE, "").strip().lower() in ("off", "0", "false", "no")


def may_not_load(
    runtime: str, version: str | None, confirmed: bool, *, saved_by: str, triton_version: str
) -> str:
    """The artifact-may-not-load text (what the build warned on every TorchScript model before the check)."""
    note = "" if confirmed else " (release table entry unconfirmed)"
    lib = "libtorch" if runtime == "libtorch" else "ONNX Runtime" if runtime == "onnxruntime" else runtime
    made = f"TorchScript saved by torch {saved_by}" if runtime == "libtorch" else "an artifact built here"
    return f"{made} may not load in Triton {triton_version}'s {lib} {version or '(version unknown)'}{note}"


def display(
    name: str, check: TargetRuntimeCheck, *, triton_version: str, tool_versions: Mapping[str, str]
) -> tuple[str, str] | None:
    """What build and synth show for one model's record: ``("info", text)`` when it passed (or an ONNX /
    TensorRT model was skipped: the build holds those to the release's limits), ``("warning", text)`` when a
    TorchScript model was skipped or any model's check was unavailable (the may-not-load text and the
    reason: never a silent pass), None when it failed (the build refused it) or nothing is worth saying."""
    lib = f"{check.runtime} {check.version or '?'}"
    if check.status == PASSED:
        diff = f", max |diff| {check.max_abs_diff:.2e}" if check.max_abs_diff is not None else ""
        unconfirmed = "" if check.confirmed else "; release table entry unconfirmed"
        return (
            "info",
            f"model '{name}' loaded and matched its sample in Triton {triton_version}'s {lib}{diff} "
            f"(release-runtime check at build{unconfirmed})",
        )
    if check.status not in (SKIPPED, UNAVAILABLE):
        return None
    if check.status == SKIPPED and check.runtime != "libtorch":
        return ("info", f"model '{name}': not checked in Triton {triton_version}'s {lib}: {check.reason}")
    saved_by = tool_versions.get("torch", "?")
    if (
        check.runtime == "libtorch"
        and check.version
        and saved_by != "?"
        and not newer(saved_by, check.version)
    ):
        return None  # saved by the release's torch or an older one: nothing to warn about
    text = may_not_load(
        check.runtime, check.version, check.confirmed, saved_by=saved_by, triton_version=triton_version
    )
    return (
        "warning",
        f"model '{name}': {text}: the release-runtime check was {check.status} ({check.reason or 'no reason'}); "
        "run `cdk-triton build` with the check on (the default) where the package index is reachable, or "
        "prefer format onnx",
    )


def newer(a: str, b: str) -> bool:
    """Whether version ``a`` has a newer minor than ``b`` (``2.13.0+cpu`` vs ``2.5.0``)."""
    return tables.is_newer(tables.minor(a) or "", tables.minor(b) or "")
