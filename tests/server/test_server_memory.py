"""The table's dice memory through the API: corrections teach it, the Teach a die endpoints, forget,
export/import, bad imports, restarts and write protection; and `dicecam teach` on the command line."""

from __future__ import annotations

import subprocess
import sys

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient

from conftest import FakePipeline, FakeReader, FakeRules, make_settings
from dicecam.mechanics.dice import DieReading
from dicecam.server.app import create_app
from dicecam.server.store import RollStore
from dicecam.vision.crops import FACE_CLASSES
from dicecam.vision.read import Reader
from learning_reader import learning_reader

RED = DieReading(type="d6", value=2, box=(100, 100, 180, 180), confidence=0.9, colour="red")


def _app(tmp_path, reader=None, pipeline=None, **kw):
    s = make_settings(tmp_path, **kw)
    store = RollStore(s.db_path)
    reader = reader if reader is not None else learning_reader()
    app = create_app(s, store, pipeline=pipeline or FakePipeline(), reader=reader, rules=FakeRules())
    return app, store, reader


@pytest.fixture
def parts(tmp_path):
    app, store, reader = _app(tmp_path)
    with TestClient(app) as c:
        yield c, app, reader
    store.close()


def _camera_roll(app, dice=None):
    return app.state.table.pipeline.emit(dice=dice)


def test_a_correction_teaches_the_corrected_die_confirms_the_other_and_says_so(parts):
    client, app, reader = parts
    roll = _camera_roll(app)  # red d6 read 5, white d6 read 2
    r = client.post(f"/api/rolls/{roll.id}/amend", json={"dice": ["d6:4", "d6:2"]})
    assert r.status_code == 201, r.text
    note = client.get(f"/api/memory/taught/{r.json()['id']}").json()
    assert (note["corrected"], note["confirmed"], note["flagged"]) == (1, 1, 0)
    assert note["message"] == "Learnt from your correction: the red d6 as 4. 1 other die confirmed as read."
    dice = {d["die"]: d for d in client.get("/api/memory").json()["dice"]}
    assert dice["red d6"]["faces"] == {"4": 1} and dice["white d6"]["faces"] == {"2": 1}
    sources = sorted(e.source for e in app.state.memory.memory.examples)
    assert sources == ["confirmed", "correction"]


def test_after_a_correction_the_live_reader_reads_that_die_as_corrected(parts):
    client, app, reader = parts
    pipeline = app.state.table.pipeline
    frame = pipeline.frame
    assert [d.value for d in reader.read_faces(frame, _dets(frame)).to_readings()] == [2], "the fake misreads"
    for _ in range(3):  # three confirmed corrections: the memory is trusted fully
        roll = _camera_roll(app, [RED])
        client.post(f"/api/rolls/{roll.id}/amend", json={"dice": ["d6:6"]}).raise_for_status()
    assert [d.value for d in reader.read_faces(frame, _dets(frame)).to_readings()] == [6]


def _dets(frame):
    from dicecam.vision.detections import Detections

    scores = np.zeros((1, 7), np.float32)
    scores[0, 1] = 0.9
    return Detections.from_arrays(np.array([RED.box], np.float32), scores)


def test_teach_a_die_face_by_face_from_the_camera_until_it_is_known(parts):
    client, app, _ = parts
    pipeline = app.state.table.pipeline
    pipeline.dice = [RED]
    for face in range(1, 7):
        # Each face looks different under the camera: a different mark inside the die.
        pipeline.frame = pipeline.frame.copy()
        mark = np.random.default_rng(face).integers(0, 255, (4, 4, 3), np.uint8).repeat(15, 0).repeat(15, 1)
        pipeline.frame[110:170, 110:170] = mark
        r = client.post("/api/memory/teach/live", json={"die": "Lucky", "kind": "d6", "value": face})
        assert r.status_code == 200, r.text
        got = r.json()
        assert got["learnt"] and got["die"]["die"] == "Lucky"
    assert got["die"]["known"] and got["die"]["missing"] == []
    # The same face taught again as another value: flagged, not learnt, and the memory unchanged.
    again = client.post("/api/memory/teach/live", json={"die": "Lucky", "kind": "d6", "value": 1}).json()
    assert not again["learnt"] and "already taught as 6" in again["reason"]
    assert client.get("/api/memory").json()["examples"] == 6
    # The die named as another kind: refused with the reason, nothing learnt.
    other = client.post("/api/memory/teach/live", json={"die": "Lucky", "kind": "d8", "value": 3})
    assert other.status_code == 400 and "Lucky is already known as a d6, not a d8" in other.json()["detail"]
    assert client.get("/api/memory").json()["examples"] == 6


def test_teaching_from_the_camera_needs_exactly_one_die_and_a_possible_face(parts):
    client, app, _ = parts
    pipeline = app.state.table.pipeline
    r = client.post("/api/memory/teach/live", json={"value": 3})
    assert r.status_code == 409 and "2 dice under the camera" in r.json()["detail"]
    pipeline.dice = []
    assert "no die under the camera" in client.post("/api/memory/teach/live", json={}).json()["detail"]
    pipeline.dice = [RED]
    r = client.post("/api/memory/teach/live", json={"value": 9})
    assert r.status_code == 400 and r.json()["detail"] == "a d6 has no face 9 (faces 1-6)"
    confirm = client.post("/api/memory/teach/live", json={}).json()  # no value: the face as read is confirmed
    assert confirm["learnt"] and (confirm["kind"], confirm["value"]) == ("d6", 2)


def test_teach_one_die_of_a_stored_roll(parts):
    client, app, _ = parts
    roll = _camera_roll(app)
    r = client.post(f"/api/memory/teach/roll/{roll.id}", json={"index": 1, "value": 3, "die": "pale"})
    assert r.status_code == 200 and r.json()["die"]["faces"] == {"3": 1}
    assert client.post(f"/api/memory/teach/roll/{roll.id}", json={"index": 5}).status_code == 422
    assert client.post("/api/memory/teach/roll/nope", json={"index": 0}).status_code == 404
    typed = client.post("/api/rolls", json={"dice": ["d6:3"]}).json()  # typed by hand: no frame
    r = client.post(f"/api/memory/teach/roll/{typed['id']}", json={"index": 0})
    assert r.status_code == 409


def test_forget_one_die_then_all_and_an_unknown_die_is_404(parts):
    client, app, _ = parts
    roll = _camera_roll(app)
    client.post(f"/api/rolls/{roll.id}/amend", json={"dice": ["d6:4", "d6:2"]}).raise_for_status()
    r = client.delete("/api/memory/dice/red d6")
    assert r.status_code == 200 and r.json()["forgotten"] == 1
    assert [d["die"] for d in r.json()["memory"]["dice"]] == ["white d6"]
    assert client.delete("/api/memory/dice/red d6").status_code == 404
    empty = client.delete("/api/memory").json()
    assert empty["forgotten"] == 1 and empty["memory"]["examples"] == 0 and empty["memory"]["dice"] == []
    assert empty["memory"]["kinds"]["d00"] == [0, 10, 20, 30, 40, 50, 60, 70, 80, 90]


def test_the_memory_survives_a_restart(tmp_path):
    app, store, _ = _app(tmp_path)
    with TestClient(app) as c:
        roll = _camera_roll(app)
        c.post(f"/api/rolls/{roll.id}/amend", json={"dice": ["d6:4", "d6:2"]}).raise_for_status()
        before = c.get("/api/memory").json()
    store.close()
    app2, store2, reader2 = _app(tmp_path)
    with TestClient(app2) as c:
        assert c.get("/api/memory").json() == before
        assert reader2.memory is app2.state.memory.memory, "the restarted reader reads with it"
    store2.close()


def test_export_then_import_on_another_table_carries_the_dice(tmp_path, parts):
    client, app, _ = parts
    roll = _camera_roll(app)
    client.post(f"/api/rolls/{roll.id}/amend", json={"dice": ["d6:4", "d6:2"]}).raise_for_status()
    r = client.get("/api/memory/export")
    assert r.status_code == 200 and "dicecam-memory.npz" in r.headers["content-disposition"]
    other, store, _ = _app(tmp_path / "other")
    with TestClient(other) as c2:
        got = c2.post("/api/memory/import", files={"file": ("m.npz", r.content, "application/octet-stream")})
        assert got.status_code == 200, got.text
        assert (got.json()["learnt"], got.json()["flagged"]) == (2, 0)
        assert c2.get("/api/memory").json()["dice"] == client.get("/api/memory").json()["dice"]
        again = c2.post("/api/memory/import", files={"file": ("m.npz", r.content)}).json()
        assert again["learnt"] == 0 and again["memory"]["examples"] == 2
    store.close()


@pytest.mark.parametrize("data", [b"garbage", b"PK\x03\x04 not really a zip"])
def test_a_bad_import_is_refused_and_the_stored_memory_is_untouched(parts, data):
    client, app, _ = parts
    roll = _camera_roll(app)
    client.post(f"/api/rolls/{roll.id}/amend", json={"dice": ["d6:4", "d6:2"]}).raise_for_status()
    path = app.state.settings.memory_folder / "memory.npz"
    on_disk, before = path.read_bytes(), client.get("/api/memory").json()
    r = client.post("/api/memory/import", files={"file": ("m.npz", data)})
    assert r.status_code == 400 and r.json()["detail"] == "not a dicecam memory file"
    assert client.get("/api/memory").json() == before and path.read_bytes() == on_disk
    assert client.post("/api/memory/import", files={"file": ("m.npz", b"")}).status_code == 400


def test_a_memory_from_other_weights_is_re_embedded_on_import(tmp_path, parts):
    client, app, _ = parts
    roll = _camera_roll(app)
    client.post(f"/api/rolls/{roll.id}/amend", json={"dice": ["d6:4", "d6:2"]}).raise_for_status()
    data = client.get("/api/memory/export").content
    other, store, reader = _app(tmp_path / "new", reader=learning_reader(model_id="fake-2"))
    with TestClient(other) as c2:
        assert c2.post("/api/memory/import", files={"file": ("m.npz", data)}).json()["learnt"] == 2
        assert other.state.memory.memory.model_id == "fake-2"
    store.close()


def test_every_memory_change_needs_the_token_and_other_origins_are_refused_without_it(tmp_path):
    app, store, _ = _app(tmp_path, token="s3cret-token")
    with TestClient(app) as c:
        assert c.get("/api/memory").status_code == 200, "reading is open"
        for method, path in (("delete", "/api/memory"), ("delete", "/api/memory/dice/x"),
                             ("post", "/api/memory/teach/live"), ("post", "/api/memory/teach/roll/x"),
                             ("post", "/api/memory/import")):
            assert getattr(c, method)(path).status_code == 401, path
        # Another web site's page cannot forget the table's dice; only the token opens a cross-origin change.
        assert c.delete("/api/memory", headers={"Origin": "http://evil.example"}).status_code == 403
        assert c.delete("/api/memory", headers={"Origin": "null"}).status_code == 403
        assert c.delete("/api/memory", headers={"Authorization": "Bearer s3cret-token"}).status_code == 200
    store.close()


def test_a_server_whose_reader_cannot_learn_says_why_and_refuses_teaching(tmp_path):
    app, store, _ = _app(tmp_path, reader=FakeReader())
    with TestClient(app) as c:
        state = c.get("/api/memory").json()
        assert state["available"] is False and "cannot learn" in state["reason"]
        r = c.post("/api/memory/teach/live", json={})
        assert r.status_code == 503 and "no dice memory on this server" in r.json()["detail"]
        roll = _camera_roll(app)
        assert c.post(f"/api/rolls/{roll.id}/amend", json={"dice": ["d6:4", "d6:2"]}).status_code == 201
    store.close()


def test_a_corrupt_memory_file_is_never_overwritten(tmp_path):
    s = make_settings(tmp_path)
    path = s.memory_folder / "memory.npz"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"half a file")
    app, store, _ = _app(tmp_path)
    with TestClient(app) as c:
        assert "not a dicecam memory file" in c.get("/api/memory").json()["reason"]
        assert any("without the dice memory" in n for n in app.state.table.notices)
        roll = _camera_roll(app)
        assert c.post(f"/api/rolls/{roll.id}/amend", json={"dice": ["d6:4", "d6:2"]}).status_code == 201
    assert path.read_bytes() == b"half a file"
    store.close()


def test_serve_memory_none_reads_with_the_general_reader_alone(tmp_path):
    app, store, reader = _app(tmp_path, use_memory=False)
    with TestClient(app) as c:
        assert "--memory none" in c.get("/api/memory").json()["reason"]
    assert reader.memory is None
    store.close()


# --- dicecam teach --------------------------------------------------------------------------

def _cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "dicecam.server.cli", *map(str, args)], capture_output=True,
                          text=True, timeout=120, cwd=cwd)


def _reader_of_older_weights() -> Reader:
    """A reader whose face model gives logits, colour and cocked but no features: weights from
    before the dice memory, which can read but cannot learn."""
    def detector(x: np.ndarray) -> list[np.ndarray]:
        return [np.zeros((1, 11, 0), np.float32)]  # finds nothing: the command stops before reading

    def faces(crops: np.ndarray) -> list[np.ndarray]:
        n = len(crops)
        return [np.zeros((n, len(FACE_CLASSES)), np.float32), np.zeros((n, 1), np.float32), np.full((n, 1), -5.0, np.float32)]

    return Reader(detector, faces, crop_size=16, model_id="before-the-memory")


def test_teach_with_weights_that_cannot_learn_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    from dicecam.server.cli import main

    truth = tmp_path / "reads.jsonl"
    truth.write_text('{"image": "a.png", "dice": [{"type": "d6", "value": 3}], "single": true}\n')
    # The command loads whatever weights are shipped: give it ones without features, whatever ships today.
    monkeypatch.setattr("dicecam.vision.read.Reader.load", classmethod(lambda cls, **kw: _reader_of_older_weights()))
    rc = main(["teach", str(truth), "--memory", str(tmp_path / "mem")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("dicecam teach: ") and "dice memory needs newer weights" in err, err
    assert not (tmp_path / "mem" / "memory.npz").exists(), "nothing is taught, so no memory file is written"


def test_teach_none_is_refused(tmp_path):
    r = _cli("teach", tmp_path / "x.jsonl", "--memory", "none")
    assert r.returncode == 2 and "nowhere to teach" in r.stderr


def test_teach_refuses_each_bad_example_with_its_reason_and_learns_the_rest(tmp_path, monkeypatch):
    """The command's logic on a learning fake reader: bad lines refused one by one, a summary."""
    from dicecam.vision.memory import DiceMemory

    img = np.full((200, 200, 3), 50, np.uint8)
    img[60:140, 60:140] = (30, 200, 30)
    (tmp_path / "images").mkdir()
    cv2.imwrite(str(tmp_path / "images" / "green.png"), img)  # found through the truth file's images/ folder
    (tmp_path / "broken.png").write_bytes(b"not an image")
    lines = [
        '{"image": "green.png", "dice": [{"type": "d6", "value": 3, "box": [60, 60, 140, 140]}], "source": "x"}',
        '{"image": "green.png", "dice": [{"type": "d6", "value": 4, "box": [60, 60, 140, 140]}]}',
        '{"image": "green.png", "dice": [{"type": "d6", "value": 7, "box": [60, 60, 140, 140]}]}',
        '{"image": "broken.png", "dice": [{"type": "d6", "value": 1, "box": [0, 0, 9, 9]}]}',
        '{"image": "green.png", "dice": [{"type": "d6", "value": 2}], "single": true}',
        '{"image": "green.png", "dice": [{"type": "d6"}, {"type": "d6"}]}',
        'not json',
    ]
    (tmp_path / "reads.jsonl").write_text("\n".join(lines) + "\n")
    reader = learning_reader()
    monkeypatch.setattr("dicecam.vision.read.Reader.load", classmethod(lambda cls, **kw: reader))
    from dicecam.server.cli import build_parser

    ns = build_parser().parse_args(["teach", str(tmp_path / "reads.jsonl"), "--memory", str(tmp_path / "mem"),
                                    "--die", "green"])
    import io
    from contextlib import redirect_stderr

    err = io.StringIO()
    with redirect_stderr(err):
        rc = ns.handler(ns)
    out = err.getvalue().splitlines()
    assert rc == 0
    assert any(":2: not learnt: this looks like the d6 already taught as 3" in line for line in out)
    assert any(":3: refused: a d6 has no face 7" in line for line in out)
    assert any(":4: refused: cannot read broken.png: not an image OpenCV can decode" in line for line in out)
    assert any(":5: refused: no die found" in line for line in out)
    assert any(":6: refused: several dice where one was meant" in line for line in out)
    assert any(":7: refused: not a JSON line" in line for line in out)
    assert out[-1].startswith("dicecam teach: learnt 1 of 7 examples from 7 photos (1 flagged as contradicting "
                              "the memory, 5 refused)")
    memory = DiceMemory.open(tmp_path / "mem" / "memory.npz", reader.crop_size, reader.model_id)
    assert [(d["die"], d["faces"]) for d in memory.dice()] == [("green", {3: 1})]


def _env(tmp_path):
    import os

    return {**os.environ, "XDG_DATA_HOME": str(tmp_path / "xdg")}


def _table_png(tmp_path):
    img = np.full((480, 640, 3), (40, 90, 40), np.uint8)
    cv2.rectangle(img, (300, 200), (360, 260), (240, 240, 240), -1)
    cv2.imwrite(str(tmp_path / "table.png"), img)
    return tmp_path / "table.png"


def test_read_with_memory_none_reads_with_the_general_reader_alone(tmp_path):
    r = subprocess.run([sys.executable, "-m", "dicecam.server.cli", "read", str(_table_png(tmp_path)),
                        "--memory", "none"], capture_output=True, text=True, timeout=300, env=_env(tmp_path))
    assert r.returncode == 0 and r.stderr == "" and r.stdout.count("\n") == 1


def test_read_with_an_unusable_default_memory_warns_once_and_still_reads(tmp_path):
    folder = tmp_path / "xdg" / "dicecam" / "memory"
    folder.mkdir(parents=True)
    (folder / "memory.npz").write_bytes(b"half a file")
    r = subprocess.run([sys.executable, "-m", "dicecam.server.cli", "read", str(_table_png(tmp_path))],
                       capture_output=True, text=True, timeout=300, env=_env(tmp_path))
    assert r.returncode == 0 and r.stdout.count("\n") == 1
    assert r.stderr.startswith(f"dicecam read: reading without the dice memory in {folder}: ")
    assert r.stderr.count("\n") == 1
    assert (folder / "memory.npz").read_bytes() == b"half a file", "never overwritten"


def test_read_with_an_explicit_unusable_memory_is_one_line_and_exit_2(tmp_path):
    folder = tmp_path / "mem"
    folder.mkdir()
    (folder / "memory.npz").write_bytes(b"half a file")
    r = subprocess.run([sys.executable, "-m", "dicecam.server.cli", "read", str(_table_png(tmp_path)), "--memory",
                        str(folder)], capture_output=True, text=True, timeout=300, env=_env(tmp_path))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith(f"dicecam read: cannot use the dice memory in {folder}: ") and r.stderr.count("\n") == 1


def test_serve_takes_memory_dir_or_none(tmp_path):
    from dicecam.server.cli import build_parser
    from dicecam.server.commands.serve import settings_from_args

    def settings(*extra):
        args = build_parser().parse_args(["serve", "--data", str(tmp_path / "data"), *extra])
        return settings_from_args(args, say=lambda m: None)

    default = settings()
    assert default.use_memory and default.memory_folder == tmp_path / "data" / "memory"
    assert settings("--memory", str(tmp_path / "dice")).memory_folder == tmp_path / "dice"
    assert settings("--memory", "none").use_memory is False


def test_a_second_correction_of_the_same_roll_teaches_from_the_original_frame(parts):
    client, app, _ = parts
    roll = _camera_roll(app)
    first = client.post(f"/api/rolls/{roll.id}/amend", json={"dice": ["d6:4", "d6:2"]}).json()
    second = client.post(f"/api/rolls/{first['id']}/amend", json={"dice": ["d6:4", "d6:3"]}).json()
    note = client.get(f"/api/memory/taught/{second['id']}").json()
    assert (note["corrected"], note["confirmed"]) == (1, 1)
    assert note["message"].startswith("Learnt from your correction: the white d6 as 3.")
    assert {d["die"]: d["faces"] for d in client.get("/api/memory").json()["dice"]}["white d6"] == {"3": 1}


def test_the_memory_says_when_its_taught_numeral_dice_have_taught_it_the_camera(parts):
    from dicecam.vision.crops import FACE_INDEX
    from dicecam.vision.camera import LOOKS, TAUGHT_LEAST

    client, app, reader = parts
    state = client.get("/api/memory").json()
    assert (state["camera_dice"], state["camera_seen"], state["camera_learnt"]) == (0, 0, False)
    memory = app.state.memory.memory
    for i in range(TAUGHT_LEAST):  # d20s whose centre looks read their faces and the finder's look a neighbour
        looks = np.full((LOOKS, len(FACE_CLASSES)), -25.0, np.float32)
        looks[:2, FACE_INDEX[("d20", 3 + i)]] = looks[2, FACE_INDEX[("d20", 4 + i)]] = -0.2
        crop = np.random.default_rng(i).integers(0, 255, (memory.crop_size, memory.crop_size, 3), np.uint8)
        assert memory.teach(crop, reader.embed(crop[None])[0], "d20", 3 + i, looks=looks).learnt
    state = client.get("/api/memory").json()
    assert (state["camera_dice"], state["camera_seen"], state["camera_learnt"]) == (TAUGHT_LEAST, 0, True)


def test_the_memory_says_when_the_live_camera_has_learnt_from_its_own_sure_reads(parts):
    from dicecam.vision.camera import SEEN_LEAST

    client, app, reader = parts
    watching = reader.watching()  # as dicecam serve starts its pipeline
    watching.camera.observe(np.array([[1, 1, 0]] * (SEEN_LEAST - 1), np.float32))
    state = client.get("/api/memory").json()
    assert (state["camera_dice"], state["camera_seen"], state["camera_learnt"]) == (0, SEEN_LEAST - 1, False)
    watching.camera.observe(np.array([[1, 1, 0]], np.float32))
    state = client.get("/api/memory").json()
    assert (state["camera_seen"], state["camera_learnt"]) == (SEEN_LEAST, True)
