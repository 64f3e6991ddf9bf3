"""The table page fed by the REAL live pipeline (shipped reader) on the bundled demo clip."""

from __future__ import annotations

from conftest import SCREENS, LiveServer, make_settings
from dicecam.server.app import create_app
from dicecam.server.commands.serve import build_live
from dicecam.server.store import RollStore


def _demo_pipeline(notices: list[str]):
    # contingency-action: the demo's first roll (three d8, two d6) is a valid action roll
    pipeline, reader, _ = build_live("demo", "contingency-action", {}, notices, say=lambda m: None)
    # The demo clip and the shipped reader come with the package: no pipeline on them is a broken
    # demo, not a missing environment, so it fails with what build_live said.
    assert pipeline is not None and reader is not None, "no live pipeline on the demo source: " + "; ".join(notices)
    return pipeline, reader


def test_the_demo_source_builds_a_live_pipeline_on_the_shipped_reader_with_no_complaint():
    """Without a browser too: `dicecam serve --source demo` must have a pipeline to show."""
    notices: list[str] = []
    _demo_pipeline(notices)
    assert notices == ["Showing the demo clip (started with --source demo)."], notices


def test_demo_source_roll_reaches_the_page_and_is_corrected(tmp_path, browser):
    notices: list[str] = []
    pipeline, reader = _demo_pipeline(notices)
    s = make_settings(tmp_path).model_copy(update={"system": "contingency-action"})
    store = RollStore(s.db_path)
    with LiveServer(create_app(s, store, pipeline=pipeline, reader=reader, notices=notices)) as srv:
        ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
        page = ctx.new_page()
        page.goto(srv.url + "/")
        page.wait_for_function("window.__dicecamCurrent", timeout=120_000)
        rid = page.evaluate("window.__dicecamCurrent")
        roll = store.get(rid)
        assert roll is not None and roll.source == "demo" and roll.dice  # the demo clip's rolls say so
        for _ in range(600):  # the demo plays only action rolls under this system: the first is adjudicated
            roll = store.get(page.evaluate("window.__dicecamCurrent"))
            if roll.status == "settled":
                break
            page.wait_for_timeout(100)
        assert roll.status == "settled" and roll.adjudication.outcome
        page.wait_for_function("document.getElementById('video').naturalWidth > 0", timeout=30_000)
        SCREENS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENS / "table-demo.png"), full_page=True)
        # correct the first die to another face through the page (the form is for the roll shown when opened)
        page.click("#correct-btn")
        rid = page.evaluate("window.__dicecamCurrent")
        roll = store.get(rid)
        first = roll.dice[0]
        faces = first.type.faces
        new = faces[0] if first.value != faces[0] else faces[-1]
        page.fill("#fix-value-0", str(new))
        page.click("#correct-form button[type=submit]")
        for _ in range(300):  # poll the store: the demo clip may put a newer roll on the page meanwhile
            if store.amendments(rid):
                break
            page.wait_for_timeout(100)
        amended = store.amendments(rid)
        assert amended and amended[0].dice[0].value == new and store.get(rid).dice[0].value == first.value
        assert (s.corrections_dir / f"{amended[0].id}.json").exists()
        ctx.close()
    store.close()
