"""The face reader networks (torch; training only — the runtime loads their ONNX export).

Small CNNs over a square BGR crop with three heads: the face (kind and value, one class per
FACE_CLASSES entry), the body colour, and whether the die is cocked. Each also returns the feature
vector its heads classify: a table's dice memory (vision/memory.py) compares dice by it.

- `FaceReaderNet` (the shipped reader, `--reader-arch residual`): a full-resolution stem, since
  numerals on a small die are only a few pixels tall; about 260 MFLOP per 64-px crop.
- `CompactReaderNet` (`--reader-arch compact`): four stages of a stride-2 convolution (every input
  pixel is still seen) and a residual 3x3 convolution, about 30 MFLOP per 64-px crop: it trains at
  about 300 crops/s on two laptop cores, the residual one at about 40.
"""

from __future__ import annotations

import torch
from torch import nn


def _conv(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class _Residual(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.body = nn.Sequential(_conv(c, c), nn.Conv2d(c, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c))
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.act(x + self.body(x))


class _Reader(nn.Module):
    """What every reader network shares: pooled features and the three heads that classify them."""

    def _heads(self, layers: list[nn.Module], cin: int, n_faces: int, n_colours: int) -> None:
        self.features = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.drop = nn.Dropout(0.1)
        self.face = nn.Linear(cin, n_faces)
        self.colour = nn.Linear(cin, n_colours)
        self.cocked = nn.Linear(cin, 1)

    def forward(self, x: torch.Tensor):
        """x: (N, 3, S, S) float BGR in 0-255 (scaled here, so the runtime feeds raw pixels).
        Returns face, colour and cocked logits, and the features they were computed from."""
        feat = self.features(x * (1.0 / 255.0) - 0.5)
        f = self.drop(feat)
        return self.face(f), self.colour(f), self.cocked(f), feat


class FaceReaderNet(_Reader):
    def __init__(self, n_faces: int, n_colours: int, width: int = 32, blocks: tuple[int, ...] = (1, 2, 2, 1)) -> None:
        super().__init__()
        # A full-resolution stem: numerals on a small die are only a few pixels tall.
        layers: list[nn.Module] = [_conv(3, 24)]
        cin = 24
        for i, n in enumerate(blocks):  # 32x32, 16x16, 8x8, 4x4
            cout = width * 2 ** i
            layers += [_conv(cin, cout, 2), *(_Residual(cout) for _ in range(n))]
            cin = cout
        self._heads(layers, cin, n_faces, n_colours)


class _Stage(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.down = _conv(cin, cout, 2)
        self.body = nn.Sequential(nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.down(x)
        return self.act(x + self.body(x))


class CompactReaderNet(_Reader):
    def __init__(self, n_faces: int, n_colours: int, width: int = 16, stages: int = 4) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        cin = 3
        for i in range(stages):  # 64 px: 32, 16, 8, 4
            cout = width * 2 ** i
            layers.append(_Stage(cin, cout))
            cin = cout
        self._heads(layers, cin, n_faces, n_colours)
