"""The promotion pipeline's synth-step helper: verification specs of the approved manifest, and the tools.

Run in the synth step after ``cdk synth`` (the manifest is the approved version's, from the S3 source)::

    python -m cdk_triton.pipeline.promotion_tools --manifest approved/manifest.json \
        --requests "$PROMOTION_VERIFY" --approved approved --out cdk.out/promotion

``--requests`` is the JSON the pipeline construct wrote at synth: ``{stage: [[endpoint, endpoint_name], ...]}``.
It writes ``<out>/<stage>-<i>.json`` (the spec ``lambda/verify/index.py --spec`` reads), copies
``lambda/verify/index.py`` as ``verify.py`` and ``lambda/promotion/index.py`` as ``promotion.py`` and the
approved folder, so later steps need only the synth output. Reads files only, never the registry.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from cdk_triton.config.manifest import read_manifest
from cdk_triton.pipeline.verify_checks import verify_checks

TOOLS = {"verify.py": "lambda/verify/index.py", "promotion.py": "lambda/promotion/index.py"}


def check_file(stage: str, index: int) -> str:
    """The spec's file name under the output folder (one author for the construct and this script)."""
    return f"{stage}-{index}.json"


def write_checks(
    manifest_path: Path, requests: dict[str, list[list[str]]], out: Path, *, root: Path, approved: Path | None
) -> list[Path]:
    """Write every stage's specs and the tools under ``out``; return the spec files."""
    manifest = read_manifest(manifest_path)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for stage, pairs in sorted(requests.items()):
        for i, (endpoint, endpoint_name) in enumerate(pairs):
            spec = verify_checks(manifest, endpoint, endpoint_name=endpoint_name)
            path = out / check_file(stage, i)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(spec, indent=2, sort_keys=True) + "\n", encoding="utf-8")
            tmp.replace(path)
            written.append(path)
    for name, source in TOOLS.items():
        shutil.copyfile(root / source, out / name)
    if approved is not None:
        shutil.copytree(approved, out / "approved", dirs_exist_ok=True)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="promotion_tools", description=__doc__.split("\n")[0])
    parser.add_argument("--manifest", required=True, type=Path)
    parser.add_argument("--requests", required=True)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--approved", type=Path)
    parser.add_argument("--root", type=Path, default=Path.cwd())
    args = parser.parse_args(argv)
    written = write_checks(
        args.manifest, json.loads(args.requests), args.out, root=args.root, approved=args.approved
    )
    print(f"{len(written)} verification specs in {args.out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
