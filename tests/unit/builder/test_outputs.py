"""The output directory: manifest merge under --only, pruning of what nothing references."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from cdk_triton.builder import run_build
from cdk_triton.builder.outputs import merge_previous, prune_outputs
from tests.unit.builder.helpers import python_model, write_decl


def test_merge_keeps_other_entries_and_prune_drops_strays(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run_build(write_decl(tmp_path, python_model()), out_dir=out, progress=False)
    manifest = result.manifest
    assert merge_previous(manifest, tmp_path / "missing.json") is manifest
    only = replace(manifest, models={}, uploaded=True)
    merged = merge_previous(only, result.manifest_path)
    assert set(merged.models) == {"pre"} and merged.uploaded is manifest.uploaded
    (out / "samples" / "gone.request.json").write_text("{}")
    (out / "sme" / "gone").mkdir(parents=True)
    prune_outputs(out, manifest)
    assert not (out / "samples" / "gone.request.json").exists() and not (out / "sme" / "gone").exists()
    assert (out / "samples" / "pre.request.json").is_file()
