"""The deprecation path of a renamed public name: a DeprecationWarning for one minor release, listed in
CHANGELOG.md, and gone when its window ends."""

from __future__ import annotations

import ast
import re
import types
import warnings
from pathlib import Path

import pytest
from packaging.version import Version

import cdk_triton
from cdk_triton import _deprecation
from cdk_triton._deprecation import Renamed, deprecated_attributes, deprecated_function, removal_version

ROOT = Path(__file__).resolve().parents[2]


def scale(x: int, *, by: int = 2) -> int:
    return x * by


class Widget:
    pass


def test_removal_is_the_next_minor_release() -> None:
    assert removal_version("0.2.0") == "0.3.0"
    assert removal_version("0.9.3") == "0.10.0"
    assert removal_version("1.4.0") == "1.5.0"


def test_fails_when_since_is_no_version() -> None:
    with pytest.raises(ValueError, match="since 'soon' is not a version"):
        removal_version("soon")


def test_a_renamed_function_warns_and_calls_the_new_one() -> None:
    old = deprecated_function(scale, old="tests.old_scale", since="0.3.0")
    with pytest.warns(DeprecationWarning) as caught:
        assert old(3, by=4) == 12
    (w,) = caught
    assert str(w.message) == (
        "tests.old_scale is deprecated since cdk-triton 0.3.0 and will be removed in 0.4.0: use "
        "tests.unit.test_deprecation.scale (see CHANGELOG.md)"
    )
    assert w.filename == __file__  # the warning points at the caller, not at the helper
    assert old.__name__ == "old_scale" and old.__wrapped__ is scale  # type: ignore[attr-defined]
    assert _deprecation.DECLARED["tests.old_scale"] == ("tests.unit.test_deprecation.scale", "0.4.0")


def test_a_renamed_attribute_warns_and_returns_the_same_object() -> None:
    module = types.ModuleType("fake_pkg")
    module.Widget = Widget  # type: ignore[attr-defined]
    module.__getattr__ = deprecated_attributes(  # type: ignore[method-assign]
        "fake_pkg", {"Gadget": Renamed(new="Widget", since="0.3.0")}, vars(module)
    )
    with pytest.warns(DeprecationWarning, match=r"fake_pkg\.Gadget is deprecated .* use fake_pkg\.Widget"):
        assert module.Gadget is Widget  # isinstance keeps working
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert module.Widget is Widget  # the new name does not warn
    with pytest.raises(AttributeError, match="module 'fake_pkg' has no attribute 'Nothing'"):
        module.Nothing  # noqa: B018


def _declared_in_source() -> dict[str, str]:
    """Old name -> since, for every use of the helpers in cdk_triton/ (read from the source, so a module
    nobody imports in this session still counts)."""
    out: dict[str, str] = {}
    for path in (ROOT / "cdk_triton").rglob("*.py"):
        if path.name == "_deprecation.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                continue
            kw = {k.arg: k.value for k in node.keywords}
            if node.func.id in ("deprecated_function", "deprecated_property"):
                out[ast.literal_eval(kw["old"])] = ast.literal_eval(kw["since"])
            elif node.func.id == "deprecated_attributes":
                module, renamed = node.args[0], node.args[1]
                prefix = path.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".")
                prefix = prefix.removesuffix(".__init__") if isinstance(module, ast.Name) else prefix
                assert isinstance(renamed, ast.Dict)
                for key, value in zip(renamed.keys, renamed.values, strict=True):
                    assert isinstance(key, ast.Constant) and isinstance(value, ast.Call)
                    since = {k.arg: k.value for k in value.keywords}["since"]
                    out[f"{prefix}.{key.value}"] = ast.literal_eval(since)
    return out


def test_every_deprecated_name_is_in_the_changelog_and_inside_its_window() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text()
    current = Version(cdk_triton.__version__)
    problems = []
    for old, since in _declared_in_source().items():
        # a deprecation of the coming release is listed under [Unreleased] until that release is cut
        heading = "Unreleased" if Version(since) > current else since
        section = re.search(rf"^## \[{re.escape(heading)}\].*?(?=^## \[|\Z)", changelog, re.M | re.S)
        if section is None or "### Deprecated" not in section.group(0) or old not in section.group(0):
            problems.append(f"{old}: not under ### Deprecated of [{heading}] in CHANGELOG.md")
        if current >= Version(removal_version(since)):
            problems.append(f"{old}: its window ended with {removal_version(since)}; remove the alias")
    assert not problems
