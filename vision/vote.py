"""Vote the readings of a few still frames into one set of dice.

Dice are matched across frames by box IoU; each die keeps the majority (type, value), colour,
cocked and uncertain flags; confidence = share of frames agreeing x their mean confidence. A
die seen in under half the frames is dropped; a die whose frames disagree is marked uncertain.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from dicecam.mechanics.dice import DieReading, reading_order

from .boxes import iou


def vote(frames: Sequence[Sequence[DieReading]], *, min_iou: float = 0.3, min_agreement: float = 0.67) -> list[DieReading]:
    if not frames:
        return []
    n = len(frames)
    tracks: list[list[DieReading]] = []
    for readings in frames:
        used: set[int] = set()
        for die in readings:
            best, best_iou = None, min_iou
            for i, track in enumerate(tracks):
                if i in used or die.box is None or track[0].box is None:
                    continue
                v = iou(die.box, track[-1].box)
                if v >= best_iou:
                    best, best_iou = i, v
            if best is None and die.box is None:
                # Boxless readings (fakes, tests) match by position in the list.
                idx = list(readings).index(die)
                best = idx if idx < len(tracks) and idx not in used and tracks[idx][0].box is None else None
            if best is None:
                tracks.append([die])
                used.add(len(tracks) - 1)
            else:
                tracks[best].append(die)
                used.add(best)
    out: list[DieReading] = []
    for track in tracks:
        if len(track) * 2 < n:
            continue  # a flicker seen in under half the frames
        counts = Counter((d.type, d.value) for d in track)
        (kind, value), top = counts.most_common(1)[0]
        # Doubt comes from frames that saw the die and disagree; a frame that missed it only
        # lowers the confidence (the detector blinked, the face did not change).
        agreement = top / len(track)
        winners = [d for d in track if (d.type, d.value) == (kind, value)]
        confs = [d.confidence for d in winners if d.confidence is not None]
        conf = (top / n) * (sum(confs) / len(confs) if confs else 1.0)
        colours = Counter(d.colour for d in winners).most_common(1)[0][0]

        def most(flag: str) -> bool:  # a tie counts: better to ask than to trust a doubtful die
            return sum(getattr(d, flag) for d in winners) * 2 >= len(winners) and any(getattr(d, flag) for d in winners)

        out.append(winners[-1].model_copy(update={
            "confidence": round(min(1.0, conf), 4),
            "colour": colours,
            "cocked": most("cocked"),
            "uncertain": most("uncertain") or agreement < min_agreement,
        }))
    return reading_order(out)
