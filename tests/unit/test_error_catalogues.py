"""One catalogue per code, in the lowest layer that raises it; the README tables are generated from them.

A static scan of ``cdk_triton`` finds every code a module raises (``code=...`` keywords and defaults,
the first argument of ``TritonValidationError`` and of the error factories, a ``BuildError`` or
``LocalServerError`` without a code); each must be in its package's catalogue or in the config codes
that package surfaces. Rewrite the README tables after changing a catalogue with
``.venv/bin/python -m docs.error_tables`` (the generators live there: the docs build imports nothing
from ``tests/``).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import pytest

from cdk_triton.builder import errors as builder_errors
from cdk_triton.capacity import errors as capacity_errors
from cdk_triton.config import errors as config_errors
from cdk_triton.constructs import errors as construct_errors
from cdk_triton.local import errors as local_errors
from cdk_triton.pipeline import errors as pipeline_errors
from cdk_triton.registry import errors as registry_errors
from cdk_triton.scaffold import errors as scaffold_errors
from cdk_triton.tune import errors as tune_errors
from docs.error_tables import OWNED, TABLES, rewrite

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "cdk_triton"

#: package -> the config codes it raises or re-raises.
SURFACED: dict[str, Mapping[str, str]] = {
    "config": {},
    "builder": builder_errors.SURFACED,
    "constructs": construct_errors.SURFACED,
    "local": local_errors.SURFACED,
    "pipeline": pipeline_errors.SURFACED,
    "tune": tune_errors.SURFACED,
    "registry": registry_errors.SURFACED,
    "capacity": capacity_errors.SURFACED,
    "scaffold": scaffold_errors.SURFACED,
}

#: Calls whose n-th positional argument is an error code.
FACTORIES = {
    "TritonValidationError": 0,
    "ManifestError": 0,
    "catalogued": 0,
    "validation_error": 1,
    "add": 0,  # config.parse.Errors.add
    "problem": 0,  # config.parse.problem
    "_problem": 0,
    "_untrusted": 0,
    "one_of": 5,
    "_bad": 5,
    "aws_error": 1,  # the local front's SageMaker error types
}
#: Error classes with a default code, used when a raise names none.
DEFAULT_CODES = {"BuildError": "BuildFailed", "LocalServerError": "LocalServerFailed"}


def raised_codes(source: str) -> set[str]:
    """The codes a module's source raises (see the module docstring for what is recognized)."""
    codes: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.arguments):
            named = [*node.posonlyargs, *node.args][-len(node.defaults) :] if node.defaults else []
            pairs = [
                *zip(named, node.defaults, strict=True),
                *zip(node.kwonlyargs, node.kw_defaults, strict=True),
            ]
            codes |= {
                d.value
                for a, d in pairs
                if a.arg == "code" and isinstance(d, ast.Constant) and isinstance(d.value, str)
            }
        if not isinstance(node, ast.Call):
            continue
        func = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        position = FACTORIES.get(func)
        if position is not None and len(node.args) > position:
            arg = node.args[position]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                codes.add(arg.value)
        keywords = {k.arg: k.value for k in node.keywords}
        code = keywords.get("code")
        if isinstance(code, ast.Constant) and isinstance(code.value, str):
            codes.add(code.value)
        elif func in DEFAULT_CODES and "code" not in keywords:
            codes.add(DEFAULT_CODES[func])
    return codes


def _raised_by_package() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if len(rel.parts) == 1 or rel.parts[1] == "errors.py":
            continue  # cli.py, errors.py: no codes of their own; each errors.py defines classes
        out.setdefault(rel.parts[0], set()).update(raised_codes(path.read_text()))
    return {package: codes for package, codes in out.items() if codes}  # demo/ raises none of its own


def test_the_scan_sees_every_kind_of_raise() -> None:
    source = (
        'raise TritonValidationError("A", prop="p")\nraise BuildError("m", code="B")\nraise BuildError("m")\n'
        'errs.add("C", "p")\nreturn aws_error(400, "D", "m")\nvalidation_error(self, "E", prop="p")\n'
        'def f(code: str = "F"): ...\ndef g(*, code="G"): ...\n'
    )
    assert raised_codes(source) == {"A", "B", "BuildFailed", "C", "D", "E", "F", "G"}


def test_no_code_is_catalogued_twice() -> None:
    seen: dict[str, str] = {}
    for package, codes in OWNED.items():
        for code in codes:
            assert code not in seen, f"{code} is catalogued by {seen.get(code)} and {package}"
            seen[code] = package


@pytest.mark.parametrize("package", sorted(SURFACED))
def test_surfaced_codes_are_imported_from_config_with_its_text(package: str) -> None:
    for code, text in SURFACED[package].items():
        assert config_errors.ALL_CODES[code] == text
    assert not set(SURFACED[package]) & set(OWNED[package])


def test_every_raised_code_is_catalogued() -> None:
    raised = _raised_by_package()
    assert set(raised) == set(OWNED), sorted(set(raised) ^ set(OWNED))
    for package, codes in raised.items():
        missing = codes - set(OWNED[package]) - set(SURFACED[package])
        assert not missing, f"{package} raises codes it does not catalogue: {sorted(missing)}"


def test_every_catalogued_code_is_raised_where_catalogued() -> None:
    raised = _raised_by_package()
    for package, codes in OWNED.items():
        unraised = set(codes) - raised[package]
        if package == "config":  # or a rule two sibling layers check alike
            unraised = {c for c in unraised if sum(c in r for r in raised.values()) < 2}
        assert not unraised, f"{package} catalogues codes it never raises: {sorted(unraised)}"


def test_config_owns_each_code_raised_in_two_layers() -> None:
    raised = _raised_by_package()
    layers = ("config", "builder", "constructs", "local", "pipeline")
    for code in set().union(*raised.values()):
        where = [p for p in layers if code in raised.get(p, set())]
        if len(where) > 1:
            assert code in config_errors.ALL_CODES, (code, where)


# ---------------------------------------------------------------------------- README tables


@pytest.mark.parametrize("readme", sorted(TABLES))
def test_readme_error_table_is_generated_from_the_catalogue(readme: str) -> None:
    name, table = TABLES[readme]
    text = (ROOT / readme).read_text()
    assert config_errors.replace_generated(text, name, table()) == text, (
        f"{readme}: the error table is stale; run .venv/bin/python -m docs.error_tables"
    )


def test_a_stale_table_is_found() -> None:
    text = "intro\n<!-- errors:x -->\n| old |\n<!-- /errors:x -->\nafter\n"
    assert config_errors.replace_generated(text, "x", "| new |\n") == (
        "intro\n<!-- errors:x -->\n| new |\n<!-- /errors:x -->\nafter\n"
    )
    with pytest.raises(ValueError, match="no <!-- errors:y -->"):
        config_errors.replace_generated(text, "y", "")


if __name__ == "__main__":
    rewrite()
