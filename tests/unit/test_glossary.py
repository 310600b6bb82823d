"""Function names keep the glossary's one meaning per word.

The glossary table (``docs/contributing/architecture.md`` where it exists, else the README's
``### Glossary``: the same ``| word | means | lives in |`` table) gives some words one meaning:

- a word whose meaning says no function is named after it (``spec``: only the five declaration
  classes) names no function;
- a word that means one thing "and nothing else" (``plan``: a TensorRT engine file) names only
  functions about that thing: in the place the glossary says it lives, or whose name also names its
  subject (``check_tensorrt_plans_exist``); a docstring does not make a name say what it means.

``tests/unit/test_layout_doc.py`` checks module and class names; this checks functions and methods.
The constructs package is left to its owner (it renames its own) and joins once its names are clean.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "cdk_triton"
ARCHITECTURE = ROOT / "docs" / "contributing" / "architecture.md"
#: packages whose owners adopt this check on their own
NOT_YET = ("constructs",)


@dataclass(frozen=True)
class Rule:
    word: str
    means: str
    lives_in: tuple[str, ...]

    @property
    def no_function(self) -> bool:
        """The meaning says no function is named after the word."""
        return bool(re.search(r"\bno\b[^.;]*\bfunction\b[^.;]*\bnamed\b", self.means))

    @property
    def only(self) -> bool:
        return "and nothing else" in self.means

    @property
    def subject(self) -> str:
        """The meaning's proper noun (``TensorRT`` of "a TensorRT engine file")."""
        return next((w for w in re.findall(r"[\w-]+", self.means.split("(")[0]) if w != w.lower()), self.word)


def glossary_text() -> str:
    if ARCHITECTURE.exists():
        return ARCHITECTURE.read_text()
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### Glossary") + len("### Glossary") :]
    return re.split(r"\n##+ ", section, maxsplit=1)[0]


def rules(text: str) -> dict[str, Rule]:
    rows = re.findall(r"^\| ([^|]+?) \| ([^|]+?) \| ([^|]+?) \|$", text, re.M)
    return {
        word: Rule(word=word, means=means, lives_in=tuple(re.findall(r"`([^`]+)`", where)))
        for word, means, where in rows
        if word not in {"word", "---"} and not set(word) <= {"-", " "}
    }


def _uses(name: str, word: str) -> bool:
    tokens = name.strip("_").lower().split("_")
    return any(t in (word, f"{word}s", f"{word}ned", f"{word}ning") for t in tokens)


def violations(rule: Rule, path: str, source: str) -> list[str]:
    """The functions of ``source`` (at ``path``, relative to the root) whose names break ``rule``."""
    if not (rule.no_function or rule.only):
        return []
    tree = ast.parse(source)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or not _uses(node.name, rule.word):
            continue
        if rule.no_function:
            out.append(f"{path}:{node.lineno} {node.name}")
            continue
        home = any(path.startswith(p.rstrip("/")) for p in rule.lives_in)
        if not home and rule.subject.lower() not in node.name.lower():
            out.append(f"{path}:{node.lineno} {node.name}")
    return out


def test_the_glossary_has_the_rules_this_checks() -> None:
    found = rules(glossary_text())
    assert found["spec"].no_function and not found["spec"].only
    assert found["plan"].only and found["plan"].subject == "TensorRT"


def test_the_check_sees_each_kind_of_broken_name() -> None:
    spec, plan = rules(glossary_text())["spec"], rules(glossary_text())["plan"]
    src = '"""A module."""\ndef load_spec(): ...\ndef plan_jobs(): ...\ndef check_tensorrt_plans(): ...\n'
    assert violations(spec, "cdk_triton/builder/x.py", src) == ["cdk_triton/builder/x.py:2 load_spec"]
    assert violations(plan, "cdk_triton/builder/x.py", src) == ["cdk_triton/builder/x.py:3 plan_jobs"]
    documented = 'def _plans(m):\n    """The TensorRT plans of m."""\n'
    assert violations(plan, "cdk_triton/builder/x.py", documented) == ["cdk_triton/builder/x.py:1 _plans"]
    assert violations(plan, "cdk_triton/builder/export/tensorrt.py", documented) == []  # its home


def test_function_names_keep_the_glossary() -> None:
    found = [
        hit
        for rule in rules(glossary_text()).values()
        for path in sorted(PKG.rglob("*.py"))
        if path.relative_to(PKG).parts[0] not in NOT_YET
        for hit in violations(rule, path.relative_to(ROOT).as_posix(), path.read_text())
    ]
    assert not found, f"rename these (keep a public name as a deprecated alias): {found}"
