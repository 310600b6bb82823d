"""The activation-aware memory estimate (``builder.activations``) against the H100 reading, and its cost.

A ResNet-50 (the torchvision architecture, written out here: Bottleneck blocks [3, 4, 6, 3]; random
weights) at batch 32 FP32 [3, 224, 224]: weights + the fake-tensor activation peak must lie within
323-581 MB (0.75 x 431 to 1.25 x 465 MB, the peak allocated on one H100 80GB, torch 2.11, 2026-11-27,
../shared/data/gpu-h100-2026-11-27/). BERT-base (transformers BertModel, BertConfig defaults, random
weights, sequence 128) at batch 16: reported beside it (its H100 reference is still to be measured).
Cost: the seconds the estimate adds to a model's export, beside the TorchScript trace + save of the
same model (what the export of it does anyway).

python -m bench.memory_estimate
"""

from __future__ import annotations

import io
import time
from types import SimpleNamespace
from typing import Any

from bench.build_common import write_result

LOW, HIGH = 0.75 * 431e6, 1.25 * 465e6


def resnet50() -> Any:
    import torch
    from torch import nn

    class Bottleneck(nn.Module):
        def __init__(self, inp: int, planes: int, stride: int = 1, down: nn.Module | None = None) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(inp, planes, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(planes * 4)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = down

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class ResNet50(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inplanes = 64
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            self.layer1 = self._make(64, 3)
            self.layer2 = self._make(128, 4, 2)
            self.layer3 = self._make(256, 6, 2)
            self.layer4 = self._make(512, 3, 2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(2048, 1000)

        def _make(self, planes: int, blocks: int, stride: int = 1) -> nn.Sequential:
            down = None
            if stride != 1 or self.inplanes != planes * 4:
                down = nn.Sequential(
                    nn.Conv2d(self.inplanes, planes * 4, 1, stride, bias=False), nn.BatchNorm2d(planes * 4)
                )
            layers = [Bottleneck(self.inplanes, planes, stride, down)]
            self.inplanes = planes * 4
            layers += [Bottleneck(self.inplanes, planes) for _ in range(1, blocks)]
            return nn.Sequential(*layers)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    torch.manual_seed(0)
    return ResNet50().eval()


def bert_base() -> Any:
    import torch
    from transformers import BertConfig, BertModel

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = BertModel(BertConfig())

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            return self.bert(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    torch.manual_seed(0)
    return Encoder().eval()


def weights_bytes(module: Any) -> int:
    return sum(t.numel() * t.element_size() for t in [*module.parameters(), *module.buffers()])


def trace_seconds(module: Any, args: tuple[Any, ...]) -> float:
    import torch

    t = time.perf_counter()
    with torch.no_grad():
        ts = torch.jit.trace(module, args, check_trace=False, strict=False)
    torch.jit.save(ts, io.BytesIO())
    return time.perf_counter() - t


def measure(module: Any, names: list[str], sample: dict[str, Any]) -> dict[str, Any]:
    import torch

    from cdk_triton.builder.activations import activation_peak

    spec = SimpleNamespace(inputs=[SimpleNamespace(name=n) for n in names])
    t = time.perf_counter()
    peak = activation_peak(module, spec, sample)  # type: ignore[arg-type]
    seconds = time.perf_counter() - t
    again = activation_peak(module, spec, sample)  # type: ignore[arg-type]
    assert peak is not None and again == peak, "the estimate is not deterministic"
    small = tuple(torch.from_numpy(sample[n][:2].copy()) for n in names)  # the export traces at batch 2
    weights = weights_bytes(module)
    return {
        "weights_bytes": weights,
        "activation_peak_bytes": peak.peak_bytes,
        "method": peak.method,
        "memory_bytes": weights + peak.peak_bytes,
        "estimate_s": seconds,
        "trace_and_save_s": trace_seconds(module, small),
    }


def main() -> int:
    import numpy as np

    rng = np.random.default_rng(0)
    resnet = measure(resnet50(), ["x"], {"x": rng.standard_normal((32, 3, 224, 224), dtype=np.float32)})
    ids = rng.integers(0, 30522, (16, 128), dtype=np.int64)
    bert = measure(
        bert_base(), ["input_ids", "attention_mask"], {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    )
    mb = resnet["memory_bytes"] / 1e6
    summary = [
        {
            "label": "ResNet-50 FP32 batch 32: weights + activation peak (H100 peak allocated 431-465 MB)",
            "value": mb,
            "unit": "MB",
            "target": "323-581 MB",
        },
        {
            "label": f"BERT-base batch 16 seq 128: weights + activation peak ({bert['method']})",
            "value": bert["memory_bytes"] / 1e6,
            "unit": "MB",
            "target": None,
        },
        {
            "label": "ResNet-50 estimate / its TorchScript trace + save (build-time cost)",
            "value": resnet["estimate_s"] / resnet["trace_and_save_s"],
            "unit": "x",
            "target": None,
        },
        {
            "label": "BERT-base estimate / its TorchScript trace + save (build-time cost)",
            "value": bert["estimate_s"] / bert["trace_and_save_s"],
            "unit": "x",
            "target": None,
        },
    ]
    write_result(
        "memory_estimate", "python -m bench.memory_estimate", summary, {"resnet50": resnet, "bert_base": bert}
    )
    if not LOW <= resnet["memory_bytes"] <= HIGH:
        print(f"ResNet-50 estimate {mb:.0f} MB outside 323-581 MB")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
