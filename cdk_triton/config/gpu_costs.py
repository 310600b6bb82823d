"""The fixed GPU costs of a Triton process, as separate terms of the capacity arithmetic.

A model's ``memory_bytes`` is what one of its instances holds (weights + activation peak); a GPU also
holds what the processes hold before and beside any model. Each term says per what it is paid and
where its number comes from; the defaults are the H100 readings of 2026-11-27
(``../shared/data/gpu-h100-2026-11-27/probe-resnet50.json``: one NVIDIA H100 80GB HBM3, driver
580.159.04, CUDA 13.0, torch 2.11.0+cu130, a ResNet-50 TorchScript loaded and run at batch 32).

- The CUDA context, once per process that initialises CUDA. Triton's libtorch, ONNX Runtime and
  TensorRT backends run inside the server process and share its context. A ``KIND_GPU`` python-backend
  instance runs in its own stub process, and when its code initialises CUDA (torch on the GPU, CuPy)
  it pays a context of its own: python_backend README, "Multiple Model Instance Support"
  (https://github.com/triton-inference-server/python_backend#multiple-model-instance-support, read
  2026-11-27: "Python backend spawns a separate process for each model instance. This is in contrast
  with how other Triton backends such as ONNXRuntime ... handle multiple instances"). The capacity arithmetic counts one per python ``KIND_GPU`` instance (whether the
  code initialises CUDA is not declared: the conservative side).
- Triton's CUDA memory pool, per GPU: 64 MB by default (``tritonserver --help``,
  ``--cuda-memory-pool-byte-size``).
- The backends' own fixed cost, once per server process that loads the backend: cuBLAS / cuDNN handles
  and workspaces, which the first inference loads (for libtorch the H100 reading; for ONNX Runtime's
  and TensorRT's CUDA paths the same figure, an assumption: the reading ran ONNX Runtime on CPU only).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from cdk_triton.config import formats

PER_PROCESS = "per process"
PER_GPU = "per GPU"
PER_SERVER_BACKEND = "per server process loading the backend"


@dataclass(frozen=True, kw_only=True, slots=True)
class GpuCost:
    """One fixed term: bytes, per what it is paid, and where the number comes from."""

    name: str
    bytes: int
    per: str
    source: str


_READING = "H100 reading 2026-11-27 (../shared/data/gpu-h100-2026-11-27/probe-resnet50.json)"
#: NVML process bytes after loading the ResNet-50 (666,894,336) minus torch's reserved bytes then
#: (123,731,968): the CUDA context of one process.
CUDA_CONTEXT = GpuCost(
    name="cuda_context",
    bytes=666_894_336 - 123_731_968,
    per=PER_PROCESS,
    source=f"{_READING}: NVML process bytes after loading minus torch reserved after loading",
)
#: Triton's CUDA memory pool on each GPU (``--cuda-memory-pool-byte-size`` default 64 MB).
TRITON_CUDA_POOL = GpuCost(
    name="triton_cuda_pool",
    bytes=64 * 1024**2,
    per=PER_GPU,
    source="tritonserver --help, --cuda-memory-pool-byte-size default (64 MB per GPU)",
)
#: NVML after a batch-32 inference (1,337,982,976) minus torch reserved then (618,659,840) minus the
#: context: the cuBLAS / cuDNN handles and workspaces the first inference loaded.
_LIBRARIES = 1_337_982_976 - 618_659_840 - CUDA_CONTEXT.bytes
BACKEND_COSTS = {
    "libtorch": GpuCost(
        name="libtorch",
        bytes=_LIBRARIES,
        per=PER_SERVER_BACKEND,
        source=f"{_READING}: NVML after a batch-32 inference minus torch reserved minus the context",
    ),
    "onnxruntime": GpuCost(
        name="onnxruntime",
        bytes=_LIBRARIES,
        per=PER_SERVER_BACKEND,
        source="assumption: the libtorch reading (cuBLAS / cuDNN); no ONNX Runtime CUDA reading yet",
    ),
    "tensorrt": GpuCost(
        name="tensorrt",
        bytes=_LIBRARIES,
        per=PER_SERVER_BACKEND,
        source="assumption: the libtorch reading (cuBLAS / cuDNN tactics); no TensorRT reading yet",
    ),
}


def backend_cost_of(fmt: str) -> str | None:
    """The :data:`BACKEND_COSTS` key of a format whose models run inside the server process: its
    row's ``release_fact`` (None: an unknown format, one without an in-process cost reading, or one
    whose instances run in stub processes of their own, ``Format.stub_per_instance``)."""
    row = formats.lookup(fmt)
    if row is None or row.stub_per_instance or row.release_fact not in BACKEND_COSTS:
        return None
    return row.release_fact


def in_process_formats() -> tuple[str, ...]:
    """The formats whose backends run inside the server process with a fixed cost (every one a
    server may load when the caller does not say: the conservative side)."""
    return tuple(f for f in formats.names() if backend_cost_of(f) is not None)


#: A KIND_GPU python-backend instance: a stub process with a CUDA context of its own.
PYTHON_STUB = GpuCost(
    name="python_stub_context",
    bytes=CUDA_CONTEXT.bytes,
    per="per KIND_GPU python-backend instance (its stub process)",
    source=CUDA_CONTEXT.source
    + "; python_backend README 'Multiple Model Instance Support' (read 2026-11-27)",
)


def server_costs(served: Iterable[str]) -> list[GpuCost]:
    """The fixed terms of one GPU of a Triton server that serves models of the formats ``served``: the server's
    context, Triton's CUDA pool, and each in-process backend's fixed cost once."""
    backends = sorted({b for b in map(backend_cost_of, served) if b is not None})
    return [CUDA_CONTEXT, TRITON_CUDA_POOL, *(BACKEND_COSTS[b] for b in backends)]


def server_bytes(served: Iterable[str]) -> int:
    """The bytes of :func:`server_costs`."""
    return sum(c.bytes for c in server_costs(served))


def instance_bytes(fmt: str) -> int:
    """The fixed bytes each KIND_GPU instance of a model of ``fmt`` adds beyond its own memory: a
    python-backend instance's stub context; nothing for a backend inside the server."""
    row = formats.lookup(fmt)
    return PYTHON_STUB.bytes if row is not None and row.stub_per_instance else 0
