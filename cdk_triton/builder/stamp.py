"""The no-op stamp: ``cdk-triton build`` answers "up to date" without loading the build when nothing it
depends on moved since a plain build found nothing to do (as make and ninja compare timestamps).

A plain ``cdk-triton build`` (only ``--config``, ``--out``, ``--artifact-location``, ``--jobs``,
``--no-progress``) that exported, reconfigured, packaged, uploaded and copied nothing writes
``<out>/.noop-stamp`` (a temp file renamed into place, while it holds the output directory's lock):
its options, environment and interpreter, the lines it printed, and the stat (size, mtime_ns,
ctime_ns, inode; or absence) of every input (models.yaml, every path the cache keys' source
fingerprints read, the folders imports were looked for in, the ``sys.path`` folders whose
``*.dist-info`` names give the tool versions, every file of the cdk_triton package, the NVIDIA driver
files) and of every file under ``<out>``. The next plain build checks it first, with the standard
library only (this module imports nothing else), and prints the recorded lines when every stat and
option is the same; any difference, a missing, unreadable or corrupt stamp (a sha256 over its body)
or another flag runs the full build. Every build removes the stamp when it takes the lock, so a killed
build never leaves one. The trust in outputs is the full build's no-op trust (size and mtime; add
``--verify`` to hash everything); an input modified within :data:`SETTLE_NS` of a build's start is
not stamped (a coarse file clock could hide a later edit of the same size).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import argparse

    from cdk_triton.builder.context import BuildContext

#: the stamp's file name under the output directory
STAMP_NAME = ".noop-stamp"
#: bump when what a stamp records changes
FORMAT = "1"
#: the first bytes of a stamp (then the body's sha256 and a newline, then the body)
MAGIC = b"cdk-triton no-op stamp "
#: flags a plain build leaves at these values (another value: no fast path and no stamp)
NOT_PLAIN = {
    "upload": False,
    "only": None,
    "force": False,
    "formats": None,
    "merge_manifest": None,
    "build_missing": False,
    "shard": None,
    "list_shards": None,
    "verify": False,
    "verbose": False,  # --verbose prints each warning's detail: a real build, not the stamp's lines
    "no_target_runtime": False,
}
#: environment variables a build reads (``builder.declarations.ARTIFACT_LOCATION_ENV``)
ENVIRONMENT = ("CDK_TRITON_ARTIFACT_LOCATION", "CDK_TRITON_TARGET_RUNTIME", "CDK_TRITON_RUNTIMES_DIR")
#: inputs modified less than this before the build started are not stamped (file clocks are coarse:
#: an edit of the same size made while the build read the file could keep its recorded mtime)
SETTLE_NS = 1_000_000_000
#: the build's lock: a file of the output directory a stamp leaves out (with the stamp and its temp file)
_LOCK = ".lock"

Stat = list[int] | None


def plain_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """What a stamp must match of a ``cdk-triton build`` command line (paths resolved as the build
    resolves them), or None when a flag outside the plain set is given."""
    if any(getattr(args, k, v) != v for k, v in NOT_PLAIN.items()):
        return None
    config = os.path.realpath(args.config)
    out = os.path.realpath(args.out if args.out is not None else os.path.join(os.path.dirname(config), "out"))
    return {
        "format": FORMAT,
        "config": config,
        "out": out,
        "artifact_location": args.artifact_location,
        "jobs": str(args.jobs),
        "progress": not args.no_progress,
        "environment": {k: os.environ.get(k) for k in ENVIRONMENT},
        "cwd": os.getcwd(),
        "python": [sys.executable, sys.version],
        "sys_path": list(sys.path),
    }


def stat_of(path: str) -> Stat:
    """(size, mtime_ns, ctime_ns, inode) of ``path``, None when it does not exist or cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def output_stats(out: str) -> dict[str, Stat]:
    """The stat of every file under ``out`` (but the stamp and the lock), by '/'-joined relative path,
    and every folder under it (``<path>/``: None; an empty folder the full build would prune counts)."""
    found: dict[str, Stat] = {}
    for dirpath, _, filenames in os.walk(out):
        rel = os.path.relpath(dirpath, out).replace(os.sep, "/")
        prefix = "" if rel == "." else rel + "/"
        if prefix:
            found[prefix] = None
        for f in filenames:
            if prefix or not (f == _LOCK or f.startswith(STAMP_NAME)):
                found[prefix + f] = stat_of(os.path.join(dirpath, f))
    return found


def path(out: str) -> str:
    return os.path.join(out, STAMP_NAME)


def read(out: str) -> dict[str, Any] | None:
    """The stamp of ``out`` when it is there and intact (its checksum matches), else None."""
    try:
        with open(path(out), "rb") as fh:
            data = fh.read()
        head, _, body = data.partition(b"\n")
        if not head.startswith(MAGIC) or hashlib.sha256(body).hexdigest().encode() != head[len(MAGIC) :]:
            return None
        stamp = json.loads(body)
    except (OSError, ValueError):
        return None
    return stamp if isinstance(stamp, dict) else None


def answer(options: dict[str, Any]) -> tuple[str, list[str]] | None:
    """The lines a full no-op build would print and its warnings, when the stamp of
    ``options["out"]`` matches every option and stat; None when the full build must run."""
    stamp = read(options["out"])
    if stamp is None or stamp.get("options") != options:
        return None
    inputs = stamp.get("inputs")
    if not isinstance(inputs, dict) or any(stat_of(p) != st for p, st in inputs.items()):
        return None
    if stamp.get("outputs") != output_stats(options["out"]):
        return None
    text, warnings = stamp.get("text"), stamp.get("warnings")
    if not isinstance(text, str) or not isinstance(warnings, list):
        return None
    return text, [str(w) for w in warnings]


def remove(out: os.PathLike[str] | str) -> None:
    """Drop the stamp (every build, when it takes the lock: only a finished no-op build writes one)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path(os.fspath(out)))


def inputs_of(ctx: BuildContext) -> list[str]:
    """Every input path the build's no-op answer depends on (see the module docstring)."""
    from cdk_triton.builder import reference

    assert ctx.config_path is not None
    paths = [
        ctx.config_path,
        *(p for n in ctx.names for p in reference.source_inputs(ctx.spec, ctx.spec.model(n))),
    ]
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = []
    for dirpath, dirnames, filenames in os.walk(package):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        code += [dirpath, *(os.path.join(dirpath, f) for f in filenames)]
    return sorted({*map(os.fspath, paths), *(p or "." for p in sys.path), *code, *_driver_files()})


def record(ctx: BuildContext, options: dict[str, Any], started_ns: int, text: str | None) -> bool:
    """Write the stamp after a plain build that did nothing (``text``: the lines it printed); returns
    whether it wrote one. Not stamped: a build that did work, an input modified since
    ``started_ns - SETTLE_NS``, and skipped models on a machine with an NVIDIA driver (whether a GPU
    is usable is not a file's stat), or a tool version read from an .egg-info's metadata."""
    from cdk_triton.builder.cache import from_dist_info

    r = ctx.result
    if text is None or r.exported or r.reconfigured or r.packaged or r.uploaded or r.copied:
        return False
    if not from_dist_info(ctx.tools):
        return False
    stats = {p: stat_of(p) for p in inputs_of(ctx)}
    if any(st is not None and st[1] >= started_ns - SETTLE_NS for st in stats.values()):
        return False
    if r.skipped_models and any(stats.get(p) is not None for p in _driver_files()):
        return False
    out = os.fspath(ctx.out)
    body = json.dumps(
        {
            "options": options,
            "text": text,
            "warnings": list(ctx.warnings),
            "inputs": stats,
            "outputs": output_stats(out),
        },
        sort_keys=True,
        separators=(",", ":"),
    ).encode()
    target = path(out)
    tmp = f"{target}.{os.urandom(8).hex()}.tmp"
    try:
        with open(tmp, "wb") as fh:
            fh.write(MAGIC + hashlib.sha256(body).hexdigest().encode() + b"\n" + body)
        os.replace(tmp, target)
    except OSError:
        _unlink(tmp)
        return False
    return True


def _driver_files() -> tuple[str, ...]:
    from cdk_triton.builder.export import tensorrt

    return tensorrt.DRIVER_FILES


def _unlink(p: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(p)
