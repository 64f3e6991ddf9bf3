"""Every roll keeps its picture (issue 22): the frame a roll was read from, dice boxed, stored with the roll,
served at /api/rolls/{id}/frame.jpg, referenced by the JSON export, capped, and surviving a crash."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

import cv2
import httpx
import numpy as np
import pytest
from fastapi.testclient import TestClient

from conftest import FRAME_DICE, FakePipeline, FakeReader, FakeRules, free_port, make_settings
from dicecam.mechanics.dice import DieReading
from dicecam.mechanics.roll import Roll
from dicecam.server.app import create_app
from dicecam.server.store import Frame, RollStore

OK_BGR = (80, 200, 80)  # server/video.py's colour for a trusted die's box


def camera_frame() -> np.ndarray:
    """The fake camera's 640x480 frame, where FRAME_DICE lie."""
    return FakePipeline().frame.copy()


def decode(data: bytes) -> np.ndarray:
    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert img is not None, "not a decodable JPEG"
    return img


def png(frame: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(".png", frame)
    assert ok
    return buf.tobytes()


def near(pixel, colour, tol=60) -> bool:
    return all(abs(int(a) - b) <= tol for a, b in zip(pixel, colour))


@pytest.fixture
def make_app(tmp_path):
    """make_app(**settings) -> (TestClient, store, pipeline), with the fakes; closed at the end."""
    opened = []

    def build(**kw):
        s = make_settings(tmp_path / f"app{len(opened)}", **kw)
        store = RollStore(s.db_path)
        pipeline = FakePipeline()
        client = TestClient(create_app(s, store, pipeline=pipeline, reader=FakeReader(), rules=FakeRules()))
        client.__enter__()
        opened.append((client, store))
        return client, store, pipeline

    yield build
    for client, store in opened:
        client.__exit__(None, None, None)
        store.close()


def test_a_camera_roll_keeps_its_frame_boxed_and_downscaled(make_app):
    client, store, pipeline = make_app()
    # A 1920x1080 camera: the picture is stored with its longest side at 960, the boxes scaled with it.
    big = np.full((1080, 1920, 3), 40, np.uint8)
    pipeline.frame = big
    dice = [DieReading(type="d6", value=5, box=(400, 300, 600, 500), colour="red"),
            DieReading(type="d6", value=2, box=(1000, 400, 1200, 600))]
    roll = pipeline.emit(dice)
    r = client.get(f"/api/rolls/{roll.id}/frame.jpg")
    assert r.status_code == 200 and r.headers["content-type"] == "image/jpeg"
    img = decode(r.content)
    assert img.shape == (540, 960, 3)
    # each die's box is drawn where it was read (halved): the left edge of the first die's box at x=200
    assert near(img[200, 200], OK_BGR) and near(img[250, 500], OK_BGR)
    assert near(img[50, 50], (40, 40, 40))  # the table itself is left as it was
    assert store.frame_count() == 1


def test_an_uploaded_photo_keeps_its_frame_through_the_same_path(make_app):
    client, store, _ = make_app()
    r = client.post("/api/read", files={"image": ("dice.png", png(camera_frame()), "image/png")})
    assert r.status_code == 200, r.text
    roll = r.json()["roll"]
    assert roll["source"] == "upload"
    img = decode(client.get(f"/api/rolls/{roll['id']}/frame.jpg").content)
    assert img.shape == (480, 640, 3)  # small enough already: never upscaled
    x1, y1, _, _ = FRAME_DICE[0].box
    assert near(img[int(y1) + 40, int(x1)], OK_BGR)  # the first die's box, on its left edge


def test_a_hand_typed_roll_has_no_frame_and_an_unknown_roll_is_404(make_app):
    client, store, _ = make_app()
    roll = client.post("/api/rolls", json={"dice": ["d6:3", "d6:4"]}).json()
    r = client.get(f"/api/rolls/{roll['id']}/frame.jpg")
    assert r.status_code == 404 and r.headers["content-type"] == "application/json"
    assert r.json() == {"detail": "this roll was typed by hand: it has no picture"}
    r = client.get("/api/rolls/no-such-roll/frame.jpg")
    assert r.status_code == 404 and r.json() == {"detail": "no roll 'no-such-roll'"}
    assert store.frame_count() == 0


def test_a_correction_shows_the_picture_of_the_roll_it_corrects(make_app):
    client, store, pipeline = make_app()
    roll = pipeline.emit()
    fixed = client.post(f"/api/rolls/{roll.id}/amend", json={"dice": ["d6:6", "d6:2"]}).json()
    again = client.post(f"/api/rolls/{fixed['id']}/amend", json={"dice": ["d6:6", "d6:3"]}).json()
    original = client.get(f"/api/rolls/{roll.id}/frame.jpg").content
    assert client.get(f"/api/rolls/{fixed['id']}/frame.jpg").content == original
    assert client.get(f"/api/rolls/{again['id']}/frame.jpg").content == original
    assert store.frame_count() == 1  # a link, not a copy


def test_the_cap_drops_the_oldest_frames_and_keeps_every_roll(make_app):
    client, store, pipeline = make_app(frames_kept=3)
    rolls = [pipeline.emit() for _ in range(5)]
    assert store.count() == 5 and store.frame_count() == 3
    for old in rolls[:2]:
        r = client.get(f"/api/rolls/{old.id}/frame.jpg")
        assert r.status_code == 404 and "keeps the newest 3" in r.json()["detail"]
        assert client.get(f"/api/rolls/{old.id}").status_code == 200  # the roll itself stays
    for new in rolls[2:]:
        assert client.get(f"/api/rolls/{new.id}/frame.jpg").status_code == 200


def test_a_lowered_cap_applies_at_start_and_zero_keeps_none(tmp_path):
    s = make_settings(tmp_path, frames_kept=4)
    store = RollStore(s.db_path)
    pipeline = FakePipeline()
    with TestClient(create_app(s, store, pipeline=pipeline, reader=FakeReader(), rules=FakeRules())):
        kept = [pipeline.emit() for _ in range(4)]
    assert store.frame_count() == 4
    lowered = s.model_copy(update={"frames_kept": 1})
    with TestClient(create_app(lowered, store, pipeline=FakePipeline(), reader=FakeReader(), rules=FakeRules())) as c:
        assert store.frame_count() == 1 and store.count() == 4
        assert c.get(f"/api/rolls/{kept[-1].id}/frame.jpg").status_code == 200
    none = s.model_copy(update={"frames_kept": 0})
    pipeline = FakePipeline()
    with TestClient(create_app(none, store, pipeline=pipeline, reader=FakeReader(), rules=FakeRules())) as c:
        roll = pipeline.emit()
        assert store.frame_count() == 0 and store.count() == 5
        assert c.get(f"/api/rolls/{roll.id}/frame.jpg").json()["detail"] == \
            "this server keeps no pictures (frames_kept is 0)"
    store.close()


def test_frames_kept_is_a_bounded_titled_setting(tmp_path):
    from pydantic import ValidationError

    from dicecam.server.settings import ServerSettings

    field = ServerSettings.model_fields["frames_kept"]
    assert field.default == 500 and field.title
    with pytest.raises(ValidationError):
        make_settings(tmp_path, frames_kept=-1)
    with pytest.raises(ValidationError):
        make_settings(tmp_path, frames_kept=10_000_000)


def test_the_json_export_names_each_rolls_picture(make_app):
    client, _, pipeline = make_app()
    camera = pipeline.emit()
    typed = client.post("/api/rolls", json={"dice": ["d6:1", "d6:1"]}).json()
    fixed = client.post(f"/api/rolls/{camera.id}/amend", json={"dice": ["d6:6", "d6:6"]}).json()
    exported = {r["id"]: r for r in client.get("/api/export.json").json()}
    assert exported[camera.id]["frame"] == f"/api/rolls/{camera.id}/frame.jpg"
    assert exported[typed["id"]]["frame"] is None
    assert exported[fixed["id"]]["frame"] == f"/api/rolls/{fixed['id']}/frame.jpg"
    for ref in (exported[camera.id]["frame"], exported[fixed["id"]]["frame"]):
        assert client.get(ref).headers["content-type"] == "image/jpeg"
    # otherwise each roll exports as it is stored
    assert {k: v for k, v in exported[typed["id"]].items() if k != "frame"} == typed


def test_the_openapi_document_declares_the_jpeg_and_its_404(make_app):
    client, _, _ = make_app()
    spec = client.get("/openapi.json").json()
    op = spec["paths"]["/api/rolls/{roll_id}/frame.jpg"]["get"]
    assert list(op["responses"]["200"]["content"]) == ["image/jpeg"]
    # its refusals are JSON, and documented so (FastAPI would otherwise list them as image/jpeg)
    for code in ("400", "404", "422"):
        assert list(op["responses"][code]["content"]) == ["application/json"], code
    assert op["responses"]["404"]["content"]["application/json"]["schema"]["$ref"].endswith("/Problem")
    items = spec["paths"]["/api/export.json"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert items["type"] == "array"
    exported = spec["components"]["schemas"][items["items"]["$ref"].split("/")[-1]]
    assert "frame" in exported["properties"]


# -- the store itself ---------------------------------------------------------------------------------
V1_SCHEMA = """
CREATE TABLE rolls (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, ts TEXT NOT NULL,
    source TEXT NOT NULL, status TEXT NOT NULL, system TEXT NOT NULL, outcome TEXT, amends TEXT, body TEXT NOT NULL);
CREATE INDEX rolls_amends ON rolls(amends);
CREATE TABLE die_names (key TEXT PRIMARY KEY, name TEXT NOT NULL);
PRAGMA user_version=1;
"""


def _roll(i: int) -> Roll:
    return Roll(id=str(uuid.uuid4()), ts=datetime(2026, 1, 1, 0, 0, i, tzinfo=timezone.utc), source="camera",
                status="settled", system="sum", dice=[DieReading(type="d6", value=1 + i % 6)],
                adjudication={"system": "sum", "outcome": "success", "summary": f"roll {i}"})


def test_a_database_from_before_frames_opens_with_every_roll(tmp_path):
    path = tmp_path / "rolls.sqlite3"
    old = [_roll(i) for i in range(7)]
    db = sqlite3.connect(path)
    db.executescript(V1_SCHEMA)
    for r in old:
        db.execute("INSERT INTO rolls(id, ts, source, status, system, outcome, amends, body) VALUES (?,?,?,?,?,?,?,?)",
                   (r.id, r.ts.isoformat(), r.source, r.status, r.system, "success", None, r.model_dump_json()))
    db.execute("INSERT INTO die_names VALUES ('d20:red', 'Lucky')")
    db.commit()
    db.close()

    store = RollStore(path)
    assert store.count() == 7 and [r.id for r in store.iter_all()] == [r.id for r in old]
    assert all(store.get(r.id) == r for r in old)
    assert store.die_names() == {"d20:red": "Lucky"}
    assert store.frame_count() == 0 and store.frame(old[0].id) is None
    new = _roll(8)
    store.add(new, Frame(b"\xff\xd8jpeg\xff\xd9", 2, 1))
    assert store.frame(new.id) == Frame(b"\xff\xd8jpeg\xff\xd9", 2, 1)
    store.close()
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == 2


def test_a_refused_duplicate_stores_no_frame_either(tmp_path):
    store = RollStore(tmp_path / "r.sqlite3")
    roll = _roll(1)
    store.add(roll, Frame(b"first", 1, 1))
    with pytest.raises(KeyError):
        store.add(roll, Frame(b"second", 1, 1))
    assert store.count() == 1 and store.frame(roll.id).jpeg == b"first"
    store.close()


# -- kill -9 --------------------------------------------------------------------------------------------
SERVER = """
import sys, threading, time
sys.path.insert(0, {tests!r})
from pathlib import Path
import uvicorn
from conftest import FakePipeline, FakeReader, FakeRules, make_settings
from dicecam.server.app import create_app
from dicecam.server.store import RollStore

s = make_settings(Path({tmp!r}))
pipeline = FakePipeline()
app = create_app(s, RollStore(s.db_path), pipeline=pipeline, reader=FakeReader(), rules=FakeRules())
server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port={port}, log_level="warning"))

def camera():  # three camera rolls once the server is up, as the live pipeline would announce them
    while not server.started:
        time.sleep(0.02)
    for _ in range(3):
        pipeline.emit()

threading.Thread(target=camera, daemon=True).start()
server.run()
"""


def test_kill_9_after_rolls_loses_no_roll_and_no_frame(tmp_path):
    port = free_port()
    script = SERVER.format(tests=str(Path(__file__).parent), tmp=str(tmp_path), port=port)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        rolls = 0
        while time.monotonic() < deadline and proc.poll() is None and rolls < 3:
            try:
                rolls = httpx.get(f"{base}/api/health", timeout=2).json()["rolls"]
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        assert rolls == 3, proc.stderr.read().decode() if proc.poll() is not None else "the camera rolls never came"
        uploaded = [httpx.post(f"{base}/api/read", files={"image": (f"{i}.png", png(camera_frame()), "image/png")},
                               timeout=30).json()["roll"]["id"] for i in range(2)]
        typed = httpx.post(f"{base}/api/rolls", json={"dice": ["d6:2"]}, timeout=30).json()["id"]
        served = {rid: httpx.get(f"{base}/api/rolls/{rid}/frame.jpg", timeout=10).content for rid in uploaded}
    finally:
        os.kill(proc.pid, signal.SIGKILL)  # no shutdown, no checkpoint: what was answered must be on disk
        proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    store = RollStore(tmp_path / "data" / "rolls.sqlite3")
    try:
        assert store._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        everything = list(store.iter_all())
        assert len(everything) == 6 and typed in {r.id for r in everything}
        camera = [r for r in everything if r.source == "camera"]
        assert len(camera) == 3 and store.frame_count() == 5
        for r in camera:
            assert decode(store.frame(r.id).jpeg).shape == (480, 640, 3)
        for rid in uploaded:
            assert store.frame(rid).jpeg == served[rid]
        assert store.frame(typed) is None
    finally:
        store.close()


# -- the table page, in a real browser ------------------------------------------------------------------
SCREENSHOT = Path("/work/cache/frame_page.png")


def demo_roll() -> tuple[np.ndarray, list[DieReading]]:
    """The bundled demo clip's first settled frame and its true dice: a real-looking picture to look at."""
    try:
        from dicecam.vision.sources import demo_paths

        mp4, meta = demo_paths()
        truth = json.loads(meta.read_text())["rolls"][0]
        cap = cv2.VideoCapture(str(mp4))
        cap.set(cv2.CAP_PROP_POS_FRAMES, truth["settled_at"])
        ok, frame = cap.read()
        cap.release()
        if ok:
            return frame, [DieReading(**d) for d in truth["truth"]["dice"]]
    except Exception:
        pass
    return camera_frame(), list(FRAME_DICE)


@pytest.fixture(scope="module")
def live(tmp_path_factory, browser):
    from conftest import served_table

    with served_table(tmp_path_factory.mktemp("frames-page")) as srv:
        yield srv


def test_the_table_page_opens_a_rolls_picture_from_the_history(axe, live, page):
    from conftest import serious_violations

    page.goto(live.url + "/")
    page.wait_for_function("window.__dicecamEvents > 0")
    live.pipeline.frame, dice = demo_roll()
    roll = live.pipeline.emit(dice)
    page.wait_for_function(f"window.__dicecamCurrent === '{roll.id}'")

    button = page.locator(f"tr[data-roll='{roll.id}'] button", has_text="Picture")
    button.focus()
    page.keyboard.press("Enter")  # by keyboard
    page.wait_for_function("window.__dicecamFrame === 'shown'")
    img = page.locator("#frame-img")
    assert img.is_visible()
    assert page.evaluate("document.getElementById('frame-img').naturalWidth") == live.pipeline.frame.shape[1]
    alt = img.get_attribute("alt")
    first = f"{dice[0].type.value} {dice[0].value}"
    assert first in alt and "boxed" in alt
    assert first in page.locator("#frame-caption").inner_text()
    assert page.locator("#frame-dialog").evaluate("d => d.open")
    assert serious_violations(page, axe) == []
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT))

    page.keyboard.press("Escape")
    page.wait_for_function("!document.getElementById('frame-dialog').open")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == button.get_attribute("aria-label")


def test_the_table_page_says_a_typed_roll_has_no_picture_and_a_dropped_one_is_gone(live, page):
    page.goto(live.url + "/")
    page.wait_for_function("window.__dicecamEvents > 0")
    page.fill("#manual-dice", "d6:4 d6:3")
    page.click("#manual-form button[type=submit]")
    page.wait_for_function("document.querySelector('#history tr') && "
                           "document.querySelector('#history tr').textContent.includes('typed by hand')")
    typed = page.evaluate("window.__dicecamCurrent")
    assert "None: typed by hand" in page.locator(f"tr[data-roll='{typed}']").inner_text()

    # a camera roll whose picture is gone (the cap dropped it): the dialog says so instead of a broken image
    roll = live.pipeline.emit()
    with live.store._lock:
        live.store._db.execute("DELETE FROM frames WHERE roll_id=?", (roll.id,))
    page.wait_for_function(f"window.__dicecamCurrent === '{roll.id}'")
    page.click(f"tr[data-roll='{roll.id}'] button:has-text('Picture')")
    page.wait_for_function("window.__dicecamFrame === 'none'")
    assert page.locator("#frame-img").is_hidden()
    assert page.locator("#frame-msg").inner_text() == "No picture is kept for this roll (the store keeps the newest 500)."
    page.click("#frame-close")
    page.wait_for_function("!document.getElementById('frame-dialog').open")
