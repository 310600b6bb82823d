"""Eager reference models: resolve factories, seed them, run them on numpy inputs.

torch is imported inside the functions so ``import cdk_triton.build`` stays light.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from cdk_triton.config.spec import BuildSpec, ModelSpec
from cdk_triton.errors import BuildError

Runner = Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]


@contextmanager
def _on_path(base_dir: str):  # type: ignore[no-untyped-def]
    added = base_dir not in sys.path
    if added:
        sys.path.insert(0, base_dir)
    try:
        yield
    finally:
        if added and base_dir in sys.path:
            sys.path.remove(base_dir)


def factory_origin(spec: BuildSpec, model: ModelSpec) -> Path:
    """The file defining the factory's module (found without importing it), or FactoryNotFound."""
    assert model.source and model.source.factory
    module = model.source.factory.partition(":")[0]
    with _on_path(spec.base_dir):
        try:
            found = importlib.util.find_spec(module)
        except (ImportError, ValueError) as exc:
            found = None
            detail = str(exc)
        else:
            detail = "no such module"
    if found is None or not found.origin or not Path(found.origin).is_file():
        raise BuildError(
            f"model '{model.name}': factory module '{module}' cannot be found ({detail}) from {spec.base_dir}; "
            "factory references resolve relative to the YAML file's directory",
            code="FactoryNotFound",
        )
    return Path(found.origin)


def resolve_factory(spec: BuildSpec, model: ModelSpec) -> Callable[..., Any]:
    """Import ``module:callable`` relative to the declaration's directory."""
    assert model.source and model.source.factory
    module, _, attr = model.source.factory.partition(":")
    factory_origin(spec, model)
    with _on_path(spec.base_dir):
        try:
            obj: Any = importlib.import_module(module)
        except Exception as exc:
            raise BuildError(
                f"model '{model.name}': importing factory module '{module}' failed: {exc!r}",
                code="FactoryNotFound",
            ) from exc
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise BuildError(
                f"model '{model.name}': module '{module}' has no callable '{attr}'", code="FactoryNotFound"
            )
        obj = getattr(obj, part)
    if not callable(obj):
        raise BuildError(
            f"model '{model.name}': '{model.source.factory}' is not callable", code="FactoryNotFound"
        )
    return obj  # type: ignore[no-any-return]


def build_eager(spec: BuildSpec, model: ModelSpec) -> Any:
    """Seed torch, call the factory, load the optional state_dict, return the module in eval mode."""
    import torch

    src = model.source
    assert src is not None and src.factory and src.seed is not None
    fn = resolve_factory(spec, model)
    torch.manual_seed(src.seed)
    np.random.seed(src.seed % (2**32))
    try:
        module = fn(**src.kwargs)
    except Exception as exc:
        raise BuildError(
            f"model '{model.name}': factory '{src.factory}' raised {exc!r}", code="FactoryRaised"
        ) from exc
    if not isinstance(module, torch.nn.Module):
        raise BuildError(
            f"model '{model.name}': factory '{src.factory}' returned {type(module).__name__}, not a torch.nn.Module",
            code="FactoryNotModule",
        )
    if src.state_dict:
        path = spec.resolve_path(src.state_dict)
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
            module.load_state_dict(state)
        except Exception as exc:
            raise BuildError(
                f"model '{model.name}': state_dict {path} does not load: {exc}", code="StateDictMismatch"
            ) from exc
    return module.eval()


def torch_runner(
    module: Any,
    model: ModelSpec,
    *,
    input_names: list[str] | None = None,
    output_names: list[str] | None = None,
) -> Runner:
    """Run a torch module (eager or TorchScript) on named numpy inputs; outputs by declared name."""
    import torch

    in_names = input_names or [t.name for t in model.inputs]
    out_names = output_names or [t.name for t in model.outputs]

    def run(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        args = [torch.from_numpy(np.ascontiguousarray(inputs[n])) for n in in_names]
        with torch.inference_mode():
            out = module(*args)
        if isinstance(out, torch.Tensor):
            out = (out,)
        elif isinstance(out, dict):
            out = tuple(out.values())
        outs = list(out)
        if len(outs) != len(out_names):
            raise BuildError(
                f"model '{model.name}': the model returns {len(outs)} outputs, the declaration has {len(out_names)}",
                code="TensorCountMismatch",
            )
        return {n: o.detach().cpu().numpy() for n, o in zip(out_names, outs, strict=True)}

    return run


def source_fingerprint(spec: BuildSpec, model: ModelSpec) -> dict[str, Any]:
    """Hashes of every source byte that affects the model (for the cache key)."""
    src = model.source
    if src is None:
        return {}
    out: dict[str, Any] = {"kind": src.kind}
    if src.factory:
        out["factory_file"] = _sha256_file(factory_origin(spec, model))
        out["factory"] = src.factory
        out["kwargs"] = src.kwargs
        out["seed"] = src.seed
    if src.state_dict:
        out["state_dict"] = _sha256_file(spec.resolve_path(src.state_dict))
    if src.path:
        p = spec.resolve_path(src.path)
        out["path"] = _sha256_tree(p) if p.is_dir() else _sha256_file(p)
    if model.tensorrt.plans:
        out["plans"] = [_sha256_tree(spec.resolve_path(d)) for d in model.tensorrt.plans]
    return out


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _sha256_tree(path: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(f.relative_to(path).as_posix().encode() + b"\0" + _sha256_file(f).encode())
    return h.hexdigest()
