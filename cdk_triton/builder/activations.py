"""The activation peak of one inference at ``max_batch_size``, without a GPU: the bytes of the tensors
alive at once (inputs, intermediates, outputs) while the eager module runs, counted by a dispatch mode.

The manifest's ``memory_bytes`` adds it to the weight files (``config.sizing.model_memory``). How:

1. **fake tensors** (``torch._subclasses.fake_tensor.FakeTensorMode``): every op runs on its shape and
   dtype only, no memory is allocated and no kernel runs, so the same module and inputs give the same
   bytes on any machine, in well under a second for a ResNet-50. Method :data:`FAKE`.
2. **a CPU run**, for a module whose forward reads tensor values (``.item()``, a mask test, a
   data-dependent shape: transformers' BERT checks its attention mask), which fake tensors cannot:
   the real module on the declared sample at ``max_batch_size``, under the same counting. The bytes
   depend on the shapes only, not on timing: the same on any machine with the same torch. Method
   :data:`CPU_RUN`.

The counting: a ``TorchDispatchMode`` sees every tensor an op returns; a storage not seen before is
allocated (its bytes rounded up to :data:`BLOCK`, the 512-byte block of PyTorch's CUDA caching
allocator), and it is freed when the last tensor viewing it is collected (``weakref.finalize``;
CPython frees by reference count, so the order is deterministic). The peak of the live bytes is the
estimate. Runs under ``torch.no_grad()`` (Triton's libtorch backend runs with ``INFERENCE_MODE`` or
no grad; nothing is saved for backward).

What it cannot see (the README's memory model says so too): cuDNN / cuBLAS workspaces and the
algorithm search (PyTorch's cudnn benchmark, TF32 paths), the caching allocator keeping freed blocks
reserved (its 2 MiB segments: ``memory_reserved`` is above the peak allocated), kernels that fuse or
split differently on the GPU than the CPU decomposition (flash attention keeps no attention matrix;
the CPU math path may), TensorRT's and ONNX Runtime's own memory planners (they reuse buffers their
own way; their plan's precision may halve the bytes), and the CUDA context (a per-process term of the
capacity arithmetic, ``config/gpu_costs.py``).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from cdk_triton.config.declaration import ModelSpec

#: The CUDA caching allocator rounds every allocation up to a multiple of 512 bytes (kMinBlockSize).
BLOCK = 512
#: The methods, as the manifest's memory_source writes them after ``activations/``.
FAKE = "fake-tensor"
CPU_RUN = "cpu-run"


@dataclass(frozen=True, kw_only=True, slots=True)
class Peak:
    """The activation peak of one inference: bytes and how they were found."""

    peak_bytes: int
    method: str  # FAKE | CPU_RUN


class _Live:
    """Live bytes by storage; the peak."""

    def __init__(self) -> None:
        self.live = 0
        self.peak = 0
        self.refs: dict[int, int] = {}
        self.sizes: dict[int, int] = {}
        self.held: set[int] = set()  # the storages of the parameters and buffers: weights, not activations

    def free(self, key: int) -> None:
        self.refs[key] -= 1
        if self.refs[key] == 0:
            del self.refs[key]
            self.live -= self.sizes.pop(key)

    def track(self, t: Any, inputs: set[int]) -> None:
        """Count ``t``, an op's output: a storage none of the op's inputs has is an allocation; one
        of theirs (a view, an in-place result) is counted only if it was (the parameters and
        buffers, views of them included, are not activations)."""
        key = t.untyped_storage()._cdata  # the StorageImpl: views of one storage share it
        if key in self.held or (key in inputs and key not in self.refs):
            return
        if key not in self.refs:
            n = -(-t.untyped_storage().nbytes() // BLOCK) * BLOCK
            self.refs[key] = 0
            self.sizes[key] = n
            self.live += n
            self.peak = max(self.peak, self.live)
        self.refs[key] += 1
        weakref.finalize(t, self.free, key)


def _counting_mode(live: _Live) -> Any:
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    class Counting(TorchDispatchMode):  # type: ignore[misc]
        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            inputs = {
                a.untyped_storage()._cdata
                for a in tree_flatten((args, kwargs))[0]
                if isinstance(a, torch.Tensor)
            }
            out = func(*args, **(kwargs or {}))
            seen: set[int] = set()
            for t in tree_flatten(out)[0]:
                if isinstance(t, torch.Tensor) and id(t) not in seen:
                    seen.add(id(t))
                    live.track(t, inputs)
            return out

    return Counting()


def _run(module: Any, m: ModelSpec, sample: dict[str, np.ndarray], *, fake: bool) -> int:
    import contextlib

    import numpy as np
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    live = _Live()
    real = [torch.from_numpy(np.ascontiguousarray(sample[t.name])) for t in m.inputs]
    fake_mode = FakeTensorMode(allow_non_fake_inputs=True) if fake else None
    weights = list(module.parameters()) + list(module.buffers()) if hasattr(module, "parameters") else []
    with torch.no_grad(), fake_mode or contextlib.nullcontext():
        # the fake copy of a weight is made once (memoized) and reused by every op that reads it
        held = [fake_mode.from_tensor(w) for w in weights] if fake_mode is not None else weights
        live.held = {w.untyped_storage()._cdata for w in held}
    with torch.no_grad(), fake_mode or contextlib.nullcontext(), _counting_mode(live):
        # the inputs are allocated under the count: they are on the GPU while the model runs
        args = [torch.empty(a.shape, dtype=a.dtype) if fake else a.clone() for a in real]
        out = module(*args)
        peak = live.peak
        del out, args
    return peak


def activation_peak(module: Any, m: ModelSpec, sample: dict[str, np.ndarray]) -> Peak | None:
    """The activation peak of ``module`` on ``sample`` (the declared inputs at ``max_batch_size``):
    on fake tensors, else (a forward that reads values) a CPU run; None when neither runs (the
    manifest then states the fallback rule, weight files + I/O)."""
    from torch._subclasses.fake_tensor import (
        DataDependentOutputException,
        DynamicOutputShapeException,
        UnsupportedOperatorException,
    )

    try:
        return Peak(peak_bytes=_run(module, m, sample, fake=True), method=FAKE)
    except (DataDependentOutputException, DynamicOutputShapeException, UnsupportedOperatorException):
        pass
    except Exception:  # noqa: BLE001 - an estimate never fails the build: it falls back on the rule
        pass
    try:
        return Peak(peak_bytes=_run(module, m, sample, fake=False), method=CPU_RUN)
    except Exception:  # noqa: BLE001
        return None
