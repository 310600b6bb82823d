"""The architecture page's Layout section and glossary stay true to the tree
(``docs/contributing/architecture.md``, formerly the README's).

Every package and module of ``cdk_triton/`` is named under its package in the Layout block, every path
the block names exists, and the words the glossary gives one meaning name no other module.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "cdk_triton"
ARCHITECTURE = ROOT / "docs" / "contributing" / "architecture.md"
README = ARCHITECTURE.read_text()


def _layout_block() -> list[str]:
    section = README[README.index("\n## Layout\n") :]
    start = section.index("```\n") + 4
    return section[start : section.index("```", start)].splitlines()


def _contexts() -> dict[Path, str]:
    """Directory -> the text of the block's lines about it (indentation gives the nesting)."""
    texts: dict[Path, list[str]] = {ROOT: []}
    current = ROOT
    top = PKG
    for line in _layout_block():
        if line == "cdk_triton/":
            current = PKG
            texts.setdefault(current, [])
            continue
        if m := re.match(r"^  ([a-z_]+)/\s", line + " "):
            top = current = PKG / m.group(1)
        elif m := re.match(r"^    ([a-z_]+)/\s", line + " "):
            current = top / m.group(1)
        elif m := re.match(r"^  ([a-z_]+\.py)\s", line):
            current = PKG
        elif m := re.match(r"^([a-z_]+)/\s", line + " "):
            current = ROOT / m.group(1)
        elif re.match(r"^\S", line):
            current = ROOT
        elif re.match(r"^    [a-z_]+\.py", line):
            current = top
        texts.setdefault(current, []).append(line)
    return {d: "\n".join(lines) for d, lines in texts.items()}


def _entries(directory: Path) -> set[str]:
    """The modules (stems) and folders of ``directory`` the Layout must name."""
    out: set[str] = set()
    for p in directory.iterdir():
        if p.name in {"__pycache__", "__init__.py", "README.md", "py.typed"}:
            continue
        if p.is_dir() or p.suffix == ".py":
            out.add(p.stem)
    return out


def test_every_package_and_module_of_cdk_triton_is_named_under_its_package() -> None:
    contexts = _contexts()
    missing: list[str] = []
    for directory in [PKG, *sorted(d for d in PKG.rglob("*") if d.is_dir() and (d / "__init__.py").exists())]:
        text = contexts.get(directory)
        if text is None:
            missing.append(f"{directory.relative_to(ROOT)}/ has no entry")
            continue
        words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
        named = words | {d.name for d in contexts if d.parent == directory}
        missing += [f"{directory.relative_to(ROOT)}/{e}" for e in sorted(_entries(directory) - named)]
    assert not missing, f"{ARCHITECTURE.name}'s Layout does not name: {missing}"


def test_every_path_the_layout_names_exists() -> None:
    wrong: list[str] = []
    for directory, text in _contexts().items():
        for token in re.findall(r"(?<![\w/.-])([a-z_]+(?:\.py|/))(?=[\s,;:)]|$)", text, re.M):
            base = directory if (directory / token).exists() else directory.parent
            if not (base / token).exists() and not (ROOT / token).exists():
                wrong.append(f"{token} (under {directory.relative_to(ROOT) or '.'})")
        for target in re.findall(r"-> (\S+README\.md)", text):
            if not (PKG / target).exists() and not (ROOT / target).exists():
                wrong.append(target)
    assert not wrong, f"{ARCHITECTURE.name}'s Layout names paths that do not exist: {wrong}"


def _glossary() -> dict[str, str]:
    section = README[README.index("\n## Glossary\n") :]
    rows = re.findall(r"^\| ([^|]+?) \| [^|]+ \| ([^|]+) \|$", section, re.M)
    return {word: where for word, where in rows if word not in {"word", "---"}}


def test_the_glossary_points_at_existing_places() -> None:
    glossary = _glossary()
    assert {"declaration", "spec", "plan", "pipeline", "preflight", "steps", "format", "layout"} <= set(
        glossary
    )
    for word, where in glossary.items():
        for path in re.findall(r"`([^`]+)`", where):
            assert list(ROOT.glob(path.rstrip("/"))), f"glossary '{word}': {path} does not exist"


def test_spec_plan_and_pipeline_each_name_one_thing() -> None:
    modules = [p for p in PKG.rglob("*") if p.name != "__pycache__" and (p.is_dir() or p.suffix == ".py")]
    rel = [p.relative_to(PKG).as_posix() for p in modules]
    assert not [r for r in rel if "spec" in Path(r).stem], "a module named 'spec': see the glossary"
    assert not [r for r in rel if "plan" in Path(r).stem], "'plan' is TensorRT's word: see the glossary"
    assert sorted(r for r in rel if "pipeline" in Path(r).stem) == ["pipeline", "pipeline/pipeline.py"]
    spec_classes = {
        f"{p.relative_to(PKG)}:{node.name}"
        for p in PKG.rglob("*.py")
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.ClassDef) and node.name.endswith("Spec")
    }
    assert {c.split(":")[1] for c in spec_classes} == {
        "BuildSpec",
        "ModelSpec",
        "TensorSpec",
        "EndpointSpec",
        "SampleSpec",
    }
    assert all(c.startswith("config/declaration/") for c in spec_classes), spec_classes
