"""Inference components are packaged as MME target models (one archive per model with its steps)."""

from __future__ import annotations

import json
from pathlib import Path

from cdk_triton.builder import run_build
from cdk_triton.config.manifest import INFERENCE_COMPONENTS, SCHEMA_VERSION, read_manifest
from tests.unit.builder.helpers import python_model, write_decl

ENDPOINTS = """
  - name: multi
    mode: MultiModel
    instance_types: [ml.g5.xlarge]
    models: [pre, pre_2]
  - name: ics
    mode: components
    instance_types: [ml.g5.xlarge]
    models: [pre, pre_2]
    min_instances: 1
    max_instances: 4
    components:
      pre: {min_copies: 0, max_copies: 3, memory_mb: 1024, accelerators: 1, data_cache: true}
"""


def test_components_reuse_the_mme_archives_and_record_each_component(tmp_path: Path) -> None:
    decl = write_decl(tmp_path, python_model() + python_model("pre_2"), endpoints=ENDPOINTS)
    result = run_build(decl, out_dir=tmp_path / "out", progress=False)
    m = read_manifest(tmp_path / "out")
    mme, ics = m.endpoint("multi"), m.endpoint("ics")
    assert ics.mode == INFERENCE_COMPONENTS and ics.s3_prefix == "s3://test-bucket/prefix/ic/ics/"
    for name, target in ics.target_models.items():  # the same bytes as the MME's archive of the model
        assert target.sha256 == mme.target_models[name].sha256
        assert target.target_model == mme.target_models[name].target_model
        assert target.local_path == f"ic/ics/{target.target_model}"
        assert (tmp_path / "out" / target.local_path).is_file()
    pre, pre2 = ics.components["pre"], ics.components["pre_2"]
    assert (pre.component_name, pre.target_model, pre.copies, pre.min_copies, pre.max_copies) == (
        "ics-pre",
        "pre",
        1,
        0,
        3,
    )
    assert (pre.min_memory_mb, pre.accelerators, pre.data_cache) == (1024, 1, True)
    assert (pre2.component_name, pre2.copies, pre2.min_memory_mb) == ("ics-pre-2", 1, None)
    assert (ics.min_instances, ics.max_instances, m.schema_version) == (1, 4, SCHEMA_VERSION)
    raw = json.loads((tmp_path / "out" / "manifest.json").read_text())["endpoints"]["ics"]
    assert "accelerators" not in raw["components"]["pre_2"]  # unset: derived at synth
    again = run_build(decl, out_dir=tmp_path / "out", progress=False)
    assert again.packaged == 0 and again.manifest == result.manifest
