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
