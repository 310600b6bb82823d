"""The cache key covers the factory's local imports; stale cache entries are pruned."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np

from cdk_triton.builder import run_build
from cdk_triton.builder.declarations import load_declaration
from cdk_triton.builder.reference import factory_sources
from tests.unit.builder.helpers import tiny, write_decl

FACTORY = """
import torch
from torch import nn

import netparts.layers


def net() -> nn.Module:
    from netparts import scale  # imports inside functions count too

    return nn.Sequential(netparts.layers.linear(), scale.Scale()).eval()
"""
LAYERS = """
from torch import nn

from .defaults import FEATURES


def linear() -> nn.Module:
    return nn.Linear(FEATURES, 3)
"""


def _project(tmp: Path) -> Path:
    decl = write_decl(tmp, tiny("net", "onnx", "net").replace("tiny_models:net", "helper_models:net"))
    (tmp / "helper_models.py").write_text(textwrap.dedent(FACTORY))
    pkg = tmp / "netparts"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "layers.py").write_text(textwrap.dedent(LAYERS))
    (pkg / "defaults.py").write_text("FEATURES = 4\n")
    (pkg / "scale.py").write_text(
        "import torch\n\n\nclass Scale(torch.nn.Module):\n    def forward(self, x):\n        return x * 2.0\n"
    )
    (pkg / "unused.py").write_text("X = 1\n")
    return decl


def _outputs(out: Path) -> np.ndarray:
    response = json.loads((out / "samples" / "net.response.json").read_text())
    return np.array(response["outputs"][0]["data"])


def test_factory_sources_follow_local_imports_only(tmp_path: Path) -> None:
    spec = load_declaration(_project(tmp_path))
    files = factory_sources(spec, spec.model("net"))
    assert sorted(files) == [
        "helper_models.py",
        "netparts/__init__.py",
        "netparts/defaults.py",
        "netparts/layers.py",
        "netparts/scale.py",
    ]  # torch (site-packages), tiny_models.py and netparts/unused.py are not imported


def test_editing_an_imported_helper_rebuilds_an_unrelated_file_does_not(tmp_path: Path) -> None:
    decl = _project(tmp_path)
    out = tmp_path / "out"
    assert run_build(decl, out_dir=out, progress=False).exported == 1
    before = _outputs(out)
    (tmp_path / "netparts" / "unused.py").write_text("X = 2\n")
    (tmp_path / "tiny_models.py").write_text((tmp_path / "tiny_models.py").read_text() + "\n# edited\n")
    assert run_build(decl, out_dir=out, progress=False).exported == 0
    (tmp_path / "netparts" / "scale.py").write_text(
        (tmp_path / "netparts" / "scale.py").read_text().replace("2.0", "3.0")
    )
    again = run_build(decl, out_dir=out, progress=False)
    assert again.exported == 1
    # the edited helper was imported afresh in this process: the outputs are 1.5 x the old ones
    np.testing.assert_allclose(_outputs(out), 1.5 * before, rtol=1e-5)
    # the old entry is pruned after the successful build; only the manifest's entry is left
    entries = sorted(p.name for p in (out / "cache" / "models").iterdir())
    key = again.manifest.models["net"].source_sha256[:16]
    assert entries == [f"net-{key}", f"net-{key}.json"]


def test_removed_models_and_endpoints_leave_no_files(tmp_path: Path) -> None:
    first = """
  - name: one
    mode: SingleModel
    instance_types: [ml.g5.xlarge]
    models: [a]
  - name: two
    mode: MultiModel
    instance_types: [ml.g5.xlarge]
    models: [a, b]
"""
    out = tmp_path / "out"
    run_build(write_decl(tmp_path, tiny("a") + tiny("b"), endpoints=first), out_dir=out, progress=False)
    assert {p.name for p in (out / "samples").iterdir()} >= {"b.request.json", "b.response.json"}
    # b and endpoint 'one' are gone; 'two' becomes a single-model endpoint
    second = first.split("  - name: two")[0].replace("one", "two")
    result = run_build(write_decl(tmp_path, tiny("a"), endpoints=second), out_dir=out, progress=False)
    assert set(result.manifest.models) == {"a"} and set(result.manifest.endpoints) == {"two"}
    assert sorted(p.name for p in (out / "samples").iterdir()) == ["a.request.json", "a.response.json"]
    assert [p.name for p in (out / "sme").iterdir()] == ["two"] and not list((out / "mme").iterdir())
    assert sorted(p.name for p in (out / "cache" / "models").iterdir() if not p.name.endswith(".json")) == [
        f"a-{result.manifest.models['a'].source_sha256[:16]}"
    ]


def test_only_keeps_the_cache_of_the_other_models(tmp_path: Path) -> None:
    decl = write_decl(tmp_path, tiny("a") + tiny("b", "torchscript"))
    out = tmp_path / "out"
    assert run_build(decl, out_dir=out, progress=False).exported == 2
    assert run_build(decl, out_dir=out, only="a", force=True, progress=False).exported == 1
    again = run_build(decl, out_dir=out, progress=False)
    assert again.exported == 0 and set(again.manifest.models) == {"a", "b"}
