"""Procedural table surfaces: wood, felt, neoprene mat, paper, cloth, glass, battle map, tray.

Every texture is periodic (built from FFT-filtered noise), so the renderer can tile it with
any scale and rotation. A small pool is built once per process from a fixed seed.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

SURFACES = ("wood", "felt", "neoprene", "paper", "cloth", "glass", "battlemap", "tray")
SIZE = 512


def _noise(rng: np.random.Generator, size: int, scale: float, aniso: float = 1.0) -> np.ndarray:
    """Periodic band-limited noise in [0,1]; scale ~ feature size in pixels."""
    # float32 and real FFTs: surfaces are built when a worker first meets them, so their
    # cost is start-up latency of every synth process.
    white = rng.standard_normal((size, size), dtype=np.float32)
    fy = np.fft.fftfreq(size).astype(np.float32)[:, None]
    fx = np.fft.rfftfreq(size).astype(np.float32)[None, :]
    r2 = (fx * aniso) ** 2 + fy**2
    filt = np.exp(-r2 * np.float32(scale**2 * 2))
    n = np.fft.irfft2(np.fft.rfft2(white) * filt, s=(size, size))
    n -= n.min()
    return n / max(n.max(), 1e-9)


def _tint(gray: np.ndarray, lo, hi) -> np.ndarray:
    lo = np.array(lo, np.float32)[None, None]
    hi = np.array(hi, np.float32)[None, None]
    return lo + (hi - lo) * gray[..., None]


def make_surface(kind: str, rng: np.random.Generator) -> np.ndarray:
    """One RGB float32 texture in [0,1]."""
    s = SIZE
    if kind == "wood":
        base = rng.choice([(0.45, 0.28, 0.14), (0.62, 0.45, 0.28), (0.30, 0.18, 0.10), (0.75, 0.60, 0.42)])
        n = _noise(rng, s, 3, aniso=12)
        rings = 0.5 + 0.5 * np.sin(n * rng.uniform(25, 60))
        fine = _noise(rng, s, 0.7, aniso=8)
        g = 0.55 * rings + 0.45 * fine
        lo = np.array(base) * 0.6
        img = _tint(g, lo, np.array(base) * 1.15)
    elif kind == "felt":
        base = np.array(rng.choice([(0.08, 0.35, 0.12), (0.45, 0.05, 0.06), (0.07, 0.12, 0.40), (0.12, 0.12, 0.12), (0.30, 0.10, 0.35)]))
        g = 0.7 * _noise(rng, s, 0.6) + 0.3 * _noise(rng, s, 8)
        img = _tint(g, base * 0.7, base * 1.25)
    elif kind == "neoprene":
        base = np.array(rng.choice([(0.06, 0.06, 0.07), (0.10, 0.12, 0.18), (0.15, 0.08, 0.06), (0.2, 0.2, 0.22)]))
        g = _noise(rng, s, 0.5)
        img = _tint(g, base * 0.8, base * 1.3)
        if rng.random() < 0.5:  # printed playmat art: a soft, muted two-tone wash
            art = _noise(rng, s, 50)[..., None]
            tone = np.array(rng.uniform(0.1, 0.5, 3))
            img = img * (1 - 0.5 * art) + tone * 0.5 * art
    elif kind == "paper":
        base = np.array(rng.choice([(0.93, 0.92, 0.88), (0.96, 0.95, 0.93), (0.90, 0.86, 0.76)]))
        g = 0.8 * _noise(rng, s, 0.6) + 0.2 * _noise(rng, s, 20)
        img = _tint(g, base * 0.94, base * 1.02)
        if rng.random() < 0.5:  # ruled character sheet lines
            step = int(rng.integers(24, 48))
            img[::step, :, :] *= np.array([0.75, 0.8, 0.95])
    elif kind == "cloth":
        base = np.array(rng.uniform(0.1, 0.8, 3))
        period = int(rng.choice([4, 8]))
        y, x = np.mgrid[0:s, 0:s]
        weave = 0.5 + 0.25 * np.sin(2 * np.pi * x / period) * np.sign(np.sin(2 * np.pi * y / (2 * period))) + 0.25 * _noise(rng, s, 1)
        img = _tint(np.clip(weave, 0, 1), base * 0.7, base * 1.2)
        if rng.random() < 0.4:  # tartan stripes
            stripe = (((x // 32) + (y // 32)) % 2)[..., None] * np.array(rng.uniform(-0.15, 0.15, 3))
            img = img + stripe
    elif kind == "glass":
        base = np.array(rng.choice([(0.05, 0.06, 0.07), (0.55, 0.6, 0.62), (0.2, 0.22, 0.2)]))
        g = _noise(rng, s, 60)
        img = _tint(g, base * 0.8, base * 1.3 + 0.08)
    elif kind == "battlemap":
        base = np.array(rng.choice([(0.85, 0.80, 0.66), (0.55, 0.62, 0.45), (0.6, 0.6, 0.62), (0.9, 0.9, 0.9)]))
        g = 0.6 * _noise(rng, s, 20) + 0.4 * _noise(rng, s, 1.5)
        img = _tint(g, base * 0.8, base * 1.08)
        step = int(rng.choice([32, 64]))
        line = np.array(rng.choice([(0.2, 0.2, 0.2), (0.35, 0.25, 0.15), (0.1, 0.2, 0.5)]))
        w = int(rng.integers(1, 3))
        for off in range(w):
            img[off::step, :, :] = line
            img[:, off::step, :] = line
    else:  # tray: suede / faux leather lining
        base = np.array(rng.choice([(0.35, 0.05, 0.08), (0.05, 0.05, 0.05), (0.10, 0.08, 0.20), (0.40, 0.30, 0.20)]))
        g = 0.6 * _noise(rng, s, 0.8) + 0.4 * _noise(rng, s, 6)
        img = _tint(g, base * 0.7, base * 1.3)
    return np.clip(img, 0, 1).astype(np.float32)


PER_KIND = 3
N_SURFACES = len(SURFACES) * PER_KIND


@lru_cache(maxsize=None)
def surface(index: int) -> tuple[str, np.ndarray]:
    """Surface `index` of the pool (kind = SURFACES[index // PER_KIND]), RGB uint8.

    Each entry has its own fixed seed, so a process builds only the surfaces its scenes use
    and every process builds the same ones."""
    index %= N_SURFACES
    kind = SURFACES[index // PER_KIND]
    img = make_surface(kind, np.random.default_rng([20260101, index]))
    return kind, (img * 255).astype(np.uint8)
