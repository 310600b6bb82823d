"""The library as users install it.

Metadata (fast, no network): the ranges of ``[project.dependencies]`` and every extra follow the rules
written at the top of pyproject.toml, no floor admits a version listed in the vendored advisory snapshot
(tests/fixtures/advisories.json), the ranges admit what GPU workstations run, the pinned suite's versions
lie inside them, one source of the version, a changelog naming this release.

Release artifacts (marker ``release``, about half a minute; ``-m 'not release'`` skips them locally, CI runs
them under ``make test``): from a copy of the tracked tree, an sdist, a wheel built from that sdist, both
with valid core metadata; the wheel installed alone into a clean venv, run from a folder outside the
checkout, imports, carries its data files, schemas and the Lambda handlers the constructs package, and
runs ``cdk-triton --help``; the example's build/ folder holds only its tracked files afterwards.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tarfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path
from typing import Any

import pytest
from packaging.metadata import Metadata
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

import cdk_triton
from tests.release_artifacts import run as _run

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
ADVISORIES = json.loads((ROOT / "tests" / "fixtures" / "advisories.json").read_text())

#: exact pins allowed in the library's metadata: the version is part of an artifact's contract
CONTRACT_PINS = {
    "nvidia-pytriton": "the bundled tritonserver 2.51 the local stand-ins are checked against",
    "tensorrt": "a plan only loads in the TensorRT it was built with (the default release's 10.4.0)",
}
#: ceilings allowed, each a known break
KNOWN_BREAKS = {
    ("build", "protobuf"): "tritonclient 2.73[grpc] requires protobuf < 7",
    ("local", "numpy"): "nvidia-pytriton 0.7.0 requires numpy < 2",
}
#: what users run (issue 31: the GPU host of late 2026) and what the lanes test: the build extra admits it
USERS_RUN = {
    "torch": ["2.11.0+cu130", "2.12.0", "2.13.0+cpu", "2.14.1"],
    "numpy": ["1.26.4", "2.4.6", "2.5.0"],
    "transformers": ["4.57.6", "5.17.0", "5.24.0"],
    "onnxruntime": ["1.30.0", "1.32.0"],
}


def _requirements() -> dict[str, list[Requirement]]:
    """Extra ('' for the core dependencies) -> its requirements, without the self-references."""
    project = PYPROJECT["project"]
    out = {"": [Requirement(r) for r in project["dependencies"]]}
    for extra, reqs in project["optional-dependencies"].items():
        out[extra] = [Requirement(r) for r in reqs if not r.startswith("cdk-triton[")]
    return out


def _floor_candidates(req: SpecifierSet, affected: SpecifierSet) -> list[Version]:
    """The versions where a range can first meet an affected range: each version either names."""
    out = []
    for spec in [*req, *affected]:
        v = Version(spec.version.replace(".*", ""))
        out += [v, Version(f"{v.base_version}.post1")] if spec.operator == ">" else [v]
    return out


def admitted_advisories(requirement: str) -> list[str]:
    """The advisories of the snapshot whose affected range ``requirement`` admits (by id)."""
    req = Requirement(requirement)
    hits = []
    for adv in ADVISORIES["advisories"]:
        if canonicalize_name(adv["package"]) != canonicalize_name(req.name):
            continue
        affected = SpecifierSet(adv["affected"])
        if not any(op.operator in (">=", "==", "~=", ">", "===") for op in req.specifier):
            hits.append(adv["id"])  # no floor: every affected version is admitted
            continue
        if any(
            req.specifier.contains(v, prereleases=True) and affected.contains(v, prereleases=True)
            for v in _floor_candidates(req.specifier, affected)
        ):
            hits.append(adv["id"])
    return hits


def test_no_floor_admits_a_version_with_a_listed_advisory() -> None:
    bad = {
        f"{extra or 'dependencies'}: {r}": admitted_advisories(str(r))
        for extra, reqs in _requirements().items()
        for r in reqs
    }
    assert not {k: v for k, v in bad.items() if v}


def test_the_advisory_check_fails_on_the_floors_of_0_1_0() -> None:
    # the floors issue 31 found: aiohttp>=3.14 admits 3.14.0-3.14.3, onnx>=1.17 the versions before 1.21.0
    assert admitted_advisories("aiohttp>=3.14,<4") == ["unknown (not found)"]
    assert "CVE-2026-34445" in admitted_advisories("onnx>=1.17")
    assert admitted_advisories("aiohttp") and admitted_advisories("onnx<2")
    assert not admitted_advisories("aiohttp>=3.14.4") and not admitted_advisories("onnx>=1.21.0")


def test_every_advisory_row_says_where_it_was_read_and_whether_it_is_confirmed() -> None:
    for adv in ADVISORIES["advisories"]:
        assert adv["source"].startswith("https://") and adv["read"] == "2026-11-27", adv
        assert isinstance(adv["confirmed"], bool) and (adv["confirmed"] or adv.get("note")), adv
        SpecifierSet(adv["affected"])
        assert not SpecifierSet(adv["affected"]).contains(adv["fixed"]), adv


@pytest.mark.parametrize("package", sorted(USERS_RUN))
def test_the_build_extra_admits_what_users_run(package: str) -> None:
    (req,) = [r for r in _requirements()["build"] if canonicalize_name(r.name) == package]
    refused = [v for v in USERS_RUN[package] if not req.specifier.contains(v, prereleases=True)]
    assert not refused, f"{req} refuses {refused}"


def test_exact_pins_and_ceilings_only_where_a_contract_or_a_known_break_says_so() -> None:
    wrong = []
    for extra, reqs in _requirements().items():
        if extra == "dev":
            continue
        for r in reqs:
            ops = {s.operator for s in r.specifier}
            name = canonicalize_name(r.name)
            if ops & {"==", "==="} and name not in CONTRACT_PINS:
                wrong.append(f"{extra}: {r} is an exact pin")
            if ops & {"<", "<=", "~="} and (extra, name) not in KNOWN_BREAKS:
                wrong.append(f"{extra}: {r} has a ceiling")
            if not ops & {">=", "==", "~="}:
                wrong.append(f"{extra}: {r} has no floor")
    assert not wrong


def test_every_requirement_line_of_the_metadata_carries_its_reason() -> None:
    """Each line of a dependency list has a comment on it or just above it."""
    text = (ROOT / "pyproject.toml").read_text()
    project = text[text.index("\n[project]\n") : text.index("\n[project.scripts]")]
    missing = []
    lines = project.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r'^\s+"([A-Za-z0-9_.\[\],-]+[^"]*)",', line)
        if not m or m.group(1).startswith("cdk-triton[") or "Programming Language" in line:
            continue
        if "::" in m.group(1):
            continue  # a classifier
        if "#" not in line and not lines[i - 1].strip().startswith("#"):
            missing.append(m.group(1))
    dev = PYPROJECT["project"]["optional-dependencies"]["dev"]
    assert [m for m in missing if m not in dev] == []


def test_the_pinned_suite_runs_versions_the_metadata_admits() -> None:
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version.strip()
    outside = []
    for extra, reqs in _requirements().items():
        for r in reqs:
            pinned = pins.get(canonicalize_name(r.name))
            if pinned is None:
                continue  # tensorrt: GPU only, not in the CPU suite
            if not r.specifier.contains(pinned, prereleases=True):
                outside.append(f"{extra}: {r} vs requirements.txt {pinned}")
    assert not outside


def test_one_source_of_the_version_and_a_changelog_that_names_it() -> None:
    assert "version" not in PYPROJECT["project"] and PYPROJECT["project"]["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "cdk_triton.__version__"}
    version = cdk_triton.__version__
    Version(version)
    changelog = (ROOT / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", changelog, re.M)
    assert releases[0] == ("Unreleased", "") and releases[1][0] == version and releases[1][1]


# ---------------------------------------------------------------------------------------------- artifacts


# the `artifacts` fixture (session-scoped, shared with tests/release): tests/release_artifacts.py


@pytest.mark.release
def test_pip_wheel_leaves_build_folder_as_tracked(artifacts: dict[str, Any]) -> None:
    src, tracked = artifacts["src"], artifacts["tracked"]
    in_build = sorted(str(p.relative_to(src)) for p in (src / "build").rglob("*") if p.is_file())
    assert in_build == sorted(p for p in tracked if p.startswith("build/") and (ROOT / p).is_file())


#: files a user's install needs besides the modules (read at runtime through importlib.resources or a
#: path next to the module)
RUNTIME_DATA = [
    "cdk_triton/py.typed",
    "cdk_triton/config/data/triton-releases.json",
    "cdk_triton/config/data/manifest.schema.json",
    "cdk_triton/config/data/inference-components.json",
    "cdk_triton/constructs/handlers/verify/index.py",
    "cdk_triton/pipeline/handlers/promotion/index.py",
    "cdk_triton/pipeline/docker/Dockerfile",
    "cdk_triton/pipeline/data/cdk-triton-deploy-policy.json",
    "cdk_triton/local/backends/onnxruntime/model.py",
    "cdk_triton/local/backends/pytorch/model.py",
    # cdk-triton init's project files
    *(
        f"cdk_triton/scaffold/templates/{t}"
        for t in ("Makefile.tmpl", "models.single.yaml.tmpl", "gitignore.tmpl")
    ),
]


def _package_files() -> set[str]:
    """Every file under cdk_triton/ the checkout tracks, with the handler symlinks followed."""
    out = set()
    for p in (ROOT / "cdk_triton").rglob("*"):
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc" and p.name != "README.md":
            out.add(p.relative_to(ROOT).as_posix())
    return out


@pytest.mark.release
def test_the_wheel_holds_the_package_its_data_and_the_lambda_code(artifacts: dict[str, Any]) -> None:
    names = set(zipfile.ZipFile(artifacts["wheel"]).namelist())
    assert set(RUNTIME_DATA) <= names
    assert _package_files() - names == set()
    assert not [n for n in names if n.startswith(("build/", "tests/", "bench/", "lambda/", "node_modules/"))]
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    wheel_handler = zipfile.ZipFile(artifacts["wheel"]).read("cdk_triton/constructs/handlers/verify/index.py")
    assert wheel_handler == (ROOT / "lambda" / "verify" / "index.py").read_bytes()


@pytest.mark.release
def test_the_sdist_holds_what_a_source_build_needs_and_nothing_it_must_not(artifacts: dict[str, Any]) -> None:
    with tarfile.open(artifacts["sdist"]) as tar:
        members = [m.name.split("/", 1)[1] for m in tar.getmembers() if m.isfile() and "/" in m.name]
    names = set(members)
    assert {"pyproject.toml", "README.md", "CHANGELOG.md", "PKG-INFO"} <= names
    assert set(RUNTIME_DATA) <= names and _package_files() - names == set()
    forbidden = re.compile(
        r"(^|/)(__pycache__|\.pytest_cache|\.mypy_cache|\.ruff_cache|node_modules|\.venv[^/]*|cdk\.out[^/]*|"
        r"\.setuptools-build|\.cdk-triton|\.git)/|^build/out/|^dist/|^tests/|\.pyc$"
    )
    assert [n for n in names if forbidden.search(n)] == []


def _metadata(text: str) -> Metadata:
    return Metadata.from_email(text, validate=True)


@pytest.mark.release
def test_both_artifacts_carry_valid_and_equal_core_metadata(artifacts: dict[str, Any]) -> None:
    """What ``twine check`` checks (packaging.metadata validates every field the way PyPI reads it)."""
    wheel = zipfile.ZipFile(artifacts["wheel"])
    version = cdk_triton.__version__
    wheel_meta = _metadata(wheel.read(f"cdk_triton-{version}.dist-info/METADATA").decode())
    with tarfile.open(artifacts["sdist"]) as tar:
        member = tar.extractfile(f"cdk_triton-{version}/PKG-INFO")
        assert member is not None
        sdist_meta = _metadata(member.read().decode())
    for meta in (wheel_meta, sdist_meta):
        assert (meta.name, str(meta.version)) == ("cdk-triton", version)
        assert meta.description_content_type == "text/markdown" and meta.description
        assert meta.summary and meta.license_expression == "Apache-2.0"
        assert str(meta.requires_python) == ">=3.11"
    assert sorted(map(str, wheel_meta.requires_dist or [])) == sorted(
        map(str, sdist_meta.requires_dist or [])
    )
    assert set(wheel_meta.provides_extra or []) == set(PYPROJECT["project"]["optional-dependencies"])
    entry = wheel.read(f"cdk_triton-{version}.dist-info/entry_points.txt").decode()
    assert "cdk-triton = cdk_triton.cli:main" in entry
    assert Parser().parsestr(wheel.read(f"cdk_triton-{version}.dist-info/WHEEL").decode())["Root-Is-Purelib"]


CHECK_DATA = r"""
import importlib.resources as r, json, sys, pathlib
import cdk_triton
from cdk_triton.config import tables
root = pathlib.Path(cdk_triton.__file__).resolve().parent
print(json.dumps({
    "file": cdk_triton.__file__,
    "version": cdk_triton.__version__,
    "release": tables.release("24.09").tensorrt.value,
    "schema": json.loads(r.files("cdk_triton.config").joinpath("data", "manifest.schema.json").read_text())["type"],
    "handlers": [p for p in ("constructs/handlers/verify/index.py", "pipeline/handlers/promotion/index.py")
                 if (root / p).is_file() and not (root / p).is_symlink()],
    "path": sys.path,
}))
"""


@pytest.mark.release
def test_the_wheel_alone_installs_imports_and_runs_the_cli(artifacts: dict[str, Any]) -> None:
    tmp = artifacts["tmp"]
    venv = tmp / "venv"
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}}
    env["PYTHONNOUSERSITE"] = "1"
    _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], tmp, env)
    py = venv / "bin" / "python"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(py),
            "install",
            "-q",
            "--no-deps",
            "--no-index",
            str(artifacts["wheel"]),
        ],
        tmp,
        env,
    )
    away = tmp / "elsewhere"
    away.mkdir()
    info = json.loads(_run([str(py), "-c", CHECK_DATA], away, env))
    assert Path(info["file"]).resolve().is_relative_to(venv.resolve()), info["file"]
    assert not [p for p in info["path"] if p and Path(p).resolve().is_relative_to(ROOT)]
    assert info["version"] == cdk_triton.__version__
    assert info["release"] == "10.4.0" and info["schema"] == "object"
    assert len(info["handlers"]) == 2
    out = _run([str(venv / "bin" / "cdk-triton"), "--help"], away, env)
    assert "usage: cdk-triton" in out and "build" in out
