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
