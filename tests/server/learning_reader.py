"""A fake reader that can learn: real `Reader` plumbing (crops, embed, memory) around fake models.

Its face model always reads `wrong`; its features are the crop's middle pixels, so the same die
in the same place gives the same feature and a die of another colour a very different one.
"""

from __future__ import annotations

import numpy as np

from dicecam.vision.crops import FACE_CLASSES, FACE_INDEX
from dicecam.vision.read import Reader

CROP = 16


def learning_reader(wrong=("d6", 2), model_id: str = "fake-1") -> Reader:
    def detector(x):
        return [np.zeros((1, 11, 0), np.float32)]  # finds nothing: the server tests teach from known boxes

    def faces(crops):
        n = len(crops)
        logits = np.full((n, len(FACE_CLASSES)), -8.0, np.float32)
        logits[:, FACE_INDEX[wrong]] = 8.0
        feats = crops[:, :, 4:12, 4:12].reshape(n, -1) - 128.0
        return [logits, np.zeros((n, 1), np.float32), np.full((n, 1), -5.0, np.float32), feats]

    return Reader(detector, faces, crop_size=CROP, model_id=model_id)
