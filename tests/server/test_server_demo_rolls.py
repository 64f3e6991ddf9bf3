"""Rolls of the bundled demo clip (source "demo") are not the table's: labelled wherever they appear, never
counted by fairness, left out of the exports, and cleared once the table has a roll of its own or starts on
a real camera."""

from __future__ import annotations

import argparse
import json
import uuid
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from conftest import FakePipeline, FakeReader, FakeRules, LiveServer, make_settings, serious_violations, shot
from dicecam.mechanics.dice import DieReading
from dicecam.mechanics.roll import Roll
from dicecam.server.commands import fairness as cli_fairness
from dicecam.server.app import create_app
from dicecam.server.store import Frame, RollStore
from dicecam.vision.pipeline import Pipeline
from dicecam.vision.sources import memory_source

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def roll(source: str, value: int = 6, i: int = 0, **kw) -> Roll:
    return Roll(id=str(uuid.uuid4()), ts=T0 + timedelta(seconds=i), source=source, status="settled", system="sum",
                dice=[DieReading(type="d10", value=value, colour="white")], **kw)


def loaded_demo(store: RollStore, n: int = 80) -> list[Roll]:
    """What the demo clip leaves: a white d10 that 'shows 6 far too often'."""
    return [store.add(roll("demo", 6 if i % 2 else i % 10, i), Frame(b"\xff\xd8jpeg", 4, 3)) for i in range(n)]


class DemoPipeline(FakePipeline):
    """The fake pipeline playing the demo clip (vision.pipeline.Pipeline.demo is true on the demo source)."""

    demo = True

    def emit_demo(self, value: int = 6) -> Roll:
        self.dice = [DieReading(type="d6", value=value, box=(100, 100, 180, 180), colour="white")]
        self.frame_id += 1
        r = Roll(id=str(uuid.uuid4()), ts=datetime.now(timezone.utc), source="demo", status="settled",
                 frame_id=self.frame_id, system="sum", dice=self.dice,
                 adjudication=FakeRules().resolve("sum", self.dice, {}))
        from dicecam.server.events import make_event

        ev = make_event("roll.settled", r, frame=self.frame)
        for cb in self.callbacks:
            cb(ev)
        return r


# -- the roll and the pipeline --------------------------------------------------------------------
def test_a_non_demo_roll_json_has_no_new_field_and_a_demo_roll_round_trips():
    r = roll("camera")
    assert set(json.loads(r.model_dump_json())) == set(Roll.model_fields)  # no field added
    d = roll("demo")
    assert Roll.model_validate_json(d.model_dump_json()) == d and json.loads(d.model_dump_json())["source"] == "demo"


@pytest.mark.parametrize("spec, source", [("demo", "demo"), ("0", "camera"), ("memory", "camera")])
def test_the_pipeline_labels_the_rolls_of_the_demo_clip(spec, source):
    frames = [np.zeros((48, 64, 3), np.uint8)]
    p = Pipeline(memory_source(frames, spec=spec), lambda f: [], "sum", {}, warm_up=False)
    assert p.demo is (spec == "demo")
    assert p.watcher.session.source == source


# -- the store ------------------------------------------------------------------------------------
def test_the_first_roll_of_the_tables_own_clears_the_demo_rolls_and_their_pictures(tmp_path):
    store = RollStore(tmp_path / "rolls.db")
    demo = loaded_demo(store, 5)
    fixed = store.add(roll("demo", 3, 10, amends=demo[0].id))  # a correction of a demo roll is a demo roll
    assert store.count() == 6 and store.demo_count() == 6 and store.frame_count() == 5
    own = store.add(roll("manual", 2, 20))
    assert store.count() == 1 and store.demo_count() == 0 and store.frame_count() == 0
    assert store.get(own.id) == own and store.get(fixed.id) is None
    # Demo rolls stored after it wait for the next roll of the table's own.
    later = store.add(roll("demo", 4, 30))
    assert store.count() == 2 and store.get(later.id) is not None
    store.add(roll("camera", 5, 40))
    assert [r.source for r in store.iter_all()] == ["manual", "camera"]
    store.close()


def test_drop_demo_and_the_flag_survive_a_restart(tmp_path):
    store = RollStore(tmp_path / "rolls.db")
    loaded_demo(store, 3)
    store.close()
    store = RollStore(tmp_path / "rolls.db")  # reopened: it still knows demo rolls are there
    assert store.drop_demo() == 3 and store.count() == 0 and store.drop_demo() == 0
    loaded_demo(store, 2)
    store.close()
    store = RollStore(tmp_path / "rolls.db")
    store.add(roll("upload", 1, 99))
    assert store.count() == 1 and store.demo_count() == 0
    store.close()


def test_the_exports_leave_demo_rolls_out(tmp_path):
    store = RollStore(tmp_path / "rolls.db")
    own = store.add(roll("camera", 1, 0))
    loaded_demo(store, 4)
    assert [r["id"] for r in json.loads("".join(store.export_json()))] == [own.id]
    rows = "".join(store.export_csv()).strip().splitlines()
    assert len(rows) == 2 and rows[1].startswith(own.id)
    assert store.count() == 5 and len(list(store.iter_all())) == 5 and len(list(store.iter_all(demo=False))) == 1
    store.close()


# -- the server -----------------------------------------------------------------------------------
def demo_app(tmp_path, pipeline):
    s = make_settings(tmp_path)
    store = RollStore(s.db_path)
    return create_app(s, store, pipeline=pipeline, reader=FakeReader(), rules=FakeRules()), store


def test_fairness_and_exports_through_the_api_never_count_demo_rolls(tmp_path):
    from fastapi.testclient import TestClient

    pipeline = DemoPipeline()
    app, store = demo_app(tmp_path, pipeline)
    with TestClient(app) as client:
        loaded_demo(store)
        report = client.get("/api/fairness").json()
        assert report["dice"] == [] and report["rolls_seen"] == 0, report
        assert client.get("/api/export.json").json() == []
        assert client.get("/api/export.csv").text.strip().count("\n") == 0  # the header alone
        # The history and the events say what they are.
        page = client.get("/api/rolls?limit=5").json()
        assert page["total"] == 80 and {r["source"] for r in page["items"]} == {"demo"}
        live = pipeline.emit_demo()
        assert client.get(f"/api/rolls/{live.id}").json()["source"] == "demo"
        assert store.get(live.id).source == "demo" and store.frame(live.id) is not None
    store.close()


def test_cli_fairness_never_counts_demo_rolls(tmp_path, capsys):
    s = make_settings(tmp_path)
    store = RollStore(s.db_path)
    loaded_demo(store)
    store.close()
    args = argparse.Namespace(die=None, data=str(s.data_dir), alpha=0.01, power=0.8, ratio=2.0, json=True)
    assert cli_fairness.run(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dice"] == [] and report["rolls_seen"] == 0


def test_a_real_camera_at_start_clears_the_demo_rolls_and_the_demo_clip_keeps_them(tmp_path):
    app, store = demo_app(tmp_path, DemoPipeline())
    loaded_demo(store, 7)
    store.close()
    app, store = demo_app(tmp_path, DemoPipeline())  # the demo again: nothing cleared
    assert store.demo_count() == 7
    store.close()
    app, store = demo_app(tmp_path, None)  # no camera at all (manual entry only): nothing cleared yet
    assert store.demo_count() == 7
    store.close()
    app, store = demo_app(tmp_path, FakePipeline())  # a real camera
    assert store.count() == 0
    store.close()


def test_a_roll_typed_by_hand_clears_the_demo_and_never_joins_a_demo_roll(tmp_path):
    from fastapi.testclient import TestClient

    pipeline = DemoPipeline()
    app, store = demo_app(tmp_path, pipeline)
    with TestClient(app) as client:
        demo = pipeline.emit_demo()
        r = client.post("/api/rolls", json={"dice": ["d6:3"], "follows": demo.id})
        assert r.status_code == 400 and "demo" in r.json()["detail"]
        assert store.get(demo.id) is not None  # a refused roll clears nothing
        r = client.post("/api/rolls", json={"dice": ["d6:3", "d6:5"]})
        assert r.status_code == 201, r.text
        own = r.json()
        assert own["source"] == "manual" and own["follows"] is None
        assert store.count() == 1 and store.get(demo.id) is None
        # A correction of a demo roll stays a demo roll (and clears nothing).
        again = pipeline.emit_demo(4)
        fixed = client.post(f"/api/rolls/{again.id}/amend", json={"dice": ["d6:2"]}).json()
        assert fixed["source"] == "demo" and store.count() == 3
    store.close()


# -- the pages ------------------------------------------------------------------------------------
def test_the_pages_tag_demo_rolls_and_drop_them_at_the_tables_first_own_roll(tmp_path, browser, axe):
    pipeline = DemoPipeline()
    app, store = demo_app(tmp_path, pipeline)
    loaded_demo(store, 3)
    with LiveServer(app) as srv:
        ctx = browser.new_context(viewport={"width": 1280, "height": 1100})
        page, reader = ctx.new_page(), ctx.new_page()
        errors = []
        for p in (page, reader):
            p.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(srv.url + "/")
        page.wait_for_function("window.__dicecamEvents > 0")
        reader.goto(srv.url + "/reader")
        reader.wait_for_function("document.getElementById('link').textContent.includes('onnected')")
        live = pipeline.emit_demo()
        page.wait_for_function(f"window.__dicecamCurrent === '{live.id}'")
        reader.wait_for_function("window.__dicecamAnnounced.length > 0")
        # The table page: a visible "demo" tag on every demo row, and the current roll says so.
        rows = page.locator("#history tr")
        assert rows.count() == 4
        assert page.locator("#history tr .tag.demo").count() == 4
        assert page.locator("#history tr .tag.demo").first.is_visible()
        assert page.locator("#history tr .tag.demo").first.inner_text().lower() == "demo"
        assert "demo clip, not your dice" in page.locator("#roll-meta").inner_text()
        shot(page, "table-demo-rolls.png", full_page=True)
        bad = serious_violations(page, axe)
        assert not bad, bad
        # The reader: the verdict and the earlier rolls are tagged; the announcement says it is a demo roll.
        assert reader.locator("#verdict .tag.demo").inner_text().lower() == "demo"
        assert reader.locator("#recent li .tag.demo").count() == 3
        assert reader.evaluate("window.__dicecamAnnounced")[-1].startswith("Demo roll.")
        shot(reader, "reader-demo-rolls.png", full_page=True)
        bad = serious_violations(reader, axe)
        assert not bad, bad

        # A roll typed by hand: the demo rolls leave the store and both pages' history.
        page.fill("#manual-dice", "d6:6 d6:4")
        page.press("#manual-dice", "Enter")
        page.wait_for_function("document.querySelectorAll('#history tr').length === 1")
        assert page.locator("#history .tag.demo").count() == 0
        reader.wait_for_function("document.querySelectorAll('#recent li.demo').length === 0")
        assert reader.locator("#verdict .tag.demo").count() == 0
        assert store.count() == 1 and store.demo_count() == 0
        # A reload shows the same: the history is the table's own.
        page.reload()
        assert page.locator("#history tr").count() == 1 and page.locator("#history .tag.demo").count() == 0
        ctx.close()
    store.close()
    assert not errors, errors
