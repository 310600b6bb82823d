"""A merge of shard manifests checks the set (issue 30): a shard manifest records its ``I/N``; a set that
misses a shard or a declared model is ``IncompleteShardSet`` before anything is written, unless
``--build-missing`` lets the merge export them (each a warning, counted apart); shard specs are bounded
by the declaration's shard groups, answered at once."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from cdk_triton.builder import run_build, shards
from cdk_triton.builder.declarations import load_declaration
from cdk_triton.cli import main
from cdk_triton.config.manifest import read_manifest
from cdk_triton.errors import BuildError, TritonValidationError
from tests.unit.builder.test_parallel import digests
from tests.unit.builder.test_shards import fleet  # noqa: F401  (the module's fixture)


@pytest.fixture(scope="module")
def three(fleet: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> list[Path]:  # noqa: F811
    """The fleet built as shards 0, 1 and 2 of 3: their manifests."""
    decl, _ = fleet
    tmp = tmp_path_factory.mktemp("three")
    out = []
    for i in range(3):
        run_build(decl, out_dir=tmp / f"s{i}", progress=False, shard=f"{i}/3")
        out.append(tmp / f"s{i}" / "manifest.json")
    return out


def test_a_shard_manifest_records_its_shard_and_schema_4(three: list[Path]) -> None:
    for i, path in enumerate(three):
        data = json.loads(path.read_text())
        assert data["schema_version"] == 4
        assert data["shard"] == {"index": i, "count": 3}
        assert read_manifest(path).shard is not None and read_manifest(path).shard.arg == f"{i}/3"  # type: ignore[union-attr]


def test_a_merge_missing_a_shard_fails_naming_the_shard_and_its_models(
    fleet: tuple[Path, Path],  # noqa: F811
    three: list[Path],
    tmp_path: Path,
) -> None:
    decl, _ = fleet
    plan = shards.assign(load_declaration(decl), 3)
    with pytest.raises(BuildError) as err:
        run_build(decl, out_dir=tmp_path / "m", progress=False, merge_manifest=three[:2])
    assert err.value.code == "IncompleteShardSet"
    assert "shards missing: 2/3" in str(err.value)
    for n in plan[2]:
        assert n in str(err.value)
    assert "--build-missing" in str(err.value)
    assert not (tmp_path / "m").exists()  # raised before anything is written


def test_build_missing_exports_them_with_a_warning_each_counted_apart(
    fleet: tuple[Path, Path],  # noqa: F811
    three: list[Path],
    tmp_path: Path,
    capsys: Any,
) -> None:
    decl, one = fleet
    plan = shards.assign(load_declaration(decl), 3)
    result = run_build(
        decl, out_dir=tmp_path / "m", progress=False, merge_manifest=three[:2], build_missing=True
    )
    assert sorted(result.built_missing) == sorted(plan[2])
    assert result.exported == len(plan[2])
    for n in plan[2]:
        assert any(f"model '{n}' is in no merged shard manifest" in w for w in result.warnings)
    assert digests(tmp_path / "m") == digests(one)  # still the bytes of one build
    # the CLI says it in its summary
    args = ["build", "--config", str(decl), "--no-progress", "--jobs", "1", "--out", str(tmp_path / "c")]
    merge = [a for p in three[:2] for a in ("--merge-manifest", str(p))]
    assert main([*args, *merge]) == 1
    assert "[IncompleteShardSet]" in capsys.readouterr().err
    assert main([*args, *merge, "--build-missing"]) == 0
    assert f"({len(plan[2])} of them in no merged shard: --build-missing)" in capsys.readouterr().out


def test_a_model_in_no_shard_fails_even_when_every_shard_is_there(
    fleet: tuple[Path, Path],  # noqa: F811
    three: list[Path],
    tmp_path: Path,
) -> None:
    decl, _ = fleet
    # shard 0 with one of its models dropped from its manifest: every shard is present, a model is not
    data = json.loads(three[0].read_text())
    dropped = sorted(data["models"])[0]
    del data["models"][dropped]
    copy = three[0].parent / "manifest-dropped.json"
    copy.write_text(json.dumps(data))
    with pytest.raises(BuildError) as err:
        run_build(decl, out_dir=tmp_path / "m", progress=False, merge_manifest=[copy, *three[1:]])
    assert err.value.code == "IncompleteShardSet"
    assert "shards missing: none" in str(err.value) and f"shard 0/3: {dropped}" in str(err.value)


def test_shards_of_two_plans_do_not_merge(
    fleet: tuple[Path, Path],  # noqa: F811
    three: list[Path],
    tmp_path: Path,
) -> None:
    decl, _ = fleet
    run_build(decl, out_dir=tmp_path / "two", progress=False, shard="0/2")
    with pytest.raises(BuildError, match="plans of different N") as err:
        run_build(
            decl,
            out_dir=tmp_path / "m",
            progress=False,
            merge_manifest=[*three, tmp_path / "two/manifest.json"],
        )
    assert err.value.code == "IncompleteShardSet"


def test_a_whole_build_or_a_schema_3_manifest_is_not_a_shard_set(
    fleet: tuple[Path, Path],  # noqa: F811
    three: list[Path],
    tmp_path: Path,
) -> None:
    """The GPU build's manifest (a whole build of some formats) and pre-shard manifests merge as before:
    what they lack is built here (the split build's rule), without a set check."""
    decl, _ = fleet
    data = json.loads(three[0].read_text())
    data["schema_version"] = 3
    del data["shard"]
    old = three[0].parent / "manifest-v3.json"
    old.write_text(json.dumps(data))
    assert read_manifest(old).shard is None
    result = run_build(decl, out_dir=tmp_path / "m", progress=False, merge_manifest=[old])
    assert result.built_missing == [] and result.exported > 0


def test_a_huge_shard_count_is_refused_at_once_naming_the_group_count(
    fleet: tuple[Path, Path],  # noqa: F811
    tmp_path: Path,
    capsys: Any,
) -> None:
    decl, _ = fleet
    groups = len(shards.groups(load_declaration(decl)))
    t0 = time.perf_counter()
    with pytest.raises(TritonValidationError) as err:
        run_build(decl, out_dir=tmp_path / "x", shard="0/100000000000000000000", progress=False)
    assert time.perf_counter() - t0 < 10  # was: minutes (a weight per shard per group)
    assert err.value.code == "InvalidShard" and f"has {groups} shard groups" in str(err.value)
    with pytest.raises(TritonValidationError, match=f"N from 1 to {groups}"):
        run_build(decl, out_dir=tmp_path / "x", shard=f"0/{groups + 1}", progress=False)
    run_build(decl, out_dir=tmp_path / "ok", shard=f"0/{groups}", progress=False)  # at the bound: fine
    assert main(["build", "--config", str(decl), "--list-shards", "100000000000000000000"]) == 2
    assert "[InvalidShard]" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
