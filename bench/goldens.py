"""Goldens for a refactor: every synthesized template and the example build's bytes, recorded and compared.

``python -m bench.goldens record DIR`` writes, under DIR:

* ``tests/<test id>/<n>-<stack>.json``: every template the construct, pipeline and promotion tests
  synthesize (through ``assertions.Template.from_stack`` or ``App.synth``), logical ids included;
* ``apps/<app>/<stack>.json``: every template of the example apps (app.py, pipeline_app.py,
  promotion_app.py) synthesized from the example build's manifest;
* ``build.json``: the sha256 of every file the example build writes (``cdk-triton build``).

Asset hashes (64 hex digits) and the build's own temporary path are masked, so two recordings of the same
code compare equal. ``python -m bench.goldens compare A B`` prints each difference and exits 1 on any.
A refactor records before, records after, and compares: identical means nothing changed for users. A change
made on purpose states what it changes (``--expect-key InferenceAmiVersion``, ``--expect-mask REGEX``): a file
that differs only there is counted apart, and anything else is still a difference.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: The env var the tests' hook reads: where to dump the templates they synthesize.
DUMP_ENV = "CDK_TRITON_GOLDENS_DIR"
#: What the tests' part covers: every test that synthesizes a template.
TEST_PATHS = ("tests/unit/constructs", "tests/unit/pipeline", "tests/unit/test_bad_inputs.py")
APPS = ("app.py", "pipeline_app.py", "promotion_app.py")
_ASSET_HASH = re.compile(r"[0-9a-f]{64}")
#: Files of a build that record when or where it ran rather than what it made.
_BUILD_VOLATILE = re.compile(r"(^|/)(\.noop-stamp|build\.log|logs/.*|.*\.lock)$")


def mask(text: str, *extra: str) -> str:
    """Asset hashes and the given paths replaced by placeholders."""
    for path in extra:
        text = text.replace(path, "<TMP>")
    return _ASSET_HASH.sub("<HASH>", text)


def canonical(template: Any, *extra: str) -> str:
    return mask(json.dumps(template, indent=1, sort_keys=True), *extra) + "\n"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_")[:150] or "_"


def _record_tests(out: Path) -> None:
    env = {**os.environ, DUMP_ENV: str(out / "tests")}
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-m",
        "not slow",
        *TEST_PATHS,
    ]
    # every test runs (no -x: a recording is never silently partial); a failing one fails the recording
    subprocess.run(cmd, cwd=ROOT, env=env, check=True)


def _build_example(tmp: Path) -> Path:
    out = tmp / "out"
    cmd = [
        sys.executable,
        "-m",
        "cdk_triton.cli",
        "build",
        "--config",
        "build/models.yaml",
        "--out",
        str(out),
        "--no-progress",
    ]
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return out


def _record_build(build_out: Path, out: Path) -> None:
    files = {}
    for p in sorted(build_out.rglob("*")):
        rel = p.relative_to(build_out).as_posix()
        if p.is_file() and not _BUILD_VOLATILE.search(rel):
            data = p.read_bytes()
            if p.suffix in (".json", ".pbtxt", ".txt", ".yaml"):
                data = mask(data.decode(), str(build_out)).encode()
            files[rel] = hashlib.sha256(data).hexdigest()
    (out / "build.json").write_text(json.dumps(files, indent=1, sort_keys=True) + "\n")


def _record_apps(manifest: Path, out: Path, tmp: Path) -> None:
    for app in APPS:
        cdk_out = tmp / f"cdk.out.{Path(app).stem}"
        env = {
            **os.environ,
            "CDK_OUTDIR": str(cdk_out),
            "CDK_CONTEXT_JSON": json.dumps({"manifest": str(manifest)}),
        }
        subprocess.run([sys.executable, app], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
        dest = out / "apps" / Path(app).stem
        dest.mkdir(parents=True, exist_ok=True)
        for tpl in sorted(cdk_out.rglob("*.template.json")):
            rel = _safe(tpl.relative_to(cdk_out).as_posix())
            (dest / rel).write_text(canonical(json.loads(tpl.read_text()), str(manifest.parent), str(tmp)))


def record(out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="cdk-triton-goldens-") as t:
        tmp = Path(t)
        build_out = _build_example(tmp)
        _record_build(build_out, out)
        _record_apps(build_out / "manifest.json", out, tmp)
    _record_tests(out)


def _files(root: Path) -> dict[str, Path]:
    return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*")) if p.is_file()}


def _without(value: Any, keys: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, keys) for v in value]
    return value


def _expected_only(pa: Path, pb: Path, keys: frozenset[str], masks: tuple[re.Pattern[str], ...]) -> bool:
    """Whether two JSON files are equal once ``keys`` are dropped (at any depth) and ``masks`` replaced."""
    try:
        ja, jb = json.loads(pa.read_text()), json.loads(pb.read_text())
    except ValueError:
        return False
    ta, tb = (json.dumps(_without(j, keys), sort_keys=True) for j in (ja, jb))
    for pattern in masks:
        ta, tb = pattern.sub("<MASKED>", ta), pattern.sub("<MASKED>", tb)
    return ta == tb


def compare(
    a: Path, b: Path, *, expect_keys: tuple[str, ...] = (), expect_masks: tuple[str, ...] = ()
) -> list[str]:
    """Every difference between two recordings, one line each (empty: identical).

    A change made on purpose is stated, not eyeballed: ``expect_keys`` (JSON keys dropped at any depth, e.g.
    ``InferenceAmiVersion``) and ``expect_masks`` (regular expressions replaced, e.g. a logical id whose hash
    covers a changed resource) make a file that differs only there ``differs as expected: ...``, which is
    not a difference. Files only in one recording are always differences.
    """
    fa, fb = _files(a), _files(b)
    keys, masks = frozenset(expect_keys), tuple(re.compile(m) for m in expect_masks)
    found = [f"only in {a}: {k}" for k in sorted(fa.keys() - fb.keys())]
    found += [f"only in {b}: {k}" for k in sorted(fb.keys() - fa.keys())]
    for k in sorted(fa.keys() & fb.keys()):
        if fa[k].read_bytes() == fb[k].read_bytes():
            continue
        if (keys or masks) and _expected_only(fa[k], fb[k], keys, masks):
            continue
        found.append(f"differs: {k}")
    return found


def expected_differences(
    a: Path, b: Path, *, expect_keys: tuple[str, ...], expect_masks: tuple[str, ...]
) -> list[str]:
    """The files that differ only by what ``compare``'s ``expect_*`` state."""
    fa, fb = _files(a), _files(b)
    keys, masks = frozenset(expect_keys), tuple(re.compile(m) for m in expect_masks)
    return [
        k
        for k in sorted(fa.keys() & fb.keys())
        if fa[k].read_bytes() != fb[k].read_bytes() and _expected_only(fa[k], fb[k], keys, masks)
    ]


USAGE = (
    "usage: python -m bench.goldens record DIR | compare DIR_A DIR_B "
    "[--expect-key KEY]... [--expect-mask REGEX]..."
)


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "record":
        record(Path(argv[1]).resolve())
        n = sum(1 for _ in Path(argv[1]).rglob("*.json"))
        print(f"recorded {n} files under {argv[1]}")
        return 0
    if len(argv) >= 3 and argv[0] == "compare" and len(argv) % 2 == 1:
        opts = list(zip(argv[3::2], argv[4::2], strict=True))
        if any(flag not in ("--expect-key", "--expect-mask") for flag, _ in opts):
            print(USAGE, file=sys.stderr)
            return 2
        keys = tuple(v for flag, v in opts if flag == "--expect-key")
        masks = tuple(v for flag, v in opts if flag == "--expect-mask")
        a, b = Path(argv[1]), Path(argv[2])
        found = compare(a, b, expect_keys=keys, expect_masks=masks)
        for line in found:
            print(line)
        expected = expected_differences(a, b, expect_keys=keys, expect_masks=masks) if opts else []
        total = len(_files(a))
        print(
            f"{total} files compared, {len(found)} differences"
            + (f", {len(expected)} differing only as expected" if opts else "")
        )
        return 1 if found else 0
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
