"""The ``Exporter`` protocol: what the build asks of a format's module, and how it finds the module.

Each format's registry row (``cdk_triton.config.formats``) names its module by dotted name
(``row.exporter``); the module implements :class:`Exporter` with module-level functions, the way a
pre-commit language is a module implementing ``lang_base.Language``. The export step, the preflight
and the ensemble's parity check call only these functions, never ``if format == ...``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from cdk_triton.builder.context import BuildContext, Exported, SampleRecord
from cdk_triton.builder.pbtxt import sha256_text, to_dict, to_pbtxt
from cdk_triton.builder.reference import Runner
from cdk_triton.builder.samples import sequence_parameters, tolerance, v2_tensors
from cdk_triton.config import formats
from cdk_triton.config.declaration import BuildSpec, ModelSpec

if TYPE_CHECKING:
    import numpy as np


class Exporter(Protocol):
    """One format's build: preflight checks, the export itself and a CPU runner of its artifact.

    Tool imports (torch, onnx, tensorrt) stay inside the functions: the preflight of a no-op build
    imports the module without running an export."""

    def skip_reason(self, spec: BuildSpec, m: ModelSpec) -> str | None:
        """Why an optional model cannot be built on this machine (None: it can); raises BuildError
        for a model that is not optional."""
        ...

    def check_source(self, spec: BuildSpec, m: ModelSpec) -> None:
        """Refuse, before anything is written, a source the target release cannot load."""
        ...

    def warnings(self, spec: BuildSpec, m: ModelSpec, tools: dict[str, str]) -> list[str]:
        """What to tell about a model this build serves, cached or not."""
        ...

    def export_model(self, ctx: BuildContext, m: ModelSpec, tmp: Path) -> Exported:
        """Write the model directory into ``tmp`` (config.pbtxt, ``1/``) and return what was made."""
        ...

    def artifact_runner(self, ctx: BuildContext, m: ModelSpec, entry: Path) -> Runner:
        """A CPU runner of the built model directory ``entry`` (BuildError when there is none)."""
        ...


class DeviceCheck(Protocol):
    """What ``cdk-triton gpu-check`` asks of the module of a ``gpu_checkable`` format (its row says so):
    whether its artifact can run on CUDA here, and a runner of it there."""

    def device_unavailable(self) -> str | None:
        """Why this machine cannot run the format's artifacts on CUDA (None: it can)."""
        ...

    def device_runner(self, torch: Any, m: ModelSpec, artifact: Path, device: str) -> tuple[Runner, bool]:
        """A runner of the built ``artifact`` on ``device``, and whether torch's allocator holds it."""
        ...


def device_check_of(m: ModelSpec) -> DeviceCheck:
    """The module of ``m``'s format as :class:`DeviceCheck` (``m.row.gpu_checkable`` formats only)."""
    return cast(DeviceCheck, importlib.import_module(str(m.row.exporter)))


def exporter_of(m: ModelSpec) -> Exporter:
    """The module of ``m``'s format (imported on first use)."""
    return cast(Exporter, importlib.import_module(str(m.row.exporter)))


def file_runner(kind: str, path: Path, m: ModelSpec) -> Runner:
    """A CPU runner of a model file given as the source (``kind`` ``torchscript`` or ``onnx``): the
    ``load_runner`` of the exporter of the format of that name."""
    module = importlib.import_module(str(formats.get(kind).exporter))
    return cast(Runner, module.load_runner(path, m))


@dataclass(frozen=True, kw_only=True, slots=True)
class Made:
    """A model's config, its reference outputs on the sample and what the artifact check found."""

    cfg: Any
    expected: dict[str, np.ndarray]
    parity: float | None = None
    onnx: dict[str, Any] | None = None
    plans: list[dict[str, Any]] | None = None
    activations: dict[str, Any] | None = None
    device_pins: list[dict[str, str]] | None = None


def finish(m: ModelSpec, tmp: Path, sample: dict[str, np.ndarray], made: Made) -> Exported:
    """Write config.pbtxt and record what the export made (tensor names as the config states them)."""
    cfg = made.cfg
    text = to_pbtxt(cfg)
    (tmp / "config.pbtxt").write_text(text, "utf-8")
    in_names = {t.name: c.name for t, c in zip(m.inputs, cfg.input, strict=True)}
    out_names = {t.name: c.name for t, c in zip(m.outputs, cfg.output, strict=True)}
    return Exported(
        config=to_dict(cfg),
        config_sha256=sha256_text(text),
        io_names={"inputs": in_names, "outputs": out_names},
        sample=sample_record(m, sample, made.expected, in_names, out_names),
        parity_max_abs_diff=made.parity,
        onnx=made.onnx,
        plans=made.plans,
        activations=made.activations,
        device_pins=made.device_pins,
    )


def sample_record(
    m: ModelSpec,
    sample: dict[str, np.ndarray],
    expected: dict[str, np.ndarray],
    in_names: dict[str, str],
    out_names: dict[str, str],
) -> SampleRecord:
    """The sample request and its expected response, as KServe v2 bodies."""
    tols = [tolerance(m, t.dtype) for t in m.outputs]
    request: dict[str, Any] = {"inputs": v2_tensors({in_names[k]: v for k, v in sample.items()})}
    if m.sequence_batching is not None:
        request["parameters"] = sequence_parameters(m)
    return SampleRecord(
        request=request,
        response={"outputs": v2_tensors({out_names[t.name]: expected[t.name] for t in m.outputs})},
        atol=max(a for a, _ in tols),
        rtol=max(r for _, r in tols),
    )
