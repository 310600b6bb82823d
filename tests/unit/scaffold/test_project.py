"""``cdk-triton init``: what it writes, what it refuses (before writing), and the pins it carries.

The project's whole path (build, synth with cdk-nag, serve + invoke, its tests) from the wheel alone is
tests/release/test_consumer_smoke.py.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
import yaml

from cdk_triton.cli import main
from cdk_triton.config import advisories, default_release, tables
from cdk_triton.errors import TritonValidationError
from cdk_triton.scaffold import TEMPLATES, init_project, scaffold_mode
from cdk_triton.scaffold import project as scaffold

ROOT = Path(__file__).resolve().parents[3]
EXPECTED = {
    ".gitignore",
    "Makefile",
    "README.md",
    "app.py",
    "cdk.json",
    "package.json",
    "build/models.py",
    "build/models.yaml",
    "tests/test_app.py",
}


@pytest.mark.parametrize("mode", ["single", "multi", "SingleModel", "MultiModel"])
def test_writes_a_project_whose_files_parse(tmp_path: Path, mode: str) -> None:
    result = init_project(tmp_path / "app", mode=mode)
    assert set(result.files) == EXPECTED
    assert {
        p.relative_to(result.directory).as_posix() for p in result.directory.rglob("*") if p.is_file()
    } == EXPECTED
    for py in ("app.py", "build/models.py", "tests/test_app.py"):
        ast.parse((result.directory / py).read_text())
    json.loads((result.directory / "cdk.json").read_text())
    declared = yaml.safe_load((result.directory / "build" / "models.yaml").read_text())
    init = default_release.init_release()
    assert declared["triton_version"] == init.release != tables.DEFAULT_TRITON_VERSION
    (endpoint,) = declared["endpoints"]
    row = scaffold_mode(mode)
    assert row is not None
    assert endpoint["instance_types"] == [default_release.init_instance_type(multi_model=row.loads_on_demand)]
    assert endpoint["instance_types"] == (["ml.g4dn.xlarge"] if row.loads_on_demand else [init.instance_type])
    assert endpoint["inference_ami_version"] == init.inference_ami_version
    row = scaffold_mode(mode)
    assert row is not None and result.mode == row.name
    assert endpoint["name"] == TEMPLATES[row.name][1]
    assert endpoint["mode"] == row.name
    assert "{{" not in "".join((result.directory / f).read_text() for f in EXPECTED)
    assert "/build/out/" in (result.directory / ".gitignore").read_text().splitlines()


def test_the_declaration_targets_a_release_without_critical_advisories_and_acknowledges_nothing(
    tmp_path: Path,
) -> None:
    declared = yaml.safe_load((init_project(tmp_path).directory / "build" / "models.yaml").read_text())
    assert "acknowledged_advisories" not in declared and "library_acknowledgments" not in declared
    found = advisories.check_release(declared["triton_version"], acknowledged={})
    assert found.errors == [] and found.by_library == []
    # the helper still renders what an older release would need (a YAML anchor, then aliases)
    acks = yaml.safe_load("a:\n" + scaffold.acknowledgments_yaml("24.09"))["a"]
    assert advisories.check_release("24.09", acknowledged=acks).errors == []
    assert scaffold.acknowledgments_yaml("26.05") == "  {}"


def test_models_yaml_says_per_family_what_is_confirmed_third_party_or_unknown(tmp_path: Path) -> None:
    text = (init_project(tmp_path).directory / "build" / "models.yaml").read_text()
    comment = " ".join(line.strip(" #") for line in text.splitlines() if line.strip().startswith("#"))
    init = default_release.init_release()
    assert "confirmed (an AWS document lists the family): none" in comment
    assert "third-party only (g4dn, g6): an AWS sample README" in comment and "AutoGluon" in comment
    assert "unknown (no source): " in comment and "g7e" in comment and "2026-11-27" in comment
    assert f"cdk-triton advisories --release {init.release}" in comment
    assert all(len(line) <= 110 for line in text.splitlines()[1:])  # the first names the project


def test_pins_the_cdk_cli_and_tools_this_repository_pins(tmp_path: Path) -> None:
    repo_cli = json.loads((ROOT / "package.json").read_text())["devDependencies"]["aws-cdk"]
    written = json.loads((init_project(tmp_path).directory / "package.json").read_text())
    assert written["devDependencies"]["aws-cdk"] == repo_cli == scaffold.CDK_CLI_VERSION
    pins = dict(
        line.split("==") for line in (ROOT / "requirements.txt").read_text().splitlines() if "==" in line
    )
    assert (pins["cdk-nag"], pins["pytest"]) == (scaffold.CDK_NAG_VERSION, scaffold.PYTEST_VERSION)
    makefile = (tmp_path / "Makefile").read_text()
    assert "CDK_TRITON ?= cdk-triton[build,local]==" in makefile and "\ndemo: synth serve\n" in makefile


def test_fails_on_a_non_empty_directory_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(TritonValidationError, match=r"notes\.txt.*--force.*\[ScaffoldDirectoryNotEmpty\]"):
        init_project(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_force_writes_the_scaffold_and_keeps_other_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "app.py").write_text("old")
    init_project(tmp_path, force=True)
    assert (tmp_path / "notes.txt").read_text() == "mine" and "TritonEndpoint" in (
        tmp_path / "app.py"
    ).read_text()


def test_fails_on_a_file_and_an_unknown_mode_together(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(TritonValidationError) as err:
        init_project(tmp_path / "f", mode="serverless")
    assert "[UnknownScaffoldMode]" in str(err.value) and "[ScaffoldTargetNotADirectory]" in str(err.value)
    with pytest.raises(TritonValidationError, match=r"InferenceComponents.*UnknownScaffoldMode"):
        init_project(tmp_path / "ic", mode="InferenceComponents")  # a mode, but no template for it
    assert not (tmp_path / "ic").exists()


def test_the_command_names_what_it_wrote_and_exits_2_on_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["init", str(tmp_path / "p"), "--mode", "multi"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in EXPECTED) and "make demo" in out
    assert main(["init", str(tmp_path / "p")]) == 2
    assert "[ScaffoldDirectoryNotEmpty]" in capsys.readouterr().err


def test_the_advisories_command_lists_a_release_with_sources(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["advisories", "--release", "24.09"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Triton 24.09: 32 NVIDIA advisories (5 critical, 21 high, 6 medium)")
    assert "CVE-2026-16497" in text and "source: https://nvidia.custhelp.com/" in text
    assert main(["advisories", "--release", "26.05", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["counts"]["critical"] == 0 and [r["cve"] for r in data["advisories"]] == ["CVE-2026-16497"]
    assert main(["advisories", "--release", "26.5"]) == 2
    err = capsys.readouterr().err
    assert "release '26.5' is not a Triton release string" in err and "[InvalidReleaseString]" in err
