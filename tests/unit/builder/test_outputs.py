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


def test_an_onnx_entry_records_the_opset_and_ir_version_the_export_read() -> None:
    from cdk_triton.builder.context import Exported, ModelRecord, SampleRecord
    from cdk_triton.builder.outputs import model_entry

    made = Exported(
        config={},
        config_sha256="0" * 64,
        io_names={"inputs": {}, "outputs": {}},
        sample=SampleRecord(request={}, response={}, atol=0.0, rtol=0.0),
        onnx={"opset": 17, "ir_version": 8},
    )

    def record(fmt: str) -> ModelRecord:
        return ModelRecord(
            name="m", format=fmt, source_sha256="k", tool_versions={}, platform=None, backend=None,
            files={}, exported=made,
        )  # fmt: skip

    entry = model_entry(record("onnx"), None)
    assert (entry.onnx_opset, entry.onnx_ir_version) == (17, 8)
    trt = model_entry(record("tensorrt"), None)  # the ONNX feeding a plan is not what Triton loads
    assert (trt.onnx_opset, trt.onnx_ir_version) == (None, None)


def test_a_noop_build_keeps_the_manifest_file_and_reads_back_the_same_manifest(tmp_path: Path) -> None:
    import gc
    import json
    from dataclasses import asdict

    from cdk_triton.config.manifest import read_manifest

    out = tmp_path / "out"
    decl = write_decl(tmp_path, python_model())
    first = run_build(decl, out_dir=out, progress=False)
    path = first.manifest_path
    before = path.stat()
    again = run_build(decl, out_dir=out, progress=False)
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # not rewritten
    assert again.manifest == read_manifest(path) == first.manifest  # parsed once, as read back
    assert gc.isenabled()  # the bookkeeping phases pause the collector and give it back

    def strip(v):  # type: ignore[no-untyped-def]  # the old to_dict: asdict, then None dropped
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items() if x is not None}
        return [strip(x) for x in v] if isinstance(v, list) else v

    old = asdict(again.manifest)
    old.pop("path")
    assert old.pop("library_acknowledgments") is True  # written only when a declaration refuses them
    assert again.manifest.to_dict() == strip(old)
    assert path.read_text() == json.dumps(strip(old), indent=2, sort_keys=True) + "\n"
    path.write_text(path.read_text().replace("\n", "\r\n"))  # other bytes, the same JSON: rewritten
    run_build(decl, out_dir=out, progress=False)
    assert path.read_text() == json.dumps(strip(old), indent=2, sort_keys=True) + "\n"
