"""The promotion pipeline's synth-step helper: regional manifests, verification checks, copy plans, tools.

Run in the synth step; before ``cdk synth`` the region-specific manifests of the stages in another region::

    python -m cdk_triton.pipeline.promotion_tools regional --manifest approved/manifest.json \
        --regional "$PROMOTION_REGIONAL" --out approved/regional

and after it (the manifest is the approved version's, from the S3 source)::

    python -m cdk_triton.pipeline.promotion_tools checks --manifest approved/manifest.json \
        --requests "$PROMOTION_VERIFY" --regional-dir approved/regional --approved approved --out cdk.out/promotion

A region-specific manifest is the approved one with every ``s3://`` location under its artifact location
moved to the stage's own bucket in the stage's region (SageMaker reads model data only in the model's
region); the copy plan ``replicate-<stage>.json`` lists the ``[source, target]`` pairs the stage's
Replicate step copies before the deploy.

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
from typing import Any

from cdk_triton.config.manifest import ArtifactLocation, read_manifest
from cdk_triton.pipeline.verify_checks import verify_checks

TOOLS = {"verify.py": "lambda/verify/index.py", "promotion.py": "lambda/promotion/index.py"}


def check_file(stage: str, index: int) -> str:
    """The spec's file name under the output folder (one author for the construct and this script)."""
    return f"{stage}-{index}.json"


def regional_file(stage: str, *, live: bool = False) -> str:
    """The region-specific manifest's file name (one author for the construct and this script); ``live``:
    the one of the manifest live in prod (its objects are in the regional bucket since its promotion)."""
    return f"{stage}.live.json" if live else f"{stage}.json"


def _uris(value: Any, out: set[str], prefix: str) -> None:
    if isinstance(value, str):
        if value.startswith(prefix):
            out.add(value)
    elif isinstance(value, dict):
        for v in value.values():
            _uris(v, out, prefix)
    elif isinstance(value, list):
        for v in value:
            _uris(v, out, prefix)


def _moved(value: Any, source: str, target: str) -> Any:
    if isinstance(value, str):
        return target + value[len(source) :] if value.startswith(source) else value
    if isinstance(value, dict):
        return {k: _moved(v, source, target) for k, v in value.items()}
    if isinstance(value, list):
        return [_moved(v, source, target) for v in value]
    return value


def relocate(data: dict[str, Any], target: str, *, kms_key_arn: str | None = None) -> dict[str, Any]:
    """The manifest ``data`` with every location under its artifact location moved to ``target``."""
    source = ArtifactLocation.from_uri(_location_uri(data)).uri
    moved = _moved(data, source, target)
    loc = ArtifactLocation.from_uri(target)
    moved["artifact_location"] = {"bucket": loc.bucket, "prefix": loc.prefix}
    if kms_key_arn:
        moved["artifact_location"]["kms_key_arn"] = kms_key_arn
    return dict(moved)


def copy_pairs(data: dict[str, Any], target: str) -> list[list[str]]:
    """The ``[source, target]`` pairs to copy: every location the manifest records under its artifact
    location (a prefix ending ``/`` copies everything under it)."""
    source = ArtifactLocation.from_uri(_location_uri(data)).uri
    found: set[str] = set()
    _uris({k: v for k, v in data.items() if k != "artifact_location"}, found, source)
    return [[uri, target + uri[len(source) :]] for uri in sorted(found)]


def _location_uri(data: dict[str, Any]) -> str:
    loc = data["artifact_location"]
    return f"s3://{loc['bucket']}/{loc.get('prefix', '')}"


def write_regional(manifest_path: Path, regional: dict[str, dict[str, str]], out: Path) -> list[Path]:
    """Write ``<out>/<stage>.json`` for each stage of ``regional`` (``{stage: {"location", "kms_key_arn"}}``)."""
    sources = {False: manifest_path, True: manifest_path.parent / "live-manifest.json"}
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for stage, where in sorted(regional.items()):
        for live, source in sources.items():
            if not source.is_file():
                continue
            data = json.loads(source.read_text("utf-8"))
            path = out / regional_file(stage, live=live)
            _write_json(path, relocate(data, where["location"], kms_key_arn=where.get("kms_key_arn")))
            written.append(path)
    return written


def _write_json(path: Path, value: Any) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(path)


def write_checks(
    manifest_path: Path,
    requests: dict[str, list[list[str]]],
    out: Path,
    *,
    root: Path,
    approved: Path | None,
    regional_dir: Path | None = None,
) -> list[Path]:
    """Write every stage's checks, the copy plans of the regional stages and the tools under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for stage, pairs in sorted(requests.items()):
        own = regional_dir / regional_file(stage) if regional_dir else None
        stage_manifest = own if own is not None and own.is_file() else manifest_path
        if own is not None and own.is_file():
            target = _location_uri(json.loads(own.read_text("utf-8")))
            plan = copy_pairs(json.loads(manifest_path.read_text("utf-8")), target)
            _write_json(out / f"replicate-{stage}.json", plan)
        manifest = read_manifest(stage_manifest)
        for i, (endpoint, endpoint_name) in enumerate(pairs):
            spec = verify_checks(manifest, endpoint, endpoint_name=endpoint_name)
            path = out / check_file(stage, i)
            _write_json(path, spec)
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
