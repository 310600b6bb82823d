"""Tiny factories for build-stage tests (each builds in milliseconds)."""

import torch
from torch import nn


class Tiny(nn.Module):
    def __init__(self, features: int = 4, outputs: int = 3) -> None:
        super().__init__()
        self.fc = nn.Linear(features, outputs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.fc(x))


def tiny(features: int = 4, outputs: int = 3) -> nn.Module:
    return Tiny(features, outputs).eval()


def raises() -> nn.Module:
    raise RuntimeError("weights are missing")


def not_a_module() -> object:
    return {"weights": 1}


class Noisy(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.rand_like(x)


def noisy() -> nn.Module:
    return Noisy()


class Unbatched(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=0)  # drops the batch dim


def unbatched() -> nn.Module:
    return Unbatched().eval()


class TraceHazard(nn.Module):
    """Python control flow on the batch size: tracing at batch 2 bakes in the doubled branch."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2 if x.shape[0] > 1 else x


def trace_hazard() -> nn.Module:
    return TraceHazard().eval()


class Unscriptable(nn.Module):
    def forward(self, x: torch.Tensor, *extra: torch.Tensor) -> torch.Tensor:
        return x + sum(extra)


def unscriptable() -> nn.Module:
    return Unscriptable().eval()


class SeqMean(nn.Module):
    """A sequence model: token ids [batch, seq] -> the mean of their embeddings [batch, 3]."""

    def __init__(self, vocab: int = 50, dim: int = 3) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.emb(ids).mean(dim=1)


def seq_mean(vocab: int = 50, dim: int = 3) -> nn.Module:
    return SeqMean(vocab, dim).eval()


class SeqHazard(nn.Module):
    """Python control flow on the sequence length: a trace at one length bakes in its branch."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=1, keepdim=True) * 2 if x.shape[1] > 4 else x.mean(dim=1, keepdim=True)


def seq_hazard() -> nn.Module:
    return SeqHazard().eval()


# --- device pins: what a trace bakes into the graph (tests/unit/builder/test_portability.py)


class ArangeOnInputDevice(nn.Module):
    """``torch.arange(n, device=x.device)``: the trace records the device of the example input."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, :3] + torch.arange(3, device=x.device)


def arange_on_input_device() -> nn.Module:
    return ArangeOnInputDevice().eval()


class ZerosOnInputDevice(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, :3] + torch.zeros(3, device=x.device)


def zeros_on_input_device() -> nn.Module:
    return ZerosOnInputDevice().eval()


class MovedToInputDevice(nn.Module):
    """A tensor made on CPU and moved with ``.to(x.device)`` (transformers' attention-mask shape)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, :3] * torch.ones(3).to(x.device)


def moved_to_input_device() -> nn.Module:
    return MovedToInputDevice().eval()


class LiteralCpuTensor(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, :3] + torch.tensor([1.0, 2.0, 3.0], device="cpu")


def literal_cpu_tensor() -> nn.Module:
    return LiteralCpuTensor().eval()


class InnerPinned(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.full((3,), 0.5, device=x.device)


class OuterClean(nn.Module):
    """The pin sits in a submodule's graph, not in the top module's forward."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = InnerPinned()
        self.fc = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(self.fc(x))


def pinned_in_submodule() -> nn.Module:
    return OuterClean().eval()


class ScriptedDevice(nn.Module):
    """Portable: scripted code reads ``x.device`` when it runs (``prim::device``)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, :3] + torch.zeros(3, device=x.device) + torch.zeros_like(x[:, :3])


def scripted_device() -> nn.Module:
    return ScriptedDevice().eval()


class ScriptedCudaDevice(nn.Module):
    """Scripted code naming ``torch.device("cuda:0")``: runs on CPU here, pinned to GPU 0 there."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.is_cuda:
            x = x.to(torch.device("cuda:0"))
        return x[:, :3]


def scripted_cuda_device() -> nn.Module:
    return ScriptedCudaDevice().eval()


class ScriptedCudaString(nn.Module):
    """The string form: ``x.to("cuda")``."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.is_cuda:
            x = x.to("cuda")
        return x[:, :3]


def scripted_cuda_string() -> nn.Module:
    return ScriptedCudaString().eval()


class HashTensor(nn.Module):
    """A linear layer whose forward also calls ``torch.hash_tensor``: an operator newer than libtorch 2.5
    (Triton 24.09), so the artifact passes parity with the build's torch and fails to load in 24.09's."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.fc(x)) + torch.hash_tensor(x).to(x.dtype).unsqueeze(-1) * 0.0


def hash_tensor() -> nn.Module:
    return HashTensor().eval()
