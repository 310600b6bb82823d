"""``tune --apply`` on declarations written in many styles: only the tuned fields' lines differ.

Each corpus file is a valid declaration in one style; the write-back of a variant is diffed line by
line against the original (the exact lines that change are listed per case), read back with the
build's loader, and the applied file is loaded with ``load_declaration`` (the full declaration rules).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from cdk_triton.builder.declarations import load_declaration
from cdk_triton.errors import TritonValidationError
from cdk_triton.tune.apply import apply_variant, dump_document, load_document, render_change, write_atomically
from cdk_triton.tune.variants import Axes, Variant, generate
from tests.unit.tune.support import BUILD, example_copy

CORPUS = Path(__file__).parent / "corpus"
TUNED = {
    "format": "onnx",
    "dynamic_batching": {"preferred_batch_sizes": [4, 8], "max_queue_delay_microseconds": 200},
    "instance_groups": [{"kind": "KIND_GPU", "count": 2}],
}
DB200 = "{preferred_batch_sizes: [4, 8], max_queue_delay_microseconds: 200}"
IG2 = "[{kind: KIND_GPU, count: 2}]"


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def bom(text: str) -> str:
    return "\ufeff" + text


#: (case, file, transform of its text, the variant's changes or None for the ensemble's, the changed lines)
CASES: list[tuple[str, Path, Callable[[str], str] | None, dict | None, list[str]]] = [
    (
        "the example's build/models.yaml",
        BUILD / "models.yaml",
        None,
        {"classifier_onnx": TUNED},
        [
            "-    dynamic_batching: {preferred_batch_sizes: [4, 8], max_queue_delay_microseconds: 100}",
            f"+    dynamic_batching: {DB200}",
            f"+    instance_groups: {IG2}",
        ],
    ),
    (
        "indentless sequences, block style (yamllint's default)",
        CORPUS / "indentless.yaml",
        None,
        {"classifier_onnx": TUNED},
        [
            "-    max_queue_delay_microseconds: 100",
            "+    max_queue_delay_microseconds: 200",
            "-    count: 1",
            "+    count: 2",
        ],
    ),
    (
        "CRLF line ends (indentless.yaml)",
        CORPUS / "indentless.yaml",
        crlf,
        {"classifier_onnx": TUNED},
        [
            "-    max_queue_delay_microseconds: 100\r",
            "+    max_queue_delay_microseconds: 200\r",
            "-    count: 1\r",
            "+    count: 2\r",
        ],
    ),
    (
        "4-space indentation, `-   ` items, new instance_groups in that style",
        CORPUS / "four_space.yaml",
        None,
        {"classifier_onnx": TUNED},
        [
            "-            max_queue_delay_microseconds: 100",
            "+            preferred_batch_sizes: [4, 8]",
            "+            max_queue_delay_microseconds: 200",
            "+        instance_groups:",
            "+            -   kind: KIND_GPU",
            "+                count: 2",
        ],
    ),
    (
        "every model one flow mapping",
        CORPUS / "flow_models.yaml",
        None,
        {"classifier_onnx": TUNED},
        [
            '-  - {name: classifier_onnx, format: onnx, source: {factory: "example_models:resnet_classifier", kwargs: {num_classes: 10, width: 16, blocks: 3}, seed: 0}, inputs: [{name: PIXELS, dtype: FP32, shape: [3, 32, 32]}], outputs: [{name: LOGITS, dtype: FP32, shape: [10]}], max_batch_size: 8, dynamic_batching: {max_queue_delay_microseconds: 100}}',
            f'+  - {{name: classifier_onnx, format: onnx, source: {{factory: "example_models:resnet_classifier", kwargs: {{num_classes: 10, width: 16, blocks: 3}}, seed: 0}}, inputs: [{{name: PIXELS, dtype: FP32, shape: [3, 32, 32]}}], outputs: [{{name: LOGITS, dtype: FP32, shape: [10]}}], max_batch_size: 8, dynamic_batching: {DB200}, instance_groups: {IG2}}}',
        ],
    ),
    (
        "flow collections with spaces inside the brackets",
        CORPUS / "flow_padded.yaml",
        None,
        {"classifier_onnx": TUNED},
        [
            "-    dynamic_batching: { preferred_batch_sizes: [ 4, 8 ], max_queue_delay_microseconds: 100 }",
            "-    instance_groups: [ { kind: KIND_GPU, count: 1 } ]",
            "+    dynamic_batching: { preferred_batch_sizes: [ 4, 8 ], max_queue_delay_microseconds: 200 }",
            "+    instance_groups: [ { kind: KIND_GPU, count: 2 } ]",
        ],
    ),
    (
        "%YAML directive, `---` and `...` markers, comments above and after them",
        CORPUS / "document_markers.yaml",
        None,
        {"classifier_onnx": TUNED},
        [
            "-    dynamic_batching: {preferred_batch_sizes: [4, 8], max_queue_delay_microseconds: 100}",
            f"+    dynamic_batching: {DB200}",
            f"+    instance_groups: {IG2}",
        ],
    ),
    (
        "a model anchored whole and merged (`<<: *base`): own keys override the merge",
        CORPUS / "anchors_merge.yaml",
        None,
        {"classifier_onnx": TUNED},
        [f"+    dynamic_batching: {DB200}", f"+    instance_groups: {IG2}"],
    ),
    (
        "a merged dynamic_batching turned off (`false` overrides the merge)",
        CORPUS / "merged_off.yaml",
        None,
        {"classifier_onnx": {**TUNED, "dynamic_batching": None}},
        ["+    dynamic_batching: false", f"+    instance_groups: {IG2}"],
    ),
    (
        "tuned fields that alias another model's anchors: the value is written at the alias",
        CORPUS / "alias_value.yaml",
        None,
        {"classifier_onnx": TUNED},
        [
            "-    dynamic_batching: *batching   # shared with classifier_ts",
            "-    instance_groups: *groups",
            "+    dynamic_batching:",
            "+      preferred_batch_sizes: [4, 8]",
            "+      max_queue_delay_microseconds: 200   # shared with classifier_ts",
            f"+    instance_groups: {IG2}",
        ],
    ),
    (
        "comments after block values and blank lines between fields",
        CORPUS / "comments_after.yaml",
        None,
        {"classifier_onnx": TUNED},
        [
            "-      max_queue_delay_microseconds: 100   # measured on ml.g5.xlarge",
            "+      max_queue_delay_microseconds: 200   # measured on ml.g5.xlarge",
            "-        count: 1   # one per GPU",
            "+        count: 2   # one per GPU",
        ],
    ),
    (
        "a block value removed: its lines go, the comment and blank line after it stay",
        CORPUS / "comments_after.yaml",
        None,
        {"classifier_onnx": {**TUNED, "dynamic_batching": None}},
        [
            "-    dynamic_batching:",
            "-      preferred_batch_sizes: [4, 8]",
            "-      max_queue_delay_microseconds: 100   # measured on ml.g5.xlarge",
            "-        count: 1   # one per GPU",
            "+        count: 2   # one per GPU",
        ],
    ),
    (
        "a field removed from a one-line flow model",
        CORPUS / "flow_models.yaml",
        None,
        {"classifier_onnx": {**TUNED, "dynamic_batching": None}},
        [
            '-  - {name: classifier_onnx, format: onnx, source: {factory: "example_models:resnet_classifier", kwargs: {num_classes: 10, width: 16, blocks: 3}, seed: 0}, inputs: [{name: PIXELS, dtype: FP32, shape: [3, 32, 32]}], outputs: [{name: LOGITS, dtype: FP32, shape: [10]}], max_batch_size: 8, dynamic_batching: {max_queue_delay_microseconds: 100}}',
            f'+  - {{name: classifier_onnx, format: onnx, source: {{factory: "example_models:resnet_classifier", kwargs: {{num_classes: 10, width: 16, blocks: 3}}, seed: 0}}, inputs: [{{name: PIXELS, dtype: FP32, shape: [3, 32, 32]}}], outputs: [{{name: LOGITS, dtype: FP32, shape: [10]}}], max_batch_size: 8, instance_groups: {IG2}}}',
        ],
    ),
    (
        "blank lines around the tuned model, the last one, no newline at the end",
        CORPUS / "blank_lines.yaml",
        None,
        {"classifier_onnx": TUNED},
        [
            "-    max_batch_size: 8",
            "+    max_batch_size: 8",
            f"+    dynamic_batching: {DB200}",
            f"+    instance_groups: {IG2}",
        ],
    ),
    (
        "quoted keys and values (a byte order mark too)",
        CORPUS / "quoted.yaml",
        bom,
        {"classifier_onnx": TUNED},
        [
            "-    \"instance_groups\": [{'kind': 'KIND_GPU', 'count': 1}]",
            '+    "dynamic_batching": {"preferred_batch_sizes": [4, 8], "max_queue_delay_microseconds": 200}',
            "+    \"instance_groups\": [{'kind': 'KIND_GPU', 'count': 2}]",
        ],
    ),
    (
        "an ensemble: its steps get the fields, each in its own place",
        CORPUS / "ensemble.yaml",
        None,
        None,
        [
            "-    instance_groups: [{kind: KIND_GPU, count: 1}]",
            "+    dynamic_batching: {preferred_batch_sizes: [4, 8], max_queue_delay_microseconds: 100}",
            "+    instance_groups: [{kind: KIND_GPU, count: 2}]",
            "-    instance_groups: [{kind: KIND_CPU, count: 1}]",
            "+    dynamic_batching: {preferred_batch_sizes: [4, 8], max_queue_delay_microseconds: 100}",
            "+    instance_groups: [{kind: KIND_CPU, count: 2}]",
        ],
    ),
    (
        "block style with both fields new: inserted in another model's block style",
        CORPUS / "new_fields_block.yaml",
        None,
        {"classifier_onnx": TUNED},
        [
            "+    dynamic_batching:",
            "+      preferred_batch_sizes: [4, 8]",
            "+      max_queue_delay_microseconds: 200",
            "+    instance_groups:",
            "+      - kind: KIND_GPU",
            "+        count: 2",
        ],
    ),
]


def _declaration(tmp_path: Path, source: Path, transform: Callable[[str], str] | None) -> Path:
    path = example_copy(tmp_path)
    text = source.read_bytes().decode("utf-8")
    path.write_bytes((transform(text) if transform else text).encode("utf-8"))
    return path


def _variant(path: Path, changes: dict | None) -> Variant:
    if changes is not None:
        return Variant("tuned", changes)
    doc = yaml.safe_load(path.read_text("utf-8-sig"))
    return generate(doc, "classifier", Axes(batching=(True,), instance_counts=(2,)))[1]


def _changed(old: str, new: str) -> list[str]:
    diff = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True), n=0)
    return [ln.rstrip("\n") for ln in diff if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]


def test_the_corpus_has_at_least_twelve_styles() -> None:
    assert len({c[1].name for c in CASES}) >= 12 and len(CASES) >= 17
    assert {p.name for p in CORPUS.glob("*.yaml")} - {c[1].name for c in CASES} == {"shared_anchor.yaml"}


@pytest.mark.parametrize(
    ("case", "source", "transform", "changes", "lines"), CASES, ids=[c[0] for c in CASES]
)
def test_only_the_tuned_fields_lines_differ(
    tmp_path: Path,
    case: str,
    source: Path,
    transform: Callable[[str], str] | None,
    changes: dict | None,
    lines: list[str],
) -> None:
    path = _declaration(tmp_path, source, transform)
    old = path.read_bytes().decode("utf-8")
    variant = _variant(path, changes)
    new, diff = render_change(path, variant)
    assert _changed(old, new) == lines
    # the declaration a variant is built from locally (the in-memory round trip) says the same
    doc = load_document(path)
    apply_variant(doc, variant)
    assert yaml.safe_load(dump_document(doc)) == yaml.safe_load(new.lstrip("\ufeff"))
    write_atomically(path, new)
    assert path.read_bytes() == new.encode("utf-8")  # CRLF and a byte order mark survive as they were
    load_declaration(path)  # the applied file is a valid declaration (every rule of the build)
    models = yaml.safe_load(new.lstrip("\ufeff"))["models"]
    for model, change in variant.changes.items():
        raw = next(m for m in models if m["name"] == model)
        for key, value in change.items():
            assert (not raw.get(key)) if value is None else raw.get(key) == value, (case, model, key)


def test_an_anchor_other_models_alias_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    path = _declaration(tmp_path, CORPUS / "shared_anchor.yaml", None)
    before = path.read_bytes()
    with pytest.raises(TritonValidationError, match=r"\[TuneWriteBack\]") as err:
        render_change(path, Variant("x", {"classifier_onnx": TUNED}))
    assert err.value.prop == "models[0].dynamic_batching" and err.value.value == "&batching"
    assert path.read_bytes() == before


def test_a_model_other_models_merge_is_refused(tmp_path: Path) -> None:
    path = _declaration(tmp_path, CORPUS / "anchors_merge.yaml", None)
    with pytest.raises(TritonValidationError, match=r"\[TuneWriteBack\]") as err:
        render_change(path, Variant("x", {"classifier_ts": {**TUNED, "format": "torchscript"}}))
    assert err.value.prop == "models[0]"


def test_a_literal_block_scalar_before_a_new_field_keeps_its_lines(tmp_path: Path) -> None:
    path = _declaration(tmp_path, CORPUS / "new_fields_block.yaml", None)
    text = path.read_text().replace(
        "        data: zero\n", "        data: zero\n    notes: |\n      kept as written\n\n", 1
    )
    path.write_text(text)
    groups = [{"kind": "KIND_GPU", "count": 2}]
    new, _ = render_change(path, Variant("x", {"classifier_onnx": {"instance_groups": groups}}))
    assert _changed(text, new) == ["+    instance_groups:", "+      - kind: KIND_GPU", "+        count: 2"]
    assert (
        "      kept as written\n    instance_groups:\n      - kind: KIND_GPU\n        count: 2\n\n\n" in new
    )


def test_a_write_back_that_would_not_read_back_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cdk_triton.tune import writeback

    path = _declaration(tmp_path, CORPUS / "indentless.yaml", None)
    monkeypatch.setattr(writeback, "apply_edits", lambda text, edits: text.replace("count: 1", "count: [1"))
    with pytest.raises(TritonValidationError, match=r"\[TuneWriteBack\]"):
        render_change(path, Variant("x", {"classifier_onnx": TUNED}))
