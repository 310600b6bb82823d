"""Model factories of the example app: a small ResNet-style classifier and a tiny BERT encoder.

Each factory returns an ``nn.Module`` in eval mode. The build stage seeds torch (the declaration's
required ``seed``) before calling a factory, so weights are reproducible; nothing is downloaded.
"""

from __future__ import annotations

import torch
from torch import nn


class ResidualBlock(nn.Module):
    """conv-bn-relu-conv-bn plus a (projected) shortcut."""

    def __init__(self, cin: int, cout: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut: nn.Module = nn.Identity()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + self.shortcut(x))


class SmallResNet(nn.Module):
    """A CIFAR-sized ResNet: FP32 [N,3,H,W] -> logits [N,num_classes]."""

    def __init__(self, num_classes: int = 10, width: int = 16, blocks: int = 3) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU()
        )
        layers: list[nn.Module] = []
        cin = width
        for i in range(blocks):
            cout = width * (2 ** min(i, 2))
            layers.append(ResidualBlock(cin, cout, stride=1 if i == 0 else 2))
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.pool(self.layers(self.stem(x))), 1))


def resnet_classifier(num_classes: int = 10, width: int = 16, blocks: int = 3) -> nn.Module:
    """The example image classifier (random weights from the declared seed; BN statistics randomized
    too so that eval-mode BatchNorm is not an identity)."""
    model = SmallResNet(num_classes=num_classes, width=width, blocks=blocks)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    return model.eval()


class BertEncoder(nn.Module):
    """Wraps a transformers BertModel so export sees tensors in and tensors out."""

    def __init__(self, bert: nn.Module) -> None:
        super().__init__()
        self.bert = bert

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.bert(input_ids=input_ids, attention_mask=attention_mask, return_dict=False)
        return out[0], out[1]


def bert_encoder(
    num_hidden_layers: int = 2,
    hidden_size: int = 128,
    num_attention_heads: int = 2,
    vocab_size: int = 1000,
    max_position_embeddings: int = 128,
) -> nn.Module:
    """A tiny BERT-style encoder from a BertConfig (random weights, nothing downloaded)."""
    from transformers import BertConfig, BertModel

    config = BertConfig(
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        num_hidden_layers=num_hidden_layers,
        num_attention_heads=num_attention_heads,
        intermediate_size=hidden_size * 4,
        max_position_embeddings=max_position_embeddings,
        attn_implementation="eager",
    )
    return BertEncoder(BertModel(config, add_pooling_layer=True)).eval()
