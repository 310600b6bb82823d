"""The hosting-mode axis: every row fills its fields, the Hosting modes page lists every mode, the refusals carry
catalogued codes, no module outside the mode table compares a mode's name, and the Lambda handler's mode
words stay those of the table."""

from __future__ import annotations

import ast
import warnings
from dataclasses import replace
from pathlib import Path

import pytest

from cdk_triton.config import errors, modes
from cdk_triton.config.manifest import manifest_from_dict

ROOT = Path(__file__).resolve().parents[3]
#: the page that carries the modes table (the README did, before the site had pages of its own)
PAGE = ROOT / "docs" / "concepts" / "hosting-modes.md"
PACKAGE = ROOT / "cdk_triton"
TABLE_DIR = PACKAGE / "config" / "modes"
#: The names that hold a mode's word: comparing one of them is comparing a mode's name.
MODE_CONSTANTS = {"SINGLE_MODEL", "MULTI_MODEL", "INFERENCE_COMPONENTS", "ENDPOINT_MODES", "MODES"}
#: The tri-state that could not name a fourth mode: gone (a deprecated property still answers).
GONE = "is_multi_model"


def _words() -> set[str]:
    return {w for m in modes.MODES.values() for w in (m.name, m.abbreviation)}


def _readme_modes(text: str) -> list[str]:
    """The modes of the "Hosting modes" page's table (its first column)."""
    table = text.split("<!-- modes -->", 1)[1].split("<!-- /modes -->", 1)[0]
    return [ln.split("|")[1].strip().strip("`") for ln in table.strip().splitlines()[2:]]


@pytest.mark.parametrize("name", modes.names())
def test_every_row_fills_every_required_field(name: str) -> None:
    row = modes.get(name)
    assert row.missing() == []
    assert row.routing in modes.ROUTES
    assert set(row.manifest_fields) <= {
        f.name
        for f in __import__("dataclasses").fields(
            __import__("cdk_triton.config.manifest", fromlist=["EndpointEntry"]).EndpointEntry
        )
    }


@pytest.mark.parametrize("field", modes.REQUIRED)
def test_fails_when_a_row_lacks_a_field(field: str) -> None:
    empty = "" if isinstance(getattr(modes.MULTI_MODEL, field), str) else ()
    props: dict[str, object] = {"name": "Toy", "abbreviation": "TOY", "aliases": ("toy",)}
    row = replace(modes.MULTI_MODEL, **{**props, field: empty})
    assert field in row.missing()
    with pytest.raises(ValueError, match="lacks"):
        modes.register(row)
    assert "Toy" not in modes.MODES


def test_fails_when_a_row_takes_a_word_another_mode_has() -> None:
    with pytest.raises(ValueError, match="already name"):
        modes.register(replace(modes.MULTI_MODEL, name="Toy", abbreviation="TOY", aliases=("sme",)))


def test_every_refusal_carries_a_catalogued_code_and_a_reason() -> None:
    for row in modes.MODES.values():
        for feature in modes.FEATURES:
            refusal = row.refusal(feature)
            if refusal is not None:
                assert refusal.code in errors.ALL_CODES and refusal.reason, (row.name, feature)


def test_every_mode_has_a_page_row_generated_from_the_table() -> None:
    text = PAGE.read_text()
    assert _readme_modes(text) == list(modes.names())
    assert modes.readme_table() in text, (
        f"{PAGE.relative_to(ROOT)}: the modes table is stale; paste modes.readme_table()"
    )


def test_a_registered_mode_without_a_readme_row_is_found() -> None:
    toy = replace(modes.MULTI_MODEL, name="ToyMode", abbreviation="TOY", aliases=("toy",))
    with modes.registered(toy):
        assert "ToyMode" not in _readme_modes(PAGE.read_text())
        assert modes.readme_table() not in PAGE.read_text()
        assert modes.resolve("toy") is toy and modes.lookup("ToyMode") is toy


def test_a_registered_mode_is_read_from_a_manifest_and_its_row_answers() -> None:
    toy = replace(modes.MULTI_MODEL, name="ToyMode", abbreviation="TOY", aliases=("toy",))
    with modes.registered(toy):
        entry = manifest_from_dict(
            {
                "schema_version": 3,
                "triton_version": "24.09",
                "artifact_location": {"bucket": "b", "prefix": "p/"},
                "uploaded": False,
                "models": {},
                "endpoints": {
                    "e": {
                        "name": "e",
                        "mode": "ToyMode",
                        "instance_types": ["ml.g5.xlarge"],
                        "s3_prefix": "s3://b/p/e/",
                        "target_models": {
                            "m": {
                                "logical_name": "m",
                                "target_model": "m-1.tar.gz",
                                "model": "m",
                                "models": ["m"],
                                "local_path": "m-1.tar.gz",
                                "sha256": "0" * 64,
                                "size_bytes": 1,
                                "s3_uri": "s3://b/p/e/m-1.tar.gz",
                            }
                        },
                    }
                },
            }
        ).endpoints["e"]
        assert entry.hosting_mode is toy and entry.per_model_archives


def test_old_names_still_answer_with_a_deprecation_warning() -> None:
    from cdk_triton.config.manifest import EndpointEntry

    entry = EndpointEntry(name="e", mode="MultiModel", instance_types=["ml.g5.xlarge"])
    with pytest.warns(DeprecationWarning, match="is_multi_model is deprecated"):
        assert entry.is_multi_model is True
    with pytest.warns(DeprecationWarning, match="is_inference_components is deprecated"):
        assert entry.is_inference_components is False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert entry.hosting_mode is modes.MULTI_MODEL


def _mode_operand(node: ast.expr, words: set[str]) -> bool:
    """Whether an operand of a comparison is a mode's word, a mode constant, or ``<x>.mode``."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    for item in items:
        if isinstance(item, ast.Constant) and item.value in words:
            return True
        if isinstance(item, ast.Name) and item.id in MODE_CONSTANTS:
            return True
        if isinstance(item, ast.Attribute) and item.attr in MODE_CONSTANTS | {"mode"}:
            return True
    return False


def mode_branches(source: str) -> list[int]:
    """The lines of ``source`` that compare a mode's name (``x.mode == "MultiModel"``, ``mode in
    (MULTI_MODEL, ...)``, ``a.mode != "IC"``) or read the gone ``is_multi_model``; comparing ``.mode``
    with None is not a branch on the mode."""
    words = _words()
    lines: list[int] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(isinstance(o, ast.Constant) and o.value is None for o in operands):
                continue
            if any(_mode_operand(o, words) for o in operands):
                lines.append(node.lineno)
        elif (isinstance(node, ast.Attribute) and node.attr == GONE) or (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == GONE
        ):
            lines.append(node.lineno)
    return sorted(lines)


def test_the_scan_sees_each_kind_of_mode_branch() -> None:
    src = (
        'a = e.mode == "MultiModel"\nb = mode in (MULTI_MODEL, INFERENCE_COMPONENTS)\nc = x.mode != "IC"\n'
        "d = ep.is_multi_model\ndef is_multi_model(self): ...\nf = e.mode is not None\n"
        "g = e.hosting_mode.loads_on_demand\n"
    )
    assert mode_branches(src) == [1, 2, 3, 4, 5]


def test_no_module_outside_the_mode_table_compares_a_mode() -> None:
    found = {
        f"{p.relative_to(ROOT)}:{line}"
        for p in sorted(PACKAGE.rglob("*.py"))
        if TABLE_DIR not in p.parents
        for line in mode_branches(p.read_text())
    }
    assert not found, f"ask the mode's row (config.modes) instead: {sorted(found)}"


def test_the_lambda_handlers_name_no_mode() -> None:
    """lambda/ gets routing, not modes: no handler holds a mode's name (or a deprecated spelling of one)."""
    words = {*modes.names(), "SME", "MME", "IC"}
    seen = {
        (path.name, n.value)
        for path in sorted((ROOT / "lambda").rglob("*.py"))
        for n in ast.walk(ast.parse(path.read_text()))
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in words
    }
    assert not seen, f"route by the spec's keys (lambda/verify routing_of), not by the mode: {sorted(seen)}"


def test_the_metric_table_and_the_rows_name_the_same_mode_only_metrics() -> None:
    """``constructs.metrics`` defines the metrics; the rows name the ones only their mode publishes."""
    from cdk_triton.constructs import metrics

    table = {v.name for v in vars(metrics).values() if isinstance(v, metrics.MetricDef)}
    for row in modes.MODES.values():
        assert set(row.metrics) <= table, row.name
    flagged = {v.name for v in vars(metrics).values() if isinstance(v, metrics.MetricDef) and v.multi_model}
    assert flagged == set(modes.only(loads_on_demand=True).metrics)


#: The manifest endpoint fields every mode may fill (the rows list the rest: ``manifest_fields``).
COMMON_MANIFEST_FIELDS = {
    "name",
    "mode",
    "instance_types",
    "gpu_architectures",
    "sample",
    "inference_ami_version",
}


def test_the_fixture_manifests_fill_only_their_rows_manifest_fields() -> None:
    """``manifest_fields`` is what a mode's entries fill: the reader does not refuse the others, so the
    recorded manifests are checked against the rows here (a field a mode starts filling joins its row)."""
    from dataclasses import fields as dc_fields

    from cdk_triton.config.manifest import EndpointEntry, read_manifest

    checked = 0
    for path in sorted((ROOT / "tests" / "fixtures" / "manifests").glob("*.json")):
        for entry in read_manifest(path).endpoints.values():
            filled = {
                f.name for f in dc_fields(EndpointEntry) if getattr(entry, f.name) not in (None, "", [], {})
            }
            row = entry.hosting_mode
            assert filled - COMMON_MANIFEST_FIELDS <= set(row.manifest_fields), (path.name, entry.name)
            checked += 1
    assert checked
    with_components = modes.only(components=True).manifest_fields
    assert {"components", "min_instances", "max_instances"} <= set(with_components)
