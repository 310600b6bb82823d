"""Write-back and the whole run's logic, with a fake measurement source (no server)."""

from __future__ import annotations

import contextlib
import csv
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from cdk_triton.builder.declarations import load_declaration
from cdk_triton.errors import TritonValidationError
from cdk_triton.local.load import LoadResult
from cdk_triton.tune.apply import render_change
from cdk_triton.tune.run import Options, tune
from cdk_triton.tune.sources import Target
from cdk_triton.tune.variants import Axes, Variant, generate
from tests.unit.tune.support import example_copy


@pytest.fixture()
def decl(tmp_path: Path) -> Path:
    return example_copy(tmp_path)


def changed_lines(diff: str) -> list[str]:
    return [ln for ln in diff.splitlines() if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]


def test_write_back_changes_only_the_tuned_fields_and_keeps_comments(decl: Path) -> None:
    v = Variant(
        "x",
        {
            "classifier_onnx": {
                "format": "torchscript",
                "dynamic_batching": None,
                "instance_groups": [{"kind": "KIND_GPU", "count": 2}],
            }
        },
    )
    new, diff = render_change(decl, v)
    assert changed_lines(diff) == [
        "-    format: onnx",
        "+    format: torchscript",
        "-    dynamic_batching: {preferred_batch_sizes: [4, 8], max_queue_delay_microseconds: 100}",
        "+    instance_groups: [{kind: KIND_GPU, count: 2}]",
    ]
    old = decl.read_text()
    assert [ln for ln in old.splitlines() if "#" in ln] == [ln for ln in new.splitlines() if "#" in ln]
    model = next(m for m in yaml.safe_load(new)["models"] if m["name"] == "classifier_onnx")
    assert model["format"] == "torchscript" and "dynamic_batching" not in model
    assert model["source"] == {
        "factory": "example_models:resnet_classifier",
        "kwargs": {"num_classes": 10, "width": 16, "blocks": 3},
        "seed": 0,
    }


def test_an_equal_value_or_triton_default_is_not_rewritten(decl: Path) -> None:
    variants = generate(
        yaml.safe_load(decl.read_text()),
        "classifier_onnx",
        Axes(formats=("onnx",), batching=(True,), instance_counts=(1,)),
    )
    assert len(variants) == 1  # the only combination equals the declaration
    same = Variant(
        "y",
        {
            "classifier_onnx": {
                **variants[0].changes["classifier_onnx"],
                "instance_groups": [{"kind": "KIND_GPU", "count": 1}],
            }
        },
    )
    assert render_change(decl, same)[1] == ""


class FakeSource:
    """Deterministic figures per variant: the logic of a run without a server."""

    kind = "local"

    def __init__(self, rps: dict[str, float]) -> None:
        self.rps = rps
        self.opened: list[str] = []

    def skip_reason(self, variant: Variant) -> str | None:
        return "TensorRT plans need a GPU" if variant.format == "tensorrt" else None

    @contextlib.contextmanager
    def open(self, variant: Variant) -> Iterator[Target]:
        self.opened.append(variant.name)
        rate = self.rps.get(variant.name, 100.0)

        def run(concurrency: int, requests: int) -> LoadResult:
            lat = concurrency / rate
            return LoadResult(latencies=[lat] * requests, wall_s=requests / rate)

        yield Target(run)


def test_a_run_ranks_reports_and_applies_the_winner(decl: Path, tmp_path: Path) -> None:
    doc = yaml.safe_load(decl.read_text())
    variants = generate(doc, "classifier_onnx", Axes(formats=("onnx", "tensorrt"), instance_counts=(1, 2)))
    source = FakeSource({"classifier_onnx__current": 100.0, "classifier_onnx__onnx_nodb_x2": 170.0})
    opts = Options(model="classifier_onnx", axes=Axes(concurrency=(4,)), budget_s=60, repeats=2)
    before = decl.read_text()
    out = tune(
        source,
        variants,
        opts,
        config=decl,
        out_dir=tmp_path / "out",
        apply=True,
        allow_local_apply=True,
        progress=False,
    )
    assert out.ranking.winner == "classifier_onnx__onnx_nodb_x2"
    assert all("tensorrt" in n for n in out.skipped) and out.skipped
    assert not any("tensorrt" in n for n in source.opened)
    assert out.applied and decl.read_text() != before
    assert changed_lines(out.diff) == [
        "-    dynamic_batching: {preferred_batch_sizes: [4, 8], max_queue_delay_microseconds: 100}",
        "+    instance_groups: [{kind: KIND_GPU, count: 2}]",
    ]
    load_declaration(decl)  # the written declaration is valid
    rows = list(csv.DictReader((tmp_path / "out" / "results.csv").open()))
    assert rows[0]["variant"] == "classifier_onnx__onnx_nodb_x2" and float(
        rows[0]["invocations_per_min"]
    ) == pytest.approx(170 * 60)
    doc_json = json.loads((tmp_path / "out" / "results.json").read_text())
    assert doc_json["winner"] == out.ranking.winner and len(doc_json["measurements"]) == 2 * (
        len(variants) - len(out.skipped)
    )
    for png in ("throughput_vs_p99.png", "throughput_vs_concurrency.png"):
        assert (tmp_path / "out" / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_apply_models_yaml_is_untouched(decl: Path, tmp_path: Path) -> None:
    variants = generate(yaml.safe_load(decl.read_text()), "classifier_onnx", Axes(formats=("onnx",)))
    before = decl.read_bytes()
    out = tune(
        FakeSource({variants[1].name: 500.0}),
        variants,
        Options(model="classifier_onnx", repeats=1),
        config=decl,
        out_dir=tmp_path / "o",
        progress=False,
        plots=False,
    )
    assert out.diff and not out.applied and decl.read_bytes() == before


def test_fails_to_apply_local_results_without_the_explicit_flag(decl: Path, tmp_path: Path) -> None:
    variants = generate(yaml.safe_load(decl.read_text()), "classifier_onnx")
    source = FakeSource({})
    with pytest.raises(TritonValidationError, match=r"\[TuneLocalApply\]") as err:
        tune(
            source,
            variants,
            Options(model="classifier_onnx"),
            config=decl,
            out_dir=tmp_path / "o",
            apply=True,
            progress=False,
        )
    assert "--allow-local-apply" in str(err.value)
    assert source.opened == [] and not (tmp_path / "o").exists()


def test_a_small_budget_measures_the_current_one_and_skips_the_rest(decl: Path, tmp_path: Path) -> None:
    variants = generate(yaml.safe_load(decl.read_text()), "classifier_onnx", Axes(formats=("onnx",)))
    source = FakeSource({})
    out = tune(
        source,
        variants,
        Options(model="classifier_onnx", budget_s=0.01, repeats=1),
        config=decl,
        out_dir=tmp_path / "o",
        progress=False,
        plots=False,
    )
    assert source.opened == ["classifier_onnx__current"]
    assert (
        all("time budget exhausted" in why for why in out.skipped.values())
        and len(out.skipped) == len(variants) - 1
    )
    assert out.ranking.winner == "classifier_onnx__current"
