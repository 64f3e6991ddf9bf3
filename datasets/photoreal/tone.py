"""A phone camera's auto exposure and tone curve, applied to Cycles' linear (scene-referred) frame.

Cycles' light levels vary by two orders of magnitude between an HDRI courtyard and a dim
room; a camera meters the scene and compresses highlights. Doing it here, from the linear
frame, keeps every image exposed like a photo instead of clipped white or murky.
"""

from __future__ import annotations

import numpy as np

KEY = 0.22  # mid-grey the meter aims for (linear)


def aces(x: np.ndarray) -> np.ndarray:
    """Narkowicz's fit of the ACES filmic curve: linear scene -> linear display, soft shoulder."""
    return np.clip((x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14), 0, 1)


def to_srgb8(x: np.ndarray) -> np.ndarray:
    x = np.clip(x, 0, 1)
    y = np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, 1 / 2.4) - 0.055)
    return (y * 255 + 0.5).astype(np.uint8)


def expose(rgb: np.ndarray, stops: float = 0.0) -> np.ndarray:
    """Linear RGB (H, W, 3) -> sRGB uint8 RGB: metered on the log-average luminance, plus
    `stops` of exposure compensation (the photographer's, or the meter's error)."""
    lum = rgb @ np.array([0.2126, 0.7152, 0.0722], np.float32)
    small = lum[::4, ::4]
    # The guard against log(0) scales with the frame, so metering does not depend on the light level.
    eps = 1e-4 * float(small.mean()) + 1e-12
    logavg = float(np.exp(np.mean(np.log(small + eps))))
    gain = KEY / max(logavg, 1e-12) * 2.0**stops
    return to_srgb8(aces(rgb * gain))
