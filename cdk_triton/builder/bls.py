"""Business logic scripting: what a python model's code calls, read with ``ast``, checked against its
declared ``calls`` and the callees' tensors as their configs name them.

A call is ``pb_utils.InferenceRequest(model_name="x", requested_output_names=[...],
inputs=[pb_utils.Tensor("IN", ...)])`` (keywords, or the python backend's positional order
``model_name, inputs, requested_output_names``); only literal strings are checked (a name computed at run
time is the sample run's to catch: the stand-in ``InferenceRequest.exec`` of ``builder.python_model``
answers an undeclared callee with an error, as Triton answers a model it has not loaded).
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from cdk_triton.config.declaration import ModelSpec
from cdk_triton.errors import BuildError


@dataclass(frozen=True, kw_only=True, slots=True)
class Call:
    """One ``InferenceRequest(...)`` in a python model's code; None where a part is not a literal."""

    file: str
    line: int
    model_name: str | None
    inputs: tuple[str, ...] | None
    outputs: tuple[str, ...] | None

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def scan(model_dir: Path) -> list[Call]:
    """Every ``InferenceRequest(...)`` in the ``.py`` files of ``model_dir`` (or the one file)."""
    files = [model_dir] if model_dir.is_file() else sorted(model_dir.rglob("*.py"))
    out: list[Call] = []
    for f in files:
        if "__pycache__" in f.parts:
            continue
        try:
            tree = ast.parse(f.read_text("utf-8"), filename=str(f))
        except (SyntaxError, UnicodeDecodeError):
            continue  # compat.check_python_model reports it
        rel = f.name if model_dir.is_file() else str(f.relative_to(model_dir))
        out += [_call(rel, n) for n in ast.walk(tree) if isinstance(n, ast.Call) and _is_request(n.func)]
    return out


def _is_request(func: ast.expr) -> bool:
    return (isinstance(func, ast.Attribute) and func.attr == "InferenceRequest") or (
        isinstance(func, ast.Name) and func.id == "InferenceRequest"
    )


def _call(file: str, node: ast.Call) -> Call:
    args = dict(zip(("model_name", "inputs", "requested_output_names"), node.args, strict=False))
    args.update({k.arg: k.value for k in node.keywords if k.arg})
    return Call(
        file=file,
        line=node.lineno,
        model_name=_literal(args.get("model_name")),
        inputs=_tensor_names(args.get("inputs")),
        outputs=_literals(args.get("requested_output_names")),
    )


def _literal(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _literals(node: ast.expr | None) -> tuple[str, ...] | None:
    if not isinstance(node, ast.List | ast.Tuple):
        return None
    names = [_literal(e) for e in node.elts]
    return None if any(n is None for n in names) else tuple(n for n in names if n is not None)


def _tensor_names(node: ast.expr | None) -> tuple[str, ...] | None:
    """The names of ``[pb_utils.Tensor("IN", ...), ...]`` (None unless every one is a literal)."""
    if not isinstance(node, ast.List | ast.Tuple):
        return None
    names: list[str] = []
    for e in node.elts:
        first = e.args[0] if isinstance(e, ast.Call) and e.args else None
        name = _literal(first)
        if name is None:
            return None
        names.append(name)
    return tuple(names)


def check_declared(m: ModelSpec, calls: list[Call]) -> None:
    """Every literal callee is declared in ``m.calls`` (BuildError BlsUndeclaredCall, naming the line)."""
    bad = [c for c in calls if c.model_name is not None and c.model_name not in m.calls]
    if bad:
        raise BuildError(
            f"python model '{m.name}' calls "
            + ", ".join(f"'{c.model_name}' ({c.where})" for c in bad)
            + f", not in its calls {list(m.calls)}: add "
            + ", ".join(sorted({str(c.model_name) for c in bad}))
            + " to the model's calls in models.yaml (the build packages the callees with it)",
            code="BlsUndeclaredCall",
        )


def check_tensors(m: ModelSpec, calls: list[Call], io_names: Mapping[str, Mapping[str, list[str]]]) -> None:
    """Every literal input / requested output name of a call to a declared callee is one of that callee's
    inputs / outputs as its config names them (``io_names``: callee -> {"inputs": [...], "outputs": [...]};
    BuildError BlsTensorMismatch)."""
    problems = []
    for c in calls:
        names = io_names.get(c.model_name or "")
        if names is None:
            continue
        for kind, given in (("inputs", c.inputs), ("outputs", c.outputs)):
            for t in given or ():
                if t not in names[kind]:
                    problems.append(
                        f"'{t}' ({c.where}) is not an {kind[:-1]} of '{c.model_name}' (its {kind}: "
                        f"{', '.join(names[kind])})"
                    )
    if problems:
        raise BuildError(
            f"python model '{m.name}': " + "; ".join(problems) + ": use the callee's tensor names as its "
            "config.pbtxt states them",
            code="BlsTensorMismatch",
        )
