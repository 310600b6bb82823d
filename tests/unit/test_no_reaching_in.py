"""No module reaches into another's privates: what another module needs is public where it is owned.

Walks every module of ``cdk_triton`` (and ``lambda/``) with ``ast`` and fails on ``from x import _name``
and on ``x._name`` where ``x`` is a module imported from this package (dunder names and a module's own
privates are fine). What other areas still do is listed in ``ALLOWED`` with its file:line, to shrink:
an entry that no longer matches fails too, so the list only gets shorter.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "cdk_triton"
LAMBDA = ROOT / "lambda"

#: Known violations outside the constructs' area, as "path:line name" (shrink it; never add to it).
ALLOWED: frozenset[str] = frozenset(
    {
        # torch.jit's own ``_c`` (a ScriptModule's C++ module), not a name of this package
        "cdk_triton/builder/portability.py:84 sub._c",
    }
)


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _package_private_module(source: str, name: str, here: str, root: Path) -> bool:
    """``from pkg import _mod`` of a private module, by a module inside ``pkg``: the package's own."""
    target = root.joinpath(*source.split("."), name)
    is_module = target.with_suffix(".py").is_file() or (target / "__init__.py").is_file()
    return is_module and (here == source or here.startswith(source + "."))


def defined_privates(tree: ast.AST) -> set[str]:
    """Private names a module defines: functions, methods, classes, ``self._x`` and ``_x`` assignments."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Attribute):
            names.add(node.target.attr)
    return {n for n in names if _private(n)}


def _module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(module: str | None, level: int, here: str, is_package: bool) -> str:
    if level == 0:
        return module or ""
    base = here.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join([*base, *([module] if module else [])])


def violations(
    path: Path, *, root: Path = ROOT, others: frozenset[str] = frozenset(), tree: ast.AST | None = None
) -> list[str]:
    """``path:line name`` of every private name of another module this file imports or reads: from an
    import, through a module of the package, or as an attribute (not of ``self``/``cls``) that only
    other modules define (``others``: the private names the package's other modules define)."""
    tree = tree if tree is not None else ast.parse(path.read_text(), filename=str(path))
    here = _module_name(path, root)
    is_package = path.name == "__init__.py"
    rel = path.relative_to(root).as_posix()
    own = defined_privates(tree)
    found: list[str] = []
    module_aliases: set[str] = set()  # local names bound to modules of this package
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _resolve(node.module, node.level, here, is_package)
            if not source.startswith("cdk_triton") or source == here:
                continue
            for alias in node.names:
                if _private(alias.name) and not _package_private_module(source, alias.name, here, root):
                    found.append(f"{rel}:{node.lineno} {source}.{alias.name}")
                else:
                    module_aliases.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("cdk_triton"):
                    if any(_private(p) for p in alias.name.split(".")):
                        found.append(f"{rel}:{node.lineno} {alias.name}")
                    module_aliases.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not _private(node.attr):
            continue
        value = node.value
        if isinstance(value, ast.Name) and value.id in module_aliases:
            found.append(f"{rel}:{node.lineno} {value.id}.{node.attr}")
        elif (
            node.attr in others
            and node.attr not in own
            and not (isinstance(value, ast.Name) and value.id in ("self", "cls"))
            and not (
                isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super"
            )
        ):
            found.append(f"{rel}:{node.lineno} {ast.unparse(node)}")
    return found


def _sources() -> list[Path]:
    return sorted([*PACKAGE.rglob("*.py"), *LAMBDA.rglob("*.py")])


def found_in(sources: list[Path], root: Path = ROOT) -> set[str]:
    """Every violation of ``sources`` (each file's attribute reads against the others' privates)."""
    trees = {path: ast.parse(path.read_text(), filename=str(path)) for path in sources}
    defined = {path: defined_privates(tree) for path, tree in trees.items()}
    counts: dict[str, int] = {}
    for names in defined.values():
        for n in names:
            counts[n] = counts.get(n, 0) + 1
    found: set[str] = set()
    for path, tree in trees.items():
        others = frozenset(n for n, c in counts.items() if c > (1 if n in defined[path] else 0))
        found.update(violations(path, root=root, others=others, tree=tree))
    return found


@functools.cache
def _found() -> frozenset[str]:
    return frozenset(found_in(_sources()))


def test_no_module_imports_or_reads_another_module_s_privates() -> None:
    new = sorted(_found() - ALLOWED)
    assert not new, "private names of other modules (make them public where they are owned):\n" + "\n".join(
        new
    )


def test_the_allow_list_only_shrinks() -> None:
    stale = sorted(ALLOWED - _found())
    assert not stale, "fixed: remove from ALLOWED:\n" + "\n".join(stale)


def test_the_walk_finds_a_reach_in(tmp_path: Path) -> None:
    pkg = tmp_path / "cdk_triton"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "_own.py").write_text("VERSION = 1\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "owner.py").write_text(
        "class _Private:\n    def _flush(self) -> None:\n        self._x = 1\n\ndef _load() -> int:\n    return 1\n"
    )
    (pkg / "sub" / "user.py").write_text(
        "from cdk_triton.sub.owner import _Private\n"
        "from cdk_triton.sub import owner\n"
        "from cdk_triton import _own\n"
        "from .owner import __doc__\n"
        "x = owner._load()\n"
        "def f(p: _Private) -> None:\n    p._flush()\n    p.__class__\n"
    )
    found = found_in(sorted(pkg.rglob("*.py")), root=tmp_path)
    assert found == {
        "cdk_triton/sub/user.py:1 cdk_triton.sub.owner._Private",
        "cdk_triton/sub/user.py:5 owner._load",
        "cdk_triton/sub/user.py:7 p._flush",
    }
