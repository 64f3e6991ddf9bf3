"""The face reader network (torch; training only — the runtime loads its ONNX export).

A small residual CNN over a 64x64 BGR crop with three heads: the face (kind and value, one
class per FACE_CLASSES entry), the body colour, and whether the die is cocked.
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


class FaceReaderNet(nn.Module):
    def __init__(self, n_faces: int, n_colours: int, width: int = 32, blocks: tuple[int, ...] = (1, 2, 2, 1)) -> None:
        super().__init__()
        # A full-resolution stem: numerals on a small die are only a few pixels tall.
        layers: list[nn.Module] = [_conv(3, 24)]
        cin = 24
        for i, n in enumerate(blocks):  # 32x32, 16x16, 8x8, 4x4
            cout = width * 2 ** i
            layers += [_conv(cin, cout, 2), *(_Residual(cout) for _ in range(n))]
            cin = cout
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.1)]
        self.features = nn.Sequential(*layers)
        self.face = nn.Linear(cin, n_faces)
        self.colour = nn.Linear(cin, n_colours)
        self.cocked = nn.Linear(cin, 1)

    def forward(self, x: torch.Tensor):
        """x: (N, 3, 64, 64) float BGR in 0-255 (scaled here, so the runtime feeds raw pixels)."""
        f = self.features(x * (1.0 / 255.0) - 0.5)
        return self.face(f), self.colour(f), self.cocked(f)
