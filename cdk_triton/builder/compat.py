"""Target compatibility: will an artifact built here load in the target Triton release?

Facts come from the vendored release table (``cdk_triton.config.tables.release``).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from cdk_triton.config import formats, tables, target_runtime
from cdk_triton.errors import BuildError

#: torch's exporter supports opsets 18+ (dynamo) / up to 20 (legacy).
TORCH_DYNAMO_MIN_OPSET = 18


def _version_tuple(v: str) -> tuple[int, ...]:
    out = []
    for part in v.split("+")[0].split("."):
        digits = "".join(ch for ch in part if ch.isdigit())
        if not digits:
            break
        out.append(int(digits))
    return tuple(out)


def choose_opset(triton_version: str, requested: int | None, *, torch_max: int) -> int:
    """The ONNX opset to export with: the requested one, else the highest both sides support."""
    rel = tables.release(triton_version)
    target_max = rel.onnx_max_opset or torch_max
    if requested is not None:
        check_onnx_opset(requested, None, triton_version, what="requested opset")
        return requested
    return min(target_max, torch_max)


def check_onnx_opset(
    opset: int, ir_version: int | None, triton_version: str, *, what: str = "the model"
) -> None:
    """Refuse an opset / IR version the target's ONNX Runtime cannot load."""
    rel = tables.release(triton_version)
    ort = rel.onnxruntime.value
    if rel.onnx_max_opset is not None and opset > rel.onnx_max_opset:
        raise BuildError(
            f"{what} uses ONNX opset {opset}; Triton {triton_version} ships ONNX Runtime {ort}, which supports "
            f"opsets up to {rel.onnx_max_opset}: export with opset <= {rel.onnx_max_opset} (onnx.opset) or "
            "target a newer triton_version",
            code="OnnxOpsetTooNew",
        )
    if (
        ir_version is not None
        and rel.onnx_max_ir_version is not None
        and ir_version > rel.onnx_max_ir_version
    ):
        raise BuildError(
            f"{what} has ONNX IR version {ir_version}; ONNX Runtime {ort} (Triton {triton_version}) loads IR "
            f"versions up to {rel.onnx_max_ir_version}: convert it with onnx.version_converter / set "
            "model.ir_version, or target a newer triton_version",
            code="OnnxIrVersionTooNew",
        )


def check_onnx_model(model_proto: object, triton_version: str, *, name: str) -> tuple[int, int]:
    """Check an onnx.ModelProto's default-domain opset and IR version; returns them."""
    opset = max((o.version for o in model_proto.opset_import if o.domain in ("", "ai.onnx")), default=0)  # type: ignore[attr-defined]
    ir = int(model_proto.ir_version)  # type: ignore[attr-defined]
    check_onnx_opset(opset, ir, triton_version, what=f"model '{name}'")
    return opset, ir


def torchscript_warning(torch_version: str, triton_version: str) -> str | None:
    """A warning when TorchScript is saved by a torch newer than the target's libtorch (the text of
    ``config.target_runtime.may_not_load``; the build shows it when the release-runtime check did not run)."""
    rel = tables.release(triton_version)
    lib = rel.libtorch.value
    if not lib:
        return None
    if _version_tuple(torch_version)[:2] > _version_tuple(lib)[:2]:
        text = target_runtime.may_not_load(
            "libtorch", lib, rel.libtorch.confirmed, saved_by=torch_version, triton_version=triton_version
        )
        return f"{text}: prefer format onnx, or build inside the target-matched image (build/Dockerfile)"
    return None


def python_model_imports(source: str, *, filename: str = "model.py") -> list[tuple[str, int]]:
    """Top-level module names imported by a python model (``ast``), with line numbers."""
    tree = ast.parse(source, filename=filename)
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name.split(".")[0], node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module.split(".")[0], node.lineno))
    return found


def check_python_model(directory: Path, *, name: str, allowed: frozenset[str] | None = None) -> None:
    """Refuse a python model that imports what the Triton image lacks: anything but the standard
    library, its own files and ``allowed`` (Default: the python row's ``allowed_imports``, numpy and
    the backend utils)."""
    allowed = formats.get("python").allowed_imports if allowed is None else allowed
    local = {p.stem for p in directory.glob("*.py")} | {p.name for p in directory.iterdir() if p.is_dir()}
    stdlib = set(sys.stdlib_module_names)
    for f in sorted(directory.rglob("*.py")):
        if "__pycache__" in f.parts:
            continue
        try:
            imports = python_model_imports(f.read_text("utf-8"), filename=str(f))
        except SyntaxError as exc:
            raise BuildError(
                f"python model '{name}': {f} does not parse: {exc}", code="PythonModelInvalid"
            ) from exc
        for mod, line in imports:
            if mod in stdlib or mod in allowed or mod in local or mod == "__future__":
                continue
            raise BuildError(
                f"python model '{name}' imports '{mod}' ({f.name}:{line}), which the Triton image does not have "
                "(it has numpy, the standard library and triton_python_backend_utils; no torch or PIL): "
                "declare the package under the model's requirements: (packed into its execution environment), "
                "rewrite it with numpy, or move that work into an onnx/torchscript step of an ensemble",
                code="PythonModelImport",
            )
