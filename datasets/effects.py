"""Webcam effects applied to a rendered frame: exposure, white balance, vignetting, lens
distortion, blur, motion blur, sensor noise and JPEG. Geometry-changing effects (lens
distortion) also move the truth boxes, so they return the map they applied."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np


@dataclass(frozen=True)
class Effects:
    gain: float = 1.0
    gamma: float = 1.0
    wb: tuple[float, float, float] = (1.0, 1.0, 1.0)  # B, G, R multipliers
    vignette: float = 0.0
    distortion: float = 0.0  # k1 of a radial model, negative = barrel
    blur: float = 0.0  # gaussian sigma in px
    motion: float = 0.0  # motion blur length in px
    motion_angle: float = 0.0
    noise: float = 0.0  # sigma in grey levels
    jpeg: int = 0  # quality, 0 = none
    noise_seed: int = 0


def sample_effects(rng: np.random.Generator, strength: float = 1.0) -> Effects:
    """Random webcam conditions; strength 0 gives a clean frame."""
    s = strength
    return Effects(
        gain=float(np.exp(rng.normal(0, 0.18 * s))),
        gamma=float(np.exp(rng.normal(0, 0.12 * s))),
        wb=tuple(float(x) for x in np.exp(rng.normal(0, 0.05 * s, 3))),
        vignette=float(rng.uniform(0, 0.45) * s) if rng.random() < 0.6 else 0.0,
        distortion=float(rng.uniform(-0.25, 0.05) * s) if rng.random() < 0.3 else 0.0,
        blur=float(rng.uniform(0.3, 1.4) * s) if rng.random() < 0.6 else 0.0,
        motion=float(rng.uniform(2, 7) * s) if rng.random() < 0.1 else 0.0,
        motion_angle=float(rng.uniform(0, 180)),
        noise=float(rng.uniform(1.0, 7.0) * s) if rng.random() < 0.75 else 0.0,
        jpeg=int(rng.integers(35, 95)) if rng.random() < 0.6 * min(1.0, s) else 0,
        noise_seed=int(rng.integers(0, 2**31)),
    )


@lru_cache(maxsize=8)
def _vignette_r2(w: int, h: int) -> np.ndarray:
    """Squared normalised radius on a coarse grid: vignetting is smooth, so it is evaluated
    at 1/8 of the resolution and upsampled (a full-size float map per frame cost ~1 ms)."""
    gw, gh = max(2, w // 8), max(2, h // 8)
    x = ((np.arange(gw, dtype=np.float32) + 0.5) / gw * 2 - 1)[None, :]
    y = ((np.arange(gh, dtype=np.float32) + 0.5) / gh * 2 - 1)[:, None]
    return (x * x + y * y) / 2


# Sensor noise comes from one bank of unit-variance noise per image size, stored as uint8
# around 128 (NOISE_UNIT levels per sigma), so adding it is a single saturating
# cv2.addWeighted; drawing fresh noise per frame costs more than the render.
NOISE_UNIT = 24.0


@lru_cache(maxsize=4)
def _noise_bank(h: int, w: int) -> np.ndarray:
    rng = np.random.default_rng(12345)
    lum = rng.standard_normal((2 * h, 2 * w, 1), dtype=np.float32)
    chroma = rng.standard_normal((2 * h, 2 * w, 3), dtype=np.float32)
    # A luminance part shared by the channels plus a smaller chroma part.
    field = lum + 0.5 * chroma
    return np.clip(128 + NOISE_UNIT * field, 0, 255).astype(np.uint8)


@lru_cache(maxsize=40)  # k1 is rounded to 0.01 in [-0.25, 0.05]: keep every map (~2 MB each)
def _distortion_maps(w: int, h: int, k1: float):
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    f = max(w, h)
    xn, yn = (x - w / 2) / f, (y - h / 2) / f
    r2 = xn * xn + yn * yn
    # Output pixel (distorted) samples the undistorted render at r*(1+k1 r^2).
    fac = 1 + k1 * r2
    mx, my = (xn * fac * f + w / 2).astype(np.float32), (yn * fac * f + h / 2).astype(np.float32)
    # Fixed-point maps remap about twice as fast as float ones, same result to 1/32 px.
    return cv2.convertMaps(mx, my, cv2.CV_16SC2)


def distort_points(pts: np.ndarray, w: int, h: int, k1: float) -> np.ndarray:
    """Where undistorted pixel positions land after `apply` with distortion k1 (by inverse lookup)."""
    if not k1:
        return pts
    f = max(w, h)
    p = (pts - [w / 2, h / 2]) / f
    q = p.copy()
    for _ in range(8):  # solve q * (1 + k1 |q|^2) = p
        r2 = (q * q).sum(-1, keepdims=True)
        q = p / (1 + k1 * r2)
    return q * f + [w / 2, h / 2]


def distort_ids(ids: np.ndarray, k1: float) -> np.ndarray:
    """The id map moved like the image by `apply` (nearest neighbour: ids are labels)."""
    h, w = ids.shape[:2]
    m1, m2 = _distortion_maps(w, h, round(k1, 2))
    return cv2.remap(ids, m1, m2, cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT, borderValue=0)


def apply(img: np.ndarray, e: Effects, jpeg: bool = True) -> np.ndarray:
    """The frame as the webcam delivers it. jpeg=False leaves out the JPEG round trip, for a
    caller that writes the frame as a JPEG of quality `e.jpeg` itself (one encode, not two)."""
    h, w = img.shape[:2]
    if e.distortion:
        m1, m2 = _distortion_maps(w, h, round(e.distortion, 2))
        img = cv2.remap(img, m1, m2, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    if e.vignette:
        # Optical fall-off, before the sensor's response curve.
        v = np.clip((1 - e.vignette * _vignette_r2(w, h)) * 255 + 0.5, 0, 255).astype(np.uint8)
        v = cv2.resize(v, (w, h), interpolation=cv2.INTER_LINEAR)
        img = cv2.multiply(img, cv2.merge([v, v, v]), scale=1 / 255)
    if e.gain != 1.0 or e.gamma != 1.0 or e.wb != (1.0, 1.0, 1.0):
        x = np.arange(256, dtype=np.float32) / 255
        lut = np.stack([np.clip(((x * e.gain * wb) ** e.gamma) * 255 + 0.5, 0, 255) for wb in e.wb], -1)
        img = cv2.LUT(img, lut.astype(np.uint8)[None])
    if e.motion >= 1.5:
        n = int(round(e.motion)) | 1
        k = np.zeros((n, n), np.float32)
        k[n // 2, :] = 1
        M = cv2.getRotationMatrix2D((n / 2 - 0.5, n / 2 - 0.5), e.motion_angle, 1)
        k = cv2.warpAffine(k, M, (n, n))
        img = cv2.filter2D(img, -1, k / max(k.sum(), 1e-6))
    if e.blur > 0.2:
        img = cv2.GaussianBlur(img, (0, 0), e.blur)
    if e.noise > 0:
        # A window of the bank at a random offset.
        bank = _noise_bank(h, w)
        rng = np.random.default_rng(e.noise_seed)
        oy, ox = int(rng.integers(0, h)), int(rng.integers(0, w))
        a = e.noise / NOISE_UNIT
        img = cv2.addWeighted(img, 1.0, bank[oy : oy + h, ox : ox + w], a, -128 * a, dtype=cv2.CV_8U)
    if e.jpeg and jpeg:
        ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, e.jpeg])
        img = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return img
