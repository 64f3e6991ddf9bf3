"""The up-face finder network (torch; training only — the runtime loads its ONNX export).

Where in a die's crop its value numeral is, and which way it is turned (datasets/upface.py
defines the target). Two stages:

1. A small fully convolutional trunk gives an 8x8 map; the point is the soft-argmax of a
   one-channel score over it, so it is translation-equivariant (a detector box that lands
   off-centre moves the answer with it) and bounded to the crop. Facing, and the part of the
   angle the die's shape gives away (a d10's kite points at its pole, a d4's numeral at the up
   vertex), are read from the trunk's features pooled under that score map, plus its mean.
2. A glimpse: a window around the point, resampled at full resolution, read by a second small
   CNN for the numeral's own turn. On a d12 or a d20 only the glyph says which way is up, and
   at stride 8 the trunk has already averaged its strokes away.

The two angle estimates are summed (as unnormalised cos, sin), so each learns what the other
cannot. About 95k parameters and 10 MFLOP per 64-px crop.

A larger crop (`size` 128) first halves itself with one more strided layer, so the point is found
as at 64 px, while the glimpse is cut from the full-resolution crop at twice the pixels: a d20's
numeral is about 5 px tall in a 64-px crop, too few to tell which way it is turned.
"""

from __future__ import annotations

import torch
from torch import nn

# Output columns (vision/upface.py reads them in this order).
COLUMNS = ("u", "v", "cos", "sin", "facing")
GLIMPSE = 24  # pixels of the window at 64 px (about native resolution); it scales with the crop
GLIMPSE_SIDE = 0.34  # its side in crop sides: a numeral with a margin, on every kind


def _conv(cin: int, cout: int, k: int = 3, stride: int = 1, dilation: int = 1) -> nn.Sequential:
    pad = dilation * (k // 2)
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, pad, dilation=dilation, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


def _grid(n: int) -> torch.Tensor:
    """Cell centres of an n x n grid in crop units (-0.5..0.5; x right, y down), as (n*n, 2)."""
    c = (torch.arange(n, dtype=torch.float32) + 0.5) / n - 0.5
    yy, xx = torch.meshgrid(c, c, indexing="ij")
    return torch.stack([xx.reshape(-1), yy.reshape(-1)], 1)


class UpFaceNet(nn.Module):
    def __init__(self, width: int = 16, grid: int = 8, size: int = 64) -> None:
        super().__init__()
        if size % 64:
            raise ValueError(f"the finder's crop side must be a multiple of 64, not {size}")
        w, self.size = width, size
        self.glimpse_px = glimpse = GLIMPSE * size // 64
        # Down to 64 px before the trunk, so that it sees the die as at 64 px (see the module notes).
        down = [_conv(3 if i == 0 else 8, 8, 3, 2) for i in range(size // 64 - 1)]
        self.trunk = nn.Sequential(
            *down,
            # A 5x5 stride-2 stem still sees every pixel: a small die's numeral strokes are 1-2 px.
            _conv(8 if down else 3, w, 5, 2),  # 32x32
            _conv(w, 2 * w, 3, 2),  # 16x16
            _conv(2 * w, 2 * w),
            _conv(2 * w, 4 * w, 3, 2),  # 8x8
            # Dilated: the last layer must see the whole die to tell the up face from its neighbours.
            _conv(4 * w, 3 * w, 3, 1, 2),
        )
        self.score = nn.Conv2d(3 * w, 1, 1)
        self.head = nn.Sequential(nn.Linear(6 * w, 32), nn.ReLU(inplace=True), nn.Linear(32, 3))
        self.glimpse = nn.Sequential(
            _conv(3, 12),  # 24x24 (48x48 at 128 px)
            _conv(12, 24, 3, 2),  # 12x12
            _conv(24, 32, 3, 2),  # 6x6
            _conv(32, 32, 3, 2),  # GLIMPSE/8 square: keeps where strokes are, which a global pool would not
            nn.Flatten(),
            nn.Linear(32 * (glimpse // 8) ** 2, 24), nn.ReLU(inplace=True), nn.Linear(24, 2),
        )
        self.register_buffer("cells", _grid(grid), persistent=False)
        # grid_sample's coordinates run -1..1 over the crop: twice crop units.
        self.register_buffer("window", _grid(glimpse) * (2 * GLIMPSE_SIDE), persistent=False)

    def forward(self, x: torch.Tensor, look_at: torch.Tensor | None = None) -> torch.Tensor:
        """x: (N, 3, S, S) BGR in 0..1, S = size. Returns (N, 5): u, v, cos, sin (not normalised), facing.

        look_at: (N, 2) where to take the glimpse instead of the found point (training shows it
        the labelled point, jittered, so it learns to read numerals before the point is good)."""
        x = x - 0.5
        f = self.trunk(x)
        attn = torch.softmax(self.score(f).flatten(1), dim=1)  # (N, cells): where the numeral is
        f = f.flatten(2)  # (N, C, cells)
        uv = attn @ self.cells
        at_point = torch.bmm(f, attn.unsqueeze(2)).squeeze(2)
        rest = self.head(torch.cat([at_point, f.mean(2)], 1))
        centre = (uv if look_at is None else look_at).detach()
        side = self.glimpse_px
        grid = (self.window.unsqueeze(0) + 2 * centre.unsqueeze(1)).reshape(-1, side, side, 2)
        win = nn.functional.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
        turn = rest[:, :2] + self.glimpse(win)
        return torch.cat([uv, turn, rest[:, 2:]], 1)
