"""The REST API against fakes and a temporary SQLite store."""

from __future__ import annotations

import csv
import io
import json
import struct
import zlib

import cv2
import numpy as np
import pytest
from fastapi.testclient import TestClient

from conftest import FakePipeline, FakeReader, FakeRules, make_settings, sample_frame
from dicecam.server.app import create_app
from dicecam.server.settings import ServerSettings
from dicecam.server.store import RollStore


def manual(client, dice, **kw):
    return client.post("/api/rolls", json={"dice": dice, **kw})


def test_manual_resolve_is_stored_and_adjudicated(client, app_parts):
    _, store, _, rules, _ = app_parts
    r = manual(client, ["d6:6", "d6:3", {"type": "d6", "value": 1}], options={"target": 8})
    assert r.status_code == 201, r.text
    roll = r.json()
    assert roll["source"] == "manual" and roll["system"] == "sum"
    assert roll["adjudication"]["outcome"] == "success"  # 6+3+1 = 10 >= 8
    assert roll["adjudication"]["summary"] == "Success: 10 against 8."
    assert store.get(roll["id"]).adjudication.model_dump(mode="json") == roll["adjudication"]
    assert client.get(f"/api/rolls/{roll['id']}").json()["adjudication"]["outcome"] == "success"


def test_manual_resolve_uses_configured_options(client):
    assert client.put("/api/config", json={"system": "sum", "options": {"target": 12, "keep": 1}}).status_code == 200
    roll = manual(client, ["d6:6", "d6:5"]).json()
    assert roll["options"]["target"] == 12 and roll["adjudication"]["outcome"] == "failure"
    dropped = [d for d in roll["adjudication"]["dice"] if d["is_dropped"]]
    assert [d["value"] for d in dropped] == [5] and "not among" in dropped[0]["why"]


@pytest.mark.parametrize(
    "body, status, words",
    [
        ({"dice": ["d7:3"]}, 422, "unknown die type"),
        ({"dice": ["d6:9"]}, 422, "no face 9"),
        ({"dice": []}, 422, "at least 1"),
        ({"dice": ["d6:1"], "system": "nope"}, 400, "unknown system"),
        ({"dice": ["d6:1"], "options": {"target": 0}}, 400, "bad option"),
        ({"dice": ["d00:30"]}, 400, "cannot use a d00"),
        ({"dice": ["d6:1"], "surprise": 1}, 422, "surprise: unknown field"),
        ({"dice": ["d6:1"], "follows": "missing-id"}, 400, "no roll"),
    ],
)
def test_bad_manual_requests_get_4xx_with_reason(client, app_parts, body, status, words):
    store = app_parts[1]
    before = store.count()
    r = client.post("/api/rolls", json=body)
    assert r.status_code == status, r.text
    assert words.lower() in r.json()["detail"].lower()
    assert store.count() == before  # nothing stored on bad input


def test_not_json_and_unknown_roll(client):
    r = client.post("/api/rolls", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and r.json()["detail"]
    assert client.get("/api/rolls/nope").status_code == 404
    r = client.post("/api/rolls/nope/amend", json={"dice": ["d6:1"]})
    assert r.status_code == 404 and "nope" in r.json()["detail"]


def test_history_pages_newest_first(client):
    ids = [manual(client, [f"d6:{1 + i % 6}"]).json()["id"] for i in range(7)]
    p1 = client.get("/api/rolls?limit=3").json()
    p2 = client.get("/api/rolls?limit=3&offset=3").json()
    p3 = client.get("/api/rolls?limit=3&offset=6").json()
    assert p1["total"] == 7
    got = [r["id"] for p in (p1, p2, p3) for r in p["items"]]
    assert got == ids[::-1]
    assert client.get("/api/rolls?limit=0").status_code == 422
    assert client.get("/api/rolls?offset=-1").status_code == 422


def test_amendment_keeps_the_original(client, app_parts):
    _, store, pipeline, _, _ = app_parts
    original = pipeline.emit()  # camera roll d6 5, d6 2 with boxes and a frame
    r = client.post(f"/api/rolls/{original.id}/amend", json={"dice": ["d6:6", "d6:6"]})
    assert r.status_code == 201, r.text
    amended = r.json()
    assert amended["amends"] == original.id and amended["id"] != original.id
    assert amended["adjudication"]["outcome"] == "critical"
    assert amended["dice"][0]["box"] == list(original.dice[0].box)  # boxes carried over for the example
    assert store.get(original.id).model_dump() == original.model_dump()  # never overwritten
    one = client.get(f"/api/rolls/{original.id}").json()
    assert [a["id"] for a in one["amendments"]] == [amended["id"]]
    # the correction is saved as a training example: frame, YOLO labels, JSON
    folder = app_parts[0].state.settings.corrections_dir
    jpg, txt, meta = (folder / f"{amended['id']}{s}" for s in (".jpg", ".txt", ".json"))
    assert cv2.imread(str(jpg)).shape == (480, 640, 3)
    lines = txt.read_text().splitlines()
    assert len(lines) == 2 and lines[0].split()[0] == "1"  # class 1 = d6
    cx = float(lines[0].split()[1])
    assert cx == pytest.approx(140 / 640)
    data = json.loads(meta.read_text())
    assert [d["value"] for d in data["dice"]] == [6, 6] and [d["value"] for d in data["was"]] == [5, 2]
    assert (folder / "classes.txt").read_text().split() == ["d4", "d6", "d8", "d10", "d00", "d12", "d20"]


def test_amending_an_uncertain_roll_resolves_it(client, app_parts):
    pipeline = app_parts[2]
    uncertain = pipeline.emit(status="uncertain")
    assert client.get(f"/api/rolls/{uncertain.id}").json()["adjudication"] is None
    r = client.post(f"/api/rolls/{uncertain.id}/amend", json={"dice": ["d6:1", "d6:1"]})
    assert r.status_code == 201 and r.json()["adjudication"]["outcome"] == "disaster"


def test_bad_amendment_stores_nothing(client, app_parts):
    store = app_parts[1]
    roll = manual(client, ["d6:3"]).json()
    n = store.count()
    assert client.post(f"/api/rolls/{roll['id']}/amend", json={"dice": ["d00:30"]}).status_code == 400
    assert client.post(f"/api/rolls/{roll['id']}/amend", json={"dice": ["d6:0"]}).status_code == 422
    assert store.count() == n


def test_export_csv_and_json(client):
    a = manual(client, ["d6:6", "d6:4:red"]).json()
    b = client.post(f"/api/rolls/{a['id']}/amend", json={"dice": ["d6:6", "d6:6"]}).json()
    rows = list(csv.DictReader(io.StringIO(client.get("/api/export.csv").text)))
    assert [r["id"] for r in rows] == [a["id"], b["id"]]
    assert rows[0]["dice"] == "d6:6 d6:4:red" and rows[1]["amends"] == a["id"]
    assert rows[1]["outcome"] == "critical"
    data = client.get("/api/export.json").json()
    assert [r["id"] for r in data] == [a["id"], b["id"]] and data[1]["amends"] == a["id"]


def test_export_of_empty_store(client):
    assert client.get("/api/export.json").json() == []
    assert client.get("/api/export.csv").text.splitlines()[0].startswith("id,ts,source")


def test_config_systems_and_odds(client, app_parts):
    pipeline = app_parts[2]
    systems = client.get("/api/systems").json()
    assert systems[0]["name"] == "sum" and "target" in systems[0]["schema"]["properties"]
    cfg = client.put("/api/config", json={"system": "sum", "options": {"target": 11}, "pool": ["d6", "d6"]}).json()
    assert cfg["options"]["target"] == 11 and cfg["pool"] == ["d6", "d6"]
    assert pipeline.configured[-1] == ("sum", cfg["options"])
    assert client.get("/api/config").json()["options"]["target"] == 11
    odds = client.get("/api/odds").json()
    p = {o["outcome"]: o["fraction"] for o in odds["outcomes"]}
    # two d6 keep 3 (both), total >= 11: (5,6),(6,5) succeed; (6,6) critical; (1,1) disaster
    assert p["success"] == "1/18" and p["critical"] == "1/36" and p["disaster"] == "1/36"
    assert client.post("/api/odds", json={"system": "sum", "pool": ["d4"], "options": {"target": 4}}).json()["outcomes"]
    r = client.put("/api/config", json={"system": "sum", "options": {"target": "high"}})
    assert r.status_code == 400 and "bad option" in r.json()["detail"]
    r = client.put("/api/config", json={"system": "sum", "pool": ["d7"]})
    assert r.status_code == 400 and "d7" in r.json()["detail"]
    assert client.get("/api/config").json()["options"]["target"] == 11  # a refused change changes nothing


def png_header_only(w: int, h: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    chunk = struct.pack(">I", 13) + b"IHDR" + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    return b"\x89PNG\r\n\x1a\n" + chunk


def test_upload_reads_and_stores(client, app_parts):
    reader = app_parts[4]
    ok, buf = cv2.imencode(".png", sample_frame())
    r = client.post("/api/read", files={"image": ("dice.png", buf.tobytes(), "image/png")})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["read"]["width"] == 640 and body["read"]["height"] == 480
    assert [d["value"] for d in body["read"]["dice"]] == [5, 2]
    assert body["roll"]["source"] == "upload" and reader.frames == [(480, 640, 3)]
    # a correction of an uploaded roll saves the uploaded photo
    amended = client.post(f"/api/rolls/{body['roll']['id']}/amend", json={"dice": ["d6:5", "d6:3"]}).json()
    assert (app_parts[0].state.settings.corrections_dir / f"{amended['id']}.jpg").exists()


def test_upload_caps_and_bad_images(tmp_path):
    s = make_settings(tmp_path, max_upload_bytes=50_000, max_upload_pixels=100 * 100)
    store = RollStore(s.db_path)
    app = create_app(s, store, pipeline=None, reader=FakeReader(), rules=FakeRules())
    with TestClient(app) as c:
        big = c.post("/api/read", files={"image": ("a.png", b"\x89PNG\r\n\x1a\n" + b"0" * 60_000, "image/png")})
        assert big.status_code == 413 and "50000 bytes" in big.json()["detail"]
        bomb = c.post("/api/read", files={"image": ("b.png", png_header_only(20000, 20000), "image/png")})
        assert bomb.status_code == 413 and "pixels" in bomb.json()["detail"]
        text = c.post("/api/read", files={"image": ("c.txt", b"hello world, not an image", "text/plain")})
        assert text.status_code == 415
        broken = c.post("/api/read", files={"image": ("d.png", png_header_only(50, 50) + b"garbage", "image/png")})
        assert broken.status_code == 400 and "decoded" in broken.json()["detail"]
        empty = c.post("/api/read", files={"image": ("e.png", b"", "image/png")})
        assert empty.status_code == 400
        missing = c.post("/api/read")
        assert missing.status_code == 422
        assert store.count() == 0
        # no pipeline: the video endpoints say so
        assert c.get("/api/frame.jpg").status_code == 503
        assert "no live camera" in c.get("/api/video.mjpg").json()["detail"]
    store.close()


def test_upload_without_reader_says_why(tmp_path):
    s = make_settings(tmp_path)
    app = create_app(s, RollStore(s.db_path), rules=FakeRules(), notices=["weights missing"])
    with TestClient(app) as c:
        ok, buf = cv2.imencode(".jpg", sample_frame())
        r = c.post("/api/read", files={"image": ("x.jpg", buf.tobytes(), "image/jpeg")})
        assert r.status_code == 503 and "weights missing" in r.json()["detail"]
        assert manual(c, ["d6:4"]).status_code == 201  # manual entry still works
        assert "weights missing" in c.get("/api/health").json()["notices"]


def test_token_required_when_bound_elsewhere(tmp_path):
    with pytest.raises(ValueError, match="needs a token"):
        ServerSettings(host="0.0.0.0", data_dir=tmp_path)
    s = make_settings(tmp_path, host="0.0.0.0", token="s3cret-token")
    store = RollStore(s.db_path)
    app = create_app(s, store, rules=FakeRules())
    with TestClient(app) as c:
        r = manual(c, ["d6:4"])
        assert r.status_code == 401 and "token" in r.json()["detail"]
        assert c.post("/api/rolls", json={"dice": ["d6:4"]}, headers={"Authorization": "Bearer wrong-token"}).status_code == 401
        assert c.put("/api/config", json={"system": "sum"}).status_code == 401
        ok = c.post("/api/rolls", json={"dice": ["d6:4"]}, headers={"Authorization": "Bearer s3cret-token"})
        assert ok.status_code == 201
        assert c.post("/api/rolls?token=s3cret-token", json={"dice": ["d6:4"]}).status_code == 201
        # reading stays open: pages, history, events
        for path in ("/", "/overlay", "/reader", "/api/rolls", "/api/config", "/api/export.csv"):
            assert c.get(path).status_code == 200, path
        with c.websocket_connect("/api/events/ws") as ws:
            assert ws.receive_json()["type"] == "snapshot"
    assert store.count() == 2
    store.close()


def test_cross_origin_writes_are_refused(client, app_parts):
    r = client.post("/api/rolls", json={"dice": ["d6:4"]}, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403 and "cross-origin" in r.json()["detail"]
    ok, buf = cv2.imencode(".png", sample_frame())
    r = client.post("/api/read", files={"image": ("x.png", buf.tobytes(), "image/png")},
                    headers={"Origin": "http://evil.example"})
    assert r.status_code == 403 and app_parts[1].count() == 0
    same = client.post("/api/rolls", json={"dice": ["d6:4"]}, headers={"Origin": "http://testserver"})
    assert same.status_code == 201


def test_restart_keeps_history(tmp_path):
    s = make_settings(tmp_path)
    store = RollStore(s.db_path)
    with TestClient(create_app(s, store, rules=FakeRules())) as c:
        first = manual(c, ["d6:6", "d6:2"]).json()
        c.post(f"/api/rolls/{first['id']}/amend", json={"dice": ["d6:6", "d6:6"]})
    store.close()
    store2 = RollStore(s.db_path)
    with TestClient(create_app(s, store2, rules=FakeRules())) as c:
        page = c.get("/api/rolls").json()
        assert page["total"] == 2 and page["items"][1]["id"] == first["id"]
        assert c.get(f"/api/rolls/{first['id']}").json()["adjudication"] == first["adjudication"]
    store2.close()


def test_store_refuses_duplicate_and_newer_schema(tmp_path):
    import sqlite3

    from dicecam.server.store import StoreError

    store = RollStore(tmp_path / "r.sqlite3")
    assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    roll = FakePipeline().emit(wait=True)
    store.add(roll)
    with pytest.raises(KeyError):
        store.add(roll)
    assert store.count() == 1
    store.close()
    db = sqlite3.connect(tmp_path / "r.sqlite3")
    db.execute("PRAGMA user_version=99")
    db.close()
    with pytest.raises(StoreError, match="schema 99"):
        RollStore(tmp_path / "r.sqlite3")


def test_a_history_file_one_schema_newer_is_refused_and_left_as_it_was(tmp_path):
    """An older dicecam must not open (and rewrite the version of) history written by a newer one."""
    import sqlite3

    from dicecam.server.store import SCHEMA_VERSION, StoreError

    path = tmp_path / "r.sqlite3"
    store = RollStore(path)
    store.add(FakePipeline().emit(wait=True))
    store.close()
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(StoreError, match=f"schema {SCHEMA_VERSION + 1}; this dicecam knows up to {SCHEMA_VERSION}"):
        RollStore(path)
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1
    assert db.execute("SELECT count(*) FROM rolls").fetchone()[0] == 1
    db.close()


def test_pipeline_roll_is_stored_and_frame_served(client, app_parts):
    _, store, pipeline, _, _ = app_parts
    roll = pipeline.emit()
    assert store.get(roll.id) is not None
    r = client.get("/api/frame.jpg")
    assert r.status_code == 200 and r.headers["content-type"] == "image/jpeg"
    img = cv2.imdecode(np.frombuffer(r.content, np.uint8), cv2.IMREAD_COLOR)
    assert img.shape == (480, 640, 3)
    # the box outline is drawn in green on the die's left edge
    assert img[140, 100][1] > 150 and img[140, 100][2] < 150
    with client.stream("GET", "/api/video.mjpg?frames=1") as s:
        body = b"".join(s.iter_bytes())
    assert body.startswith(b"--frame\r\nContent-Type: image/jpeg") and b"\xff\xd9" in body


def test_openapi_documents_the_api(client):
    spec = client.get("/openapi.json").json()
    assert spec["info"]["title"] == "dicecam"
    for path in ("/api/rolls", "/api/rolls/{roll_id}/amend", "/api/odds", "/api/config", "/api/read", "/api/export.csv"):
        assert path in spec["paths"], path
    assert spec["paths"]["/api/rolls"]["post"]["summary"] == "Enter a roll by hand"


def test_openapi_documents_errors_in_the_shapes_sent(client):
    """Without schemathesis too: each error answer is documented, and in the shape the server sends."""
    spec = client.get("/openapi.json").json()
    paths, schemas = spec["paths"], spec["components"]["schemas"]

    def codes(path, method):
        return set(paths[path][method]["responses"])

    assert {"400", "401", "403", "413", "415", "422", "503"} <= codes("/api/read", "post")
    assert {"400", "404", "422"} <= codes("/api/rolls/{roll_id}", "get")
    assert {"400", "401", "403", "404", "422"} <= codes("/api/rolls/{roll_id}/amend", "post")
    assert list(paths["/api/export.csv"]["get"]["responses"]["200"]["content"]) == ["text/csv"]
    assert list(paths["/api/frame.jpg"]["get"]["responses"]["200"]["content"]) == ["image/jpeg"]
    assert "HTTPValidationError" not in schemas  # FastAPI's list-shaped detail is not what this server sends
    ref = paths["/api/rolls"]["post"]["responses"]["422"]["content"]["application/json"]["schema"]["$ref"]
    documented = schemas[ref.rsplit("/", 1)[1]]
    sent = client.post("/api/rolls", json={"dice": "d6"}).json()
    assert set(sent) <= set(documented["properties"]) and isinstance(sent["detail"], str)
    ref = paths["/api/rolls/{roll_id}"]["get"]["responses"]["404"]["content"]["application/json"]["schema"]["$ref"]
    assert set(client.get("/api/rolls/nope").json()) == set(schemas[ref.rsplit("/", 1)[1]]["properties"])
    assert client.get("/api/export.csv").headers["content-type"].startswith("text/csv")

