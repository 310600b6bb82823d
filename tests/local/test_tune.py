"""cdk-triton tune end to end on the real local endpoint, and the tuning-endpoint source through boto3."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cdk_triton.builder import run_build
from cdk_triton.builder.declarations import load_declaration
from cdk_triton.cli import main
from cdk_triton.config.manifest import read_manifest
from cdk_triton.local import CpuOverlay, LocalEndpoint
from cdk_triton.tune.apply import dump_document, load_document
from cdk_triton.tune.objective import rank
from cdk_triton.tune.run import Options, measure
from cdk_triton.tune.sources import EndpointSource, tuning_declaration
from cdk_triton.tune.variants import TUNED_FIELDS, Axes, generate
from tests.unit.tune.support import example_copy, tune_argv

pytestmark = [pytest.mark.triton, pytest.mark.slow]


@pytest.fixture()
def decl(tmp_path: Path) -> Path:
    return example_copy(tmp_path)


def test_tune_measures_locally_and_applies_only_the_tuned_fields(
    decl: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = yaml.safe_load(decl.read_text())
    options = "--formats onnx --instances 1 --concurrency 4 --repeats 1 --budget 40 --margin 0"
    argv = tune_argv(decl, *options.split(), "--apply", "--allow-local-apply")
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "classifier_onnx__current" in out and "classifier_onnx__onnx_nodb_x1" in out
    assert "this machine's CPU stand-ins (not a GPU instance)" in out
    res = decl.parent / "out" / "tune" / "classifier_onnx"
    assert {p.name for p in res.iterdir()} >= {
        "results.csv",
        "results.json",
        "throughput_vs_p99.png",
        "throughput_vs_concurrency.png",
    }
    after = yaml.safe_load(decl.read_text())
    load_declaration(decl)
    for old, new in zip(before["models"], after["models"], strict=True):
        assert {k: v for k, v in old.items() if k not in TUNED_FIELDS} == {
            k: v for k, v in new.items() if k not in TUNED_FIELDS
        }
    assert before["endpoints"] == after["endpoints"]
    assert not list(decl.parent.glob(".models.tune-*.yaml")), "the variant declaration was left behind"
    # the written declaration builds (the model and the endpoints holding it), from the tune's cache
    result = run_build(
        decl, out_dir=decl.parent / "out" / "tune" / "build", only="classifier_onnx", progress=False
    )
    entry = read_manifest(result.manifest_path).models["classifier_onnx"]
    winner = next(m for m in after["models"] if m["name"] == "classifier_onnx")
    assert ("dynamic_batching" in entry.config) == ("dynamic_batching" in winner)


def test_tuning_endpoint_variants_are_target_models_driven_through_boto3(decl: Path, tmp_path: Path) -> None:
    doc = load_document(decl)
    variants = generate(doc, "classifier_onnx", Axes(formats=("onnx",), instance_counts=(1,)))
    assert len(variants) == 2
    tdoc = tuning_declaration(
        doc, "classifier_onnx", variants, endpoint_name="tuning", instance_type="ml.g5.xlarge"
    )
    tpath = decl.parent / "models.tune.yaml"
    tpath.write_text(dump_document(tdoc))
    result = run_build(tpath, out_dir=tmp_path / "tout", progress=False)
    manifest = read_manifest(result.manifest_path)
    assert set(manifest.endpoint("tuning").target_models) == {v.name for v in variants}
    with LocalEndpoint(manifest, "tuning", overlay=CpuOverlay(instance_count=1)) as ep:
        source = EndpointSource("tuning", manifest, endpoint_url=ep.url, region_name="us-east-1")
        opts = Options(model="classifier_onnx", axes=Axes(concurrency=(2,)), budget_s=30, repeats=1)
        import os

        os.environ.setdefault("AWS_ACCESS_KEY_ID", "x")
        os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "x")
        measurements, skipped, _ = measure(source, variants, opts, progress=False)
    assert not skipped and {m.variant for m in measurements} == {v.name for v in variants}
    assert all(m.errors == 0 and m.requests >= 8 and m.source == "endpoint" for m in measurements)
    ranking = rank(measurements, current=variants[0].name)
    assert {r.variant for r in ranking.rows} == {v.name for v in variants}
