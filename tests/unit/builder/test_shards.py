"""``--shard I/N``, ``--list-shards N`` and repeatable ``--merge-manifest``: a stable assignment that keeps
ensembles whole, and shards merged into the same bytes as one build."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cdk_triton.builder import run_build, shards
from cdk_triton.builder.declarations import load_declaration
from cdk_triton.cli import main
from cdk_triton.errors import TritonValidationError
from tests.unit.builder.test_parallel import digests, ensemble_of, py_decl, write_tiny_onnx

ONNX_FILE = """
  - name: t_file
    format: onnx
    source: {onnx: tiny.onnx}
    inputs: [{name: x, dtype: FP32, shape: [4]}]
    outputs: [{name: y, dtype: FP32, shape: [3]}]
    max_batch_size: 4
"""


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Six python models, an ONNX file and two ensembles sharing a step, built on one machine."""
    tmp = tmp_path_factory.mktemp("fleet")
    extra = ONNX_FILE + ensemble_of("ens_a", "p1") + ensemble_of("ens_b", "p1") + ensemble_of("ens_c", "p4")
    decl = py_decl(tmp / "src", {f"p{i}": "" for i in range(6)}, extra=extra)
    write_tiny_onnx(tmp / "src" / "tiny.onnx")
    text = decl.read_text().replace("models: [p0,", "models: [t_file, p0,")
    for ep, models in (("ea", "ens_a, ens_c"), ("eb", "ens_b")):
        text += f"- name: {ep}\n  mode: MultiModel\n  instance_types: [ml.g5.xlarge]\n  models: [{models}]\n"
    decl.write_text(text)
    run_build(decl, out_dir=tmp / "one", progress=False)
    return decl, tmp / "one"


@pytest.mark.parametrize("count", [1, 2, 3])
def test_shards_merged_are_the_bytes_of_one_build(
    count: int, fleet: tuple[Path, Path], tmp_path: Path
) -> None:
    decl, one = fleet
    manifests = []
    built: list[str] = []
    for i in range(count):
        out = tmp_path / f"shard-{i}"
        result = run_build(decl, out_dir=out, progress=False, shard=f"{i}/{count}")
        assert result.manifest.endpoints == {}  # a shard packages no endpoint
        built += list(result.manifest.models)
        manifests.append(out / "manifest.json")
    assert sorted(built) == sorted(load_declaration(decl).model_names)  # every model in exactly one shard
    merged = run_build(decl, out_dir=tmp_path / "merged", progress=False, merge_manifest=manifests)
    assert merged.exported == 0  # taken from the shards' caches, not exported
    assert digests(tmp_path / "merged") == digests(one)


def test_merge_manifest_is_repeatable_on_the_command_line(fleet: tuple[Path, Path], tmp_path: Path) -> None:
    decl, one = fleet
    args = ["build", "--config", str(decl), "--no-progress", "--jobs", "1"]
    for i in range(2):
        assert main([*args, "--out", str(tmp_path / f"s{i}"), "--shard", f"{i}/2"]) == 0
    merge = [a for i in range(2) for a in ("--merge-manifest", str(tmp_path / f"s{i}" / "manifest.json"))]
    assert main([*args, "--out", str(tmp_path / "m"), *merge]) == 0
    assert digests(tmp_path / "m") == digests(one)


def test_list_shards_prints_the_assignment_and_writes_nothing(
    fleet: tuple[Path, Path], tmp_path: Path, capsys: Any
) -> None:
    decl, _ = fleet
    before = sorted(p.name for p in decl.parent.iterdir())
    assert main(["build", "--config", str(decl), "--list-shards", "3"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["shards"] == 3 and len(data["assignment"]) == 3
    assert data["assignment"] == shards.assign(load_declaration(decl), 3)
    names = [n for s in data["assignment"] for n in s]
    assert sorted(names) == sorted(load_declaration(decl).model_names)
    for ens, step in (("ens_a", "p1"), ("ens_b", "p1"), ("ens_c", "p4")):  # closures stay together
        (where,) = [i for i, s in enumerate(data["assignment"]) if ens in s]
        assert step in data["assignment"][where]
    (ab,) = [s for s in data["assignment"] if "ens_a" in s]
    assert "ens_b" in ab  # a step two ensembles share joins them
    assert sorted(p.name for p in decl.parent.iterdir()) == before


def test_rendezvous_assignment_is_stable() -> None:
    names = [f"model-{i:04d}" for i in range(400)]
    four = {n: shards.shard_of(n, 4) for n in names}
    assert {shards.shard_of(n, 4) for n in names} == {0, 1, 2, 3}
    assert max(list(four.values()).count(i) for i in range(4)) < 140  # about 100 each
    # one more shard: about a fifth of the models move, each to the new shard
    five = {n: shards.shard_of(n, 5) for n in names}
    moved = [n for n in names if five[n] != four[n]]
    assert 40 < len(moved) < 130 and all(five[n] == 4 for n in moved)


def test_adding_a_model_moves_no_other(tmp_path: Path) -> None:
    small = load_declaration(py_decl(tmp_path / "a", {f"m{i}": "" for i in range(12)}))
    big = load_declaration(py_decl(tmp_path / "b", {f"m{i}": "" for i in range(13)}))
    where = {n: i for i, s in enumerate(shards.assign(small, 3)) for n in s}
    after = {n: i for i, s in enumerate(shards.assign(big, 3)) for n in s}
    assert all(after[n] == where[n] for n in where)


@pytest.mark.parametrize("value", ["2/2", "-1/2", "1", "a/b", "0/0", "1/2/3"])
def test_fails_shard_out_of_range(value: str) -> None:
    with pytest.raises(TritonValidationError) as err:
        shards.parse_shard(value)
    assert err.value.code == "InvalidShard"


def test_fails_shard_with_only_or_merge(fleet: tuple[Path, Path], tmp_path: Path, capsys: Any) -> None:
    decl, one = fleet
    with pytest.raises(TritonValidationError, match="InvalidShard"):
        run_build(decl, out_dir=tmp_path / "x", shard="0/2", only="p0", progress=False)
    with pytest.raises(TritonValidationError, match="InvalidShard"):
        run_build(
            decl, out_dir=tmp_path / "x", shard="0/2", merge_manifest=[one / "manifest.json"], progress=False
        )
    assert main(["build", "--config", str(decl), "--list-shards", "0"]) == 2
    assert "[InvalidShard]" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
