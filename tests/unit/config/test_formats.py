"""The format table: every row has what its kind requires, the README and the manifest schema
list the same formats, and a registered format is seen by every table that reads the format table."""

from __future__ import annotations

import importlib
import json
from dataclasses import replace
from importlib import resources
from pathlib import Path

import pytest

from cdk_triton.config import formats, tables
from cdk_triton.config.declaration.vocabulary import SOURCE_KINDS
from tests.toy_format import ROW as TOY

README = Path(formats.__file__).resolve().parent / "README.md"
PROTOCOL = ("skip_reason", "check_source", "warnings", "export_model", "artifact_runner")


def _readme_rows() -> list[list[str]]:
    """The cells of the README's Formats table, one list per line after the header."""
    text = README.read_text()
    section = text.split("\n## Formats\n", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in section.splitlines() if ln.startswith("| `")]
    return [[c.strip().strip("`") for c in ln.strip("|").split("|")] for ln in lines]


@pytest.mark.parametrize("name", formats.names())
def test_every_row_fills_the_fields_its_kind_requires(name: str) -> None:
    row = formats.get(name)
    assert row.kind in formats.KINDS
    assert row.missing() == []


@pytest.mark.parametrize(("kind", "field"), [(k, f) for k, fs in formats.REQUIRED.items() for f in fs])
def test_fails_when_a_row_lacks_a_required_field(kind: str, field: str) -> None:
    row = next(iter(formats.of_kind(kind)))
    empty = {"source_kinds": (), "cache_tools": (), "files": (), "allowed_imports": frozenset()}
    broken = replace(row, name="broken", **{field: empty.get(field)})
    assert broken.missing() == [field]
    with pytest.raises(ValueError, match=field):
        formats.register(broken)
    assert "broken" not in formats.names()


def test_every_format_has_its_readme_line_in_order() -> None:
    rows = _readme_rows()
    assert [r[0] for r in rows] == list(formats.names())
    for cells in rows:
        row = formats.get(cells[0])
        assert cells[1] == row.kind
        assert cells[2] == str(row.exporter).rsplit(".", 1)[-1]


def test_manifest_schema_enum_is_the_registry() -> None:
    schema = json.loads(
        resources.files("cdk_triton.config").joinpath("data", "manifest.schema.json").read_text()
    )
    assert schema["$defs"]["model"]["properties"]["format"]["enum"] == list(formats.names())


@pytest.mark.parametrize("name", formats.names())
def test_every_exporter_module_implements_the_protocol(name: str) -> None:
    module = importlib.import_module(str(formats.get(name).exporter))
    assert all(callable(getattr(module, f, None)) for f in PROTOCOL), module.__name__


def test_facts_sources_and_stand_ins_exist() -> None:
    facts = set(tables.release(tables.DEFAULT_TRITON_VERSION).facts())
    stand_ins = Path(formats.__file__).resolve().parents[1] / "local" / "backends"
    used = set()
    for row in formats.FORMATS.values():
        assert row.release_fact is None or row.release_fact in facts, row.name
        assert set(row.source_kinds) <= set(SOURCE_KINDS), row.name
        used |= set(row.source_kinds)
        if row.cpu_stand_in:
            assert (stand_ins / row.cpu_stand_in / "model.py").is_file(), row.name
    assert used == set(SOURCE_KINDS)


def test_cache_key_tools_are_unchanged() -> None:
    """The tools whose versions are in every cache key (a change would rebuild every cache entry)."""
    from cdk_triton.builder.cache import _tools

    assert set(_tools()) == {
        "cdk-triton",
        "torch",
        "onnx",
        "onnxscript",
        "onnxruntime",
        "numpy",
        "transformers",
        "tritonclient",
        "protobuf",
        "isal",
        "tensorrt",
    }


def test_register_is_seen_by_every_table_and_undone() -> None:
    from cdk_triton.builder.merge import parse_formats
    from cdk_triton.local.runtime import cpu_stand_ins

    with formats.registered(TOY):
        assert formats.names()[-1] == "toy" and "toy" in formats.listed()
        assert parse_formats("toy,onnx") == {"toy", "onnx"}
        assert cpu_stand_ins()["toy"] == Path(str(TOY.cpu_stand_in))
        with pytest.raises(ValueError, match="already registered"):
            formats.register(TOY)
    assert "toy" not in formats.names() and "toy" not in cpu_stand_ins()


def test_lookups_of_raw_values() -> None:
    assert formats.lookup("onnx") is formats.get("onnx") and formats.lookup(3) is None
    assert formats.is_composed("ensemble") and not formats.is_composed("onnx")
    assert formats.is_gpu_only("tensorrt") and not formats.is_gpu_only(None)
    assert formats.where(implicit_state=True) == ("torchscript", "onnx", "tensorrt")
    assert formats.by_platform() == {
        "pytorch_libtorch": "pytorch",
        "onnxruntime_onnx": "onnxruntime",
        "tensorrt_plan": "tensorrt",
    }
