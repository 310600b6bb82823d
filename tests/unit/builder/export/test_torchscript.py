"""TorchScript export: deterministic bytes, no absolute paths."""

from __future__ import annotations

from pathlib import Path

from tests.unit.builder.helpers import spec_of, tiny


def test_torchscript_export_is_deterministic_in_process_and_path_free(tmp_path: Path) -> None:
    """Two traces (and two scripts) in one process give the same bytes; no debug info (absolute
    paths of the trace's Python stack) is saved, and the file still loads and runs."""
    import zipfile

    import torch

    from cdk_triton.builder.export import torchscript as ts_export
    from cdk_triton.builder.reference import build_eager
    from cdk_triton.builder.samples import sample_inputs

    spec = spec_of(
        tmp_path, tiny("t", "torchscript") + tiny("s", "torchscript") + "    torchscript_mode: script\n"
    )
    for name in ("t", "s"):
        m = spec.model(name)
        sample = sample_inputs(m)
        files = []
        for i in range(2):
            (tmp_path / name / str(i)).mkdir(parents=True)
            f = tmp_path / name / str(i) / "model.pt"
            ts_export.export(build_eager(spec, m), m, sample, f)
            files.append(f)
        assert files[0].read_bytes() == files[1].read_bytes(), name
        names = zipfile.ZipFile(files[0]).namelist()
        assert not [n for n in names if n.endswith(".debug_pkl")]
        assert str(tmp_path).encode() not in files[0].read_bytes()
        out = ts_export.load_runner(files[0], m)(sample)["y"]
        assert out.shape == (1, 3) and torch.jit.load(str(files[0])) is not None
