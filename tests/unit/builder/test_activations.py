"""The activation peak counted on fake tensors (or a CPU run), without a GPU: exact on small chains."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import torch
from torch import nn

from cdk_triton.builder.activations import BLOCK, CPU_RUN, FAKE, activation_peak

B, N = 8, 64
UNIT = B * N * 4  # one fp32 [8, 64] tensor: 2048 bytes, a multiple of the 512-byte block


def _spec() -> Any:
    return SimpleNamespace(inputs=[SimpleNamespace(name="x")])


def _sample() -> dict[str, np.ndarray]:
    return {"x": np.ones((B, N), dtype=np.float32)}


class Chain(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = x * 2  # x, a
        b = a + 1  # x, a, b: the peak, 3 tensors
        del a
        c = b * 3  # x, b, c
        return c


class ViewsAndInPlace(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = x * 2  # x, a
        v = a.view(B * N)  # a view: no new storage
        v.relu_()  # in place: no new storage
        return v.view(B, N)


class ReadsValues(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if bool(x.sum() > 0):  # a value fake tensors cannot know
            return x * 2
        return x


def test_the_peak_counts_inputs_intermediates_and_outputs_alive_at_once() -> None:
    peak = activation_peak(Chain(), _spec(), _sample())
    assert peak is not None and (peak.peak_bytes, peak.method) == (3 * UNIT, FAKE)


def test_views_and_in_place_ops_allocate_nothing() -> None:
    peak = activation_peak(ViewsAndInPlace(), _spec(), _sample())
    assert peak is not None and peak.peak_bytes == 2 * UNIT


def test_each_storage_is_rounded_up_to_the_allocator_block() -> None:
    sample = {"x": np.ones((1, 3), dtype=np.float32)}  # 12 bytes
    peak = activation_peak(Chain(), _spec(), sample)
    assert peak is not None and peak.peak_bytes == 3 * BLOCK


def test_a_forward_that_reads_values_is_counted_on_a_cpu_run() -> None:
    peak = activation_peak(ReadsValues(), _spec(), _sample())
    # x, then the scalar sum and the comparison (one block each, freed), then x * 2
    assert peak is not None and peak.method == CPU_RUN and peak.peak_bytes == 2 * UNIT


def test_the_same_module_and_inputs_give_the_same_bytes_and_parameters_are_not_counted() -> None:
    torch.manual_seed(0)
    lin = nn.Linear(N, 1000).eval()  # 256 kB of weights: not activations
    first = activation_peak(lin, _spec(), _sample())
    again = activation_peak(lin, _spec(), _sample())
    assert first == again and first is not None
    out = -(-B * 1000 * 4 // BLOCK) * BLOCK  # 32000 bytes in 512-byte blocks
    assert first.peak_bytes == UNIT + out  # the input and the output; the weights are not activations


def test_a_module_that_fails_everywhere_gives_no_estimate() -> None:
    class Broken(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            raise RuntimeError("no")

    assert activation_peak(Broken(), _spec(), _sample()) is None
