"""Parity on the target device: a GPU-placed model's artifact run on CUDA, at batch 1 and at its
``max_batch_size``, against the eager model on the same device and on CPU.

The build's parity (:mod:`cdk_triton.builder.parity`) runs on CPU. A TorchScript trace that baked a
device, or an export whose numerics differ on the GPU, passes there and fails on the endpoint; this
module runs the artifact where it is deployed. It needs CUDA: :func:`require_cuda` raises
``NoCudaDevice`` with what is missing (torch imported lazily, so the module imports everywhere).

Tolerances (:data:`RELATIVE_TOLERANCE`), relative to the largest magnitude of the CPU eager output
``max|ref|``: FP32 ``1e-3`` (an H100 gave 2.0e-4: TF32 convolutions, the GPU's own numerics, 0.019 to
0.022 on logits of magnitude 110, ``../shared/data/gpu-h100-2026-11-27``), FP16 ``1e-2`` (10 bits of
mantissa: 1e-3 per rounding, an order of magnitude over a network's accumulations), BF16 ``3e-2``
(7 bits: 8e-3 per rounding); integer outputs must be equal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cdk_triton.builder.samples import sample_inputs
from cdk_triton.config.declaration import ModelSpec
from cdk_triton.errors import BuildError

if TYPE_CHECKING:
    import numpy as np

#: output dtype -> max|diff| allowed as a fraction of max|ref| (integers: exact)
RELATIVE_TOLERANCE: dict[str, float] = {"FP32": 1e-3, "FP64": 1e-3, "FP16": 1e-2, "BF16": 3e-2}

Runner = Callable[[dict[str, "np.ndarray"]], dict[str, "np.ndarray"]]


def require_cuda(torch: Any = None) -> Any:
    """torch with a visible CUDA device, else BuildError(NoCudaDevice) saying what is missing."""
    if torch is None:
        try:
            import torch
        except ImportError as exc:
            raise BuildError(
                "the GPU check needs torch with CUDA, and torch is not installed here; make the environment "
                "of the GPU check guide (docs/guides/gpu-check.md, 'Run it': a venv with the host's CUDA torch)",
                code="NoCudaDevice",
            ) from exc
    if not torch.cuda.is_available():
        built = getattr(torch.version, "cuda", None)
        why = (
            f"torch {torch.__version__} is a CPU build (no CUDA); install the host's CUDA torch"
            if not built
            else f"torch {torch.__version__} (CUDA {built}) sees no CUDA device: no NVIDIA driver or GPU here, "
            "or CUDA_VISIBLE_DEVICES hides it"
        )
        raise BuildError(
            f"the GPU check runs on a CUDA host and none is visible: {why}; run it on a GPU machine (the GPU check guide, "
            "docs/guides/gpu-check.md, 'Run it', says how its environment is made)",
            code="NoCudaDevice",
        )
    return torch


def tolerance(dtype: str, reference: np.ndarray) -> float:
    """The largest max|diff| allowed for an output of ``dtype`` whose CPU eager values are ``reference``."""
    import numpy as np

    rel = RELATIVE_TOLERANCE.get(dtype)
    if rel is None:
        return 0.0
    ref = np.abs(np.asarray(reference, dtype=np.float64))
    return rel * float(ref.max()) if ref.size else 0.0


@dataclass(frozen=True, kw_only=True, slots=True)
class Check:
    """One batch size's parity on the device: the largest difference against eager on the same device,
    the largest against CPU eager, and the tolerance both must stay within."""

    batch: int
    max_abs_diff: float
    cpu_max_abs_diff: float
    tolerance: float

    @property
    def ok(self) -> bool:
        return self.max_abs_diff <= self.tolerance and self.cpu_max_abs_diff <= self.tolerance

    def reading(self) -> dict[str, Any]:
        """The readings report's ``parity.batch_*`` entry (GPU_READINGS schema)."""
        return {"max_abs_diff": self.max_abs_diff, "tolerance": self.tolerance, "ok": self.ok}


def batches(m: ModelSpec) -> list[int]:
    """The batch sizes parity runs at: 1 and ``max_batch_size`` (one run for an unbatched model)."""
    if m.max_batch_size <= 0:
        return [0]
    return sorted({1, m.max_batch_size})


def inputs_at(m: ModelSpec, batch: int) -> dict[str, np.ndarray]:
    """The declared sample at ``batch`` (0: the unbatched sample)."""
    return sample_inputs(m, batch=batch) if batch > 0 else sample_inputs(m)


def compare(
    m: ModelSpec,
    batch: int,
    artifact: dict[str, np.ndarray],
    eager_device: dict[str, np.ndarray],
    eager_cpu: dict[str, np.ndarray],
) -> Check:
    """Parity of one batch: every declared output, the worst of each."""
    import numpy as np

    worst = worst_cpu = 0.0
    tol = float("inf")
    for t in m.outputs:
        a = np.asarray(artifact[t.name], dtype=np.float64)
        d = np.asarray(eager_device[t.name], dtype=np.float64)
        c = np.asarray(eager_cpu[t.name], dtype=np.float64)
        if a.shape != c.shape:
            raise BuildError(
                f"model '{m.name}': on CUDA, output '{t.name}' has shape {list(a.shape)} at batch {batch}, the "
                f"eager model {list(c.shape)}",
                code="DeviceParityMismatch",
            )
        worst = max(worst, float(np.abs(a - d).max()) if a.size else 0.0)
        worst_cpu = max(worst_cpu, float(np.abs(a - c).max()) if a.size else 0.0)
        tol = min(tol, tolerance(t.dtype, c))
    return Check(batch=batch, max_abs_diff=worst, cpu_max_abs_diff=worst_cpu, tolerance=tol)


def mismatch(m: ModelSpec, device: str, check: Check) -> BuildError:
    """BuildError(DeviceParityMismatch) naming the model, the device, the batch and both differences."""
    return BuildError(
        f"model '{m.name}': its artifact on {device} differs at batch {check.batch}: max |diff| "
        f"{check.max_abs_diff:.3g} against eager on the same device, {check.cpu_max_abs_diff:.3g} against eager "
        f"on CPU, tolerance {check.tolerance:.3g} ({_rule(m)}); a device constant the check could not see, or "
        "numerics of the GPU the export changed: compare the TorchScript/ONNX export on the device, or loosen "
        "nothing until the cause is known",
        code="DeviceParityMismatch",
    )


def _rule(m: ModelSpec) -> str:
    dtypes = sorted({t.dtype for t in m.outputs})
    parts = [
        f"{d}: {RELATIVE_TOLERANCE[d]:g} x max|ref|" if d in RELATIVE_TOLERANCE else f"{d}: equal"
        for d in dtypes
    ]
    return ", ".join(parts)


def device_runner(torch: Any, module: Any, m: ModelSpec, device: str) -> Runner:
    """Run a torch module (eager or TorchScript) on ``device``; outputs as numpy, by declared name."""

    def run(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        import numpy as np

        args = [torch.from_numpy(np.ascontiguousarray(inputs[t.name])).to(device) for t in m.inputs]
        with torch.inference_mode():
            out = module(*args)
        if isinstance(out, torch.Tensor):
            out = (out,)
        elif isinstance(out, dict):
            out = tuple(out.values())
        return {t.name: o.detach().cpu().numpy() for t, o in zip(m.outputs, out, strict=True)}

    return run


def onnx_cuda_session_available() -> bool:
    """Whether onnxruntime here has the CUDAExecutionProvider (onnxruntime-gpu)."""
    try:
        import onnxruntime as ort
    except ImportError:
        return False
    return "CUDAExecutionProvider" in ort.get_available_providers()


def onnx_cuda_session(path: str) -> Any | None:
    """An onnxruntime session on CUDAExecutionProvider, or None without onnxruntime-gpu."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        return None
    return ort.InferenceSession(path, providers=["CUDAExecutionProvider"])
