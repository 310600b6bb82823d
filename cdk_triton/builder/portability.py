"""Device portability: an artifact of a model that runs on a GPU must not be tied to one device.

A TorchScript trace records the device of every tensor its forward made (``torch.arange(n,
device=x.device)`` is traced as ``aten::arange(..., device=prim::Constant[value="cpu"])``), so the
artifact runs only on the device it was traced on: loaded on a GPU, every inference fails with
``Expected all tensors to be on the same device``. A trace on CUDA bakes ``cuda:0``, which breaks the
instances Triton places on the other GPUs of a multi-GPU type. Each format's registry row says what
can pin a device (``Format.device_pinning``):

- ``graph`` (torchscript): :func:`graph_pins` reads every method of every submodule for device
  constants in use; :func:`check_devices` (a build step between export and packaging) refuses them
  for every GPU-placed model (:func:`gpu_placed`) with ``DevicePinnedExport``;
- ``code`` (python): :func:`code_pins` scans ``model.py`` for device literals, a warning
  (``PythonDevicePinned``);
- ``architecture`` (tensorrt): a plan is per GPU architecture, checked against the instance type's
  GPU (``PlanArchitectureMismatch``), never tied to a device index;
- ``none`` (onnx, ensemble): the artifact cannot name a device.

torch is imported inside the functions that read graphs.
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cdk_triton.builder.context import BuildContext, StepOutput, StepStatus
from cdk_triton.config import placement, tables
from cdk_triton.config.declaration import BuildSpec, ModelSpec
from cdk_triton.errors import BuildError

#: the device strings a literal may spell (torch.device, .to, device=)
DEVICE_LITERAL = re.compile(r"^(cpu|cuda(:\d+)?|mps|meta)$")

FIXES = (
    "fixes: torch.jit.script the function that makes the tensor (scripted code reads x.device when it runs; "
    "torchscript_mode: script scripts the whole model), make the tensor from an input inside scripted code "
    "(torch.zeros_like(x), x.new_zeros(...), torch.arange(n).to(x) in a scripted function), or declare "
    "format: onnx (an ONNX graph holds no device)"
)


@dataclass(frozen=True, kw_only=True, slots=True)
class DevicePin:
    """One use of a concrete device in an artifact's graph.

    Attributes:
        device: the device the graph names (``cpu``, ``cuda:0``).
        node: the node that takes it (``aten::arange``, ``aten::to``).
        method: the submodule path and method whose graph holds it (``encoder.layer.0.forward``).
        where: the source location TorchScript recorded (the first frame of a trace), or empty.
    """

    device: str
    node: str
    method: str
    where: str

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DevicePin:
        return cls(
            device=str(d["device"]), node=str(d["node"]), method=str(d["method"]), where=str(d["where"])
        )

    def text(self) -> str:
        at = self.where or "no source location recorded (a TorchScript file saved without debug info)"
        return f"{self.node} with device '{self.device}' in {self.method}, at {at}"


# ---------------------------------------------------------------------------- reading graphs


def graph_pins(module: Any) -> list[DevicePin]:
    """The device constants in use in every method of ``module`` (a ScriptModule) and its submodules."""
    pins: list[DevicePin] = []
    seen: set[tuple[str, str, str, str]] = set()
    for path, sub in _script_modules(module):
        c = sub._c
        for name in c._method_names():
            method = f"{path}.{name}" if path else name
            for pin in _walk(c._get_method(name).graph, method):
                key = (pin.device, pin.node, pin.method, pin.where)
                if key not in seen:
                    seen.add(key)
                    pins.append(pin)
    return pins


def _script_modules(module: Any) -> list[tuple[str, Any]]:
    out = []
    for path, sub in module.named_modules():
        if hasattr(sub, "_c"):
            out.append((path, sub))
    return out


def _walk(graph: Any, method: str) -> list[DevicePin]:
    pins: list[DevicePin] = []
    for node in _nodes(graph):
        if node.kind() != "prim::Constant" or node.output().type().kind() != "DeviceObjType":
            continue
        device = str(node.output().toIValue())
        for use in node.output().uses():
            user = use.user
            pins.append(
                DevicePin(
                    device=device,
                    node=user.kind(),
                    method=method,
                    where=first_frame(user.sourceRange()) or first_frame(node.sourceRange()),
                )
            )
    return pins


def _nodes(block: Any) -> list[Any]:
    out = []
    for node in block.nodes():
        out.append(node)
        for b in node.blocks():
            out += _nodes(b)
    return out


def first_frame(source_range: str) -> str:
    """The user's frame of a recorded source range: the first line of a trace's stack
    (``file.py(12): forward``), or a scripted node's ``file.py:12:5``."""
    for line in source_range.splitlines():
        line = line.strip()
        if line:
            return line
    return ""


def file_pins(path: Path) -> list[DevicePin]:
    """The device constants of a saved TorchScript file (loaded on CPU)."""
    import torch

    return graph_pins(torch.jit.load(str(path), map_location="cpu"))


# ---------------------------------------------------------------------------- python models


def code_pins(source: str) -> list[tuple[int, str]]:
    """(line, what) for each device a python model's code names: ``torch.device("cuda")``,
    ``.to("cuda:0")``, ``device="cpu"``, ``.cuda()``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if name == "cuda" and isinstance(func, ast.Attribute):
            out.append((node.lineno, ".cuda()"))
            continue
        literals = [a for a in node.args if _is_device(a)] if name in ("device", "to", "Device") else []
        literals += [k.value for k in node.keywords if k.arg == "device" and _is_device(k.value)]
        for lit in literals:
            assert isinstance(lit, ast.Constant) and isinstance(lit.value, str)
            out.append((node.lineno, f"{name}(... '{lit.value!s}' ...)"))
    return sorted(set(out))


def _is_device(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and bool(DEVICE_LITERAL.match(node.value))
    )


def python_warnings(spec: BuildSpec, m: ModelSpec) -> list[str]:
    """A warning for each device literal of a GPU-placed python model's ``.py`` files."""
    if m.source is None or not m.source.python or m.name not in gpu_placed(spec):
        return []
    root = spec.resolve_path(m.source.python)
    files = sorted(root.rglob("*.py")) if root.is_dir() else [root]
    out = []
    for f in files:
        if "__pycache__" in f.parts or not f.is_file():
            continue
        for line, what in code_pins(f.read_text("utf-8", "replace")):
            out.append(
                f"model '{m.name}' (python, placed on a GPU): {f.name}:{line} names a device ({what}); a "
                "hard-coded device breaks on another GPU of the instance (Triton gives each instance its own "
                "device: read args['model_instance_device_id'] in initialize) [PythonDevicePinned]"
            )
    return out


# ---------------------------------------------------------------------------- placement and the step


def gpu_placed(spec: BuildSpec) -> dict[str, str]:
    """model -> why it runs on a GPU (``placement.runs_on_gpu``), for every declared model that may."""
    serving: dict[str, list[str]] = {m.name: [] for m in spec.models}
    for e in spec.endpoints:
        for top in e.models:
            for n in spec.closure(top):
                serving.setdefault(n, []).extend(e.instance_types)
    out: dict[str, str] = {}
    for m in spec.models:
        kinds = [g.kind for g in m.instance_groups]
        types = list(dict.fromkeys(serving.get(m.name, [])))
        if placement.runs_on_gpu(kinds, types):
            if "KIND_GPU" in kinds:
                out[m.name] = "a KIND_GPU instance group"
            elif types:
                out[m.name] = f"Triton's default placement on {', '.join(types)}"
            else:
                out[m.name] = "Triton's default placement (no endpoint yet: it may be deployed on a GPU)"
    return out


def pins_of(ctx: BuildContext, m: ModelSpec) -> list[DevicePin]:
    """The recorded device pins of a built model, or read from its artifact (an older cache record)."""
    rec = ctx.record(m.name)
    if rec.exported.device_pins is not None:
        return [DevicePin.from_dict(d) for d in rec.exported.device_pins]
    entry = ctx.cache.entry_dir(m.name, ctx.resolved[m.name].key)
    return file_pins(entry / "1" / str(m.row.artifact))


def pinned_error(m: ModelSpec, why: str, pins: list[DevicePin]) -> BuildError:
    """BuildError(DevicePinnedExport) naming the model, each node and its source location, and the fixes."""
    listed = "; ".join(p.text() for p in pins[:8]) + (f"; and {len(pins) - 8} more" if len(pins) > 8 else "")
    cuda = any(p.device.startswith("cuda") for p in pins)
    effect = (
        "a trace on CUDA bakes cuda:0, which breaks the instances Triton places on the other GPUs of a multi-GPU "
        f"type ({', '.join(tables.gpu_type_examples(multi_gpu=True, count=3))})"
        if cuda
        else "loaded on the GPU, every request fails with 'Expected all tensors to be on the same device'"
    )
    return BuildError(
        f"model '{m.name}' runs on a GPU ({why}) and its {m.format} artifact is tied to one device: {listed}; "
        f"{effect}; {FIXES}",
        code="DevicePinnedExport",
    )


def refuse_pins(spec: BuildSpec, m: ModelSpec, pins: list[DevicePin]) -> None:
    """Raise DevicePinnedExport when ``m`` is GPU-placed and its fresh export has ``pins`` (the
    exporter calls it before the cache commit; :func:`check_devices` covers cached artifacts)."""
    if pins:
        why = gpu_placed(spec).get(m.name)
        if why is not None:
            raise pinned_error(m, why, pins)


def check_devices(ctx: BuildContext) -> StepOutput:
    """Refuse, before anything is packaged, every built artifact of a GPU-placed model whose graph
    names a concrete device (formats with ``device_pinning: graph``)."""
    placed = gpu_placed(ctx.spec)
    checked = 0
    errors: list[BuildError] = []
    for n in ctx.built:
        m = ctx.resolved[n].spec
        if m.row.device_pinning != "graph" or n not in placed:
            continue
        checked += 1
        pins = pins_of(ctx, m)
        if pins:
            errors.append(pinned_error(m, placed[n], pins))
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise BuildError(
            f"{len(errors)} models are tied to one device: " + " | ".join(str(e) for e in errors),
            code="DevicePinnedExport",
        )
    return StepOutput(step="devices", status=StepStatus.OK if checked else StepStatus.SKIPPED, done=checked)
