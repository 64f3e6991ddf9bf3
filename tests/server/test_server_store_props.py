"""Invariants of the store and the upload header check, with Hypothesis."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import cv2
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dicecam.mechanics.dice import DieReading
from dicecam.mechanics.roll import Roll
from dicecam.server.store import RollStore
from dicecam.vision.images import image_size

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _roll(i: int, amends: str | None = None) -> Roll:
    return Roll(id=str(uuid.uuid4()), ts=T0 + timedelta(seconds=i), source="manual", status="settled",
                system="sum", dice=[DieReading(type="d6", value=1 + i % 6)],
                adjudication={"system": "sum", "outcome": "success", "summary": f"roll {i}"}, amends=amends)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.integers(min_value=-1, max_value=30), min_size=1, max_size=40),
       page=st.integers(min_value=1, max_value=9))
def test_pages_cover_history_once_newest_first_and_amendments_never_overwrite(tmp_path_factory, ops, page):
    """ops: -1 adds a roll; k >= 0 amends the k-th stored roll (if it exists)."""
    store = RollStore(tmp_path_factory.mktemp("props") / "r.sqlite3")
    added: list[Roll] = []
    for i, op in enumerate(ops):
        target = added[op].id if 0 <= op < len(added) else None
        roll = _roll(i, amends=target)
        store.add(roll)
        added.append(roll)
    got: list[str] = []
    offset = 0
    while True:
        p = store.page(offset, page)
        assert p.total == len(added)
        if not p.items:
            break
        got += [r.id for r in p.items]
        offset += page
    assert got == [r.id for r in reversed(added)]
    for roll in added:  # every roll, original or amendment, reads back exactly as stored
        assert store.get(roll.id) == roll
        assert [a.id for a in store.amendments(roll.id)] == [r.id for r in added if r.amends == roll.id]
    store.close()


@settings(max_examples=30, deadline=None)
@given(w=st.integers(1, 700), h=st.integers(1, 700), fmt=st.sampled_from([".png", ".jpg", ".bmp", ".webp"]))
def test_header_size_matches_the_decoded_image(w, h, fmt):
    img = np.zeros((h, w, 3), np.uint8)
    ok, buf = cv2.imencode(fmt, img)
    assert ok
    head = image_size(buf.tobytes())
    assert head is not None and head[1:] == (w, h)


@given(data=st.binary(max_size=64))
def test_header_check_never_crashes_on_junk(data):
    head = image_size(data)
    assert head is None or (head[1] >= 0 and head[2] >= 0)
