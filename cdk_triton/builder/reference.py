"""Eager reference models: resolve factories, seed them, run them on numpy inputs.

torch is imported inside the functions so ``import cdk_triton.builder`` stays light.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from cdk_triton.builder.parallel import RECORD_THREADS
from cdk_triton.config.declaration import BuildSpec, ModelSpec
from cdk_triton.errors import BuildError

if TYPE_CHECKING:
    import numpy as np

Runner: TypeAlias = "Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]"


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
    # the declaration's directory comes first on the import path: look there without asking
    # sys.modules, which may hold a same-named module from another directory or an older build
    base = Path(spec.base_dir).resolve()
    local = _module_files(base, module)
    if local and local[-1] in (
        base.joinpath(*module.split(".")) / "__init__.py",
        base.joinpath(*module.split(".")).with_suffix(".py"),
    ):
        return local[-1]
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
    import numpy as np

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
        import numpy as np

        args = [torch.from_numpy(np.ascontiguousarray(inputs[n])) for n in in_names]
        threads = torch.get_num_threads()
        torch.set_num_threads(RECORD_THREADS)  # recorded outputs never depend on --jobs or the cores
        try:
            with torch.inference_mode():
                out = module(*args)
        finally:
            torch.set_num_threads(threads)
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
        out["factory_files"] = {rel: _sha256_file(f) for rel, f in factory_sources(spec, model).items()}
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


def source_inputs(spec: BuildSpec, model: ModelSpec) -> list[Path]:
    """Every path :func:`source_fingerprint` reads or whose listing decides what it reads: the hashed
    files and trees (each directory of a tree: a file added to it changes the hash) and the folders
    that imports were looked for in (a new sibling module can change what a factory imports). The
    no-op stamp (:mod:`cdk_triton.builder.stamp`) records their stat."""
    src = model.source
    if src is None:
        return []
    out: list[Path] = []
    if src.factory:
        probed: set[Path] = set()
        files = list(factory_sources(spec, model, probed=probed).values())
        out += files + [f.parent for f in files] + sorted(probed) + [Path(spec.base_dir).resolve()]
    if src.state_dict:
        out.append(spec.resolve_path(src.state_dict))
    trees = [spec.resolve_path(src.path)] if src.path else []
    trees += [spec.resolve_path(d) for d in model.tensorrt.plans]
    for t in trees:
        out.append(t)
        if t.is_dir():
            out += [p for p in t.rglob("*") if "__pycache__" not in p.parts]
    return out


def factory_sources(spec: BuildSpec, model: ModelSpec, *, probed: set[Path] | None = None) -> dict[str, Path]:
    """The factory's module file and every local module it imports, transitively (found with ``ast``,
    nothing is imported), keyed by a stable relative path.

    Local means a file under the declaration's directory or under the factory's own top-level
    package, never in site-packages (tool versions cover installed packages). Imports are followed
    wherever they appear (inside functions, under ``if``): a helper that might be imported counts.
    ``probed`` (when given) gains every folder whose listing decided where an import resolves.
    """
    assert model.source and model.source.factory
    origin = factory_origin(spec, model).resolve()
    parts = model.source.factory.partition(":")[0].split(".")
    is_pkg = origin.name == "__init__.py"
    root = origin.parents[len(parts) - (0 if is_pkg else 1)]  # the sys.path entry it was found under
    base = Path(spec.base_dir).resolve()
    own_pkg = root / parts[0] if (is_pkg or len(parts) > 1) else None

    def local(f: Path) -> bool:
        if own_pkg is not None and f.is_relative_to(own_pkg):
            return True
        if not f.is_relative_to(base):
            return False
        return not {"site-packages", "dist-packages", ".venv", "__pycache__"} & set(f.relative_to(base).parts)

    found: dict[Path, None] = {}
    todo = [origin]
    while todo:
        f = todo.pop()
        if f in found:
            continue
        found[f] = None
        for level, dotted in _imports(f):
            dirs = [f.parents[level - 1]] if level else [base, root]
            for d in dict.fromkeys(dirs):
                todo += [m for m in _module_files(d, dotted, probed) if local(m) and m not in found]
    out = {}
    for f in found:
        rel = f.relative_to(base) if f.is_relative_to(base) else f.relative_to(root)
        out[rel.as_posix()] = f
    return dict(sorted(out.items()))


#: (file, size, mtime_ns) -> what it imports: parsed once per process for every model of a factory
_IMPORTS: dict[tuple[Path, int, int], list[tuple[int, str]]] = {}


def _imports(f: Path) -> list[tuple[int, str]]:
    """(relative level, dotted name) of every module ``f`` may import, found with ``ast``."""
    try:
        st = f.stat()
    except OSError:
        return []
    memo = (f, st.st_size, st.st_mtime_ns)
    if memo in _IMPORTS:
        return _IMPORTS[memo]
    out: list[tuple[int, str]] = []
    try:
        tree = ast.parse(f.read_bytes(), filename=str(f))
    except (SyntaxError, ValueError, OSError):
        return out  # hashed as bytes; the import itself reports the error
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(0, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            level, mod = node.level, node.module or ""
            out += [(level, mod)] if mod else []
            out += [(level, f"{mod}.{a.name}" if mod else a.name) for a in node.names if a.name != "*"]
    _IMPORTS[memo] = out
    return out


def forget_local_modules(spec: BuildSpec, model: ModelSpec) -> None:
    """Drop the factory's local modules from ``sys.modules``, so that the next import runs the files
    as they are now: a process may build twice (edited files) or build declarations in other
    directories that use the same module names."""
    files = factory_sources(spec, model)
    names = {rel.removesuffix(".py").removesuffix("/__init__").replace("/", ".") for rel in files}
    paths = {str(f) for f in files.values()}
    for name, mod in list(sys.modules.items()):
        if name.partition(".")[0] == "cdk_triton":
            continue  # the running build itself (an editable install may sit under the YAML's directory)
        if name in names or getattr(mod, "__file__", None) in paths:
            del sys.modules[name]


def _module_files(root: Path, dotted: str, probed: set[Path] | None = None) -> list[Path]:
    """The files importing ``dotted`` from ``root`` would execute (package ``__init__``s + module);
    ``probed`` gains the folders looked in."""
    files: list[Path] = []
    cur = root
    names = dotted.split(".")
    for i, name in enumerate(names):
        pkg = cur / name
        if probed is not None:
            probed.update((cur, pkg) if pkg.is_dir() else (cur,))
        if (pkg / "__init__.py").is_file():
            files.append(pkg / "__init__.py")
        elif i == len(names) - 1 and (cur / f"{name}.py").is_file():
            files.append(cur / f"{name}.py")
            break
        elif not pkg.is_dir():
            break
        cur = pkg
    return [f.resolve() for f in files]


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
