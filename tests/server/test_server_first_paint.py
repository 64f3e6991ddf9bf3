"""Pages paint their state as they first load: the server renders it into the page (the System list, the
camera, the link line in the HTML; the rest in <script type="application/json" id="initial-state">, which
the scripts draw from before they fetch or connect). Checked in Chromium with every /api request hung and
the event stream never opening, at DOMContentLoaded, and with JavaScript off."""

from __future__ import annotations

import json

import pytest

from conftest import FakeRules, LiveServer, make_settings, serious_violations, served_table, shot
from dicecam.mechanics.dice import DieReading
from dicecam.server.app import _script_json, create_app
from dicecam.server.store import RollStore

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# The event stream never opens, and any request under /api/ hangs: what shows is what the server painted.
NO_STREAM = "window.WebSocket = class { constructor() {} close() {} };"


@pytest.fixture(scope="module")
def live(tmp_path_factory, browser):
    with served_table(tmp_path_factory.mktemp("first-paint"), notices=["Start-up note: </script><b>not markup</b>"]) as srv:
        srv.roll = srv.pipeline.emit([DieReading(type="d6", value=5, colour="red"), DieReading(type="d6", value=4)])
        yield srv


def cut_off(ctx):
    ctx.add_init_script(NO_STREAM)
    ctx.route("**/api/**", lambda route: None)  # never answered


def test_the_table_page_paints_its_state_at_domcontentloaded_with_the_api_cut_off(live, browser, axe):
    ctx = browser.new_context(viewport={"width": 1280, "height": 1100})
    cut_off(ctx)
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(live.url + "/", wait_until="domcontentloaded")
    shot(page, "first-paint-table.png", full_page=True)
    body = page.locator("body").inner_text()
    assert "Connecting" not in body and "No camera" not in body
    assert page.locator("#link").inner_text() == "Up to date"
    assert [o.inner_text() for o in page.locator("#system option").all()] == ["Sum against a target"]
    assert page.locator("#system").input_value() == "sum"
    assert page.locator("#camera-status").inner_text() == "Camera: running"
    assert page.locator("#opt-target").input_value() == "7"  # the options form, from the systems' schemas
    assert page.locator(f"#history tr[data-roll='{live.roll.id}']").count() == 1
    assert page.locator("#roll").is_visible() and page.locator("#verdict").inner_text().lower() == "success"
    assert page.locator("#odds table tbody tr").count() >= 2
    assert page.locator("#banner").inner_text() == "Start-up note: </script><b>not markup</b>"
    assert page.evaluate("window.__dicecamEvents") is None  # the initial state is not an event of the stream
    bad = serious_violations(page, axe)
    assert not bad, bad
    ctx.close()
    assert not errors, errors


def test_the_table_page_without_javascript_shows_the_system_list_and_the_camera(live, browser):
    ctx = browser.new_context(java_script_enabled=False)
    page = ctx.new_page()
    page.goto(live.url + "/")
    assert page.locator("#system option").all_inner_texts() == ["Sum against a target"]
    assert page.locator("#system option[selected]").get_attribute("value") == "sum"
    assert page.locator("#camera-status").inner_text() == "Camera: running"
    assert "Connecting" not in page.locator("body").inner_text()
    state = json.loads(page.locator("#initial-state").text_content())
    snap = state["snapshot"]
    assert snap["type"] == "snapshot" and snap["data"]["rolls"][0]["id"] == live.roll.id
    assert snap["data"]["camera"]["status"] == "running"
    assert [s["name"] for s in state["systems"]] == ["sum"] and state["odds"]["system"] == "sum"
    assert page.locator("script").count() == 3 + 1  # the page's three scripts and the state; the notice is text
    ctx.close()


def test_the_reader_and_the_dice_page_paint_their_state_with_the_api_cut_off(live, browser, axe):
    ctx = browser.new_context(viewport={"width": 1280, "height": 1100})
    cut_off(ctx)
    page = ctx.new_page()
    page.goto(live.url + "/reader", wait_until="domcontentloaded")
    assert "Connecting" not in page.locator("body").inner_text()
    assert page.locator("#detail").is_visible() and page.locator("#waiting").is_hidden()
    assert page.locator("#verdict").inner_text().lower().endswith("success")
    assert page.evaluate("window.__dicecamAnnounced") == []  # shown, not announced: it happened before
    shot(page, "first-paint-reader.png", full_page=True)
    bad = serious_violations(page, axe)
    assert not bad, bad

    page.goto(live.url + "/dice", wait_until="domcontentloaded")
    assert "Loading" not in page.locator("#link").inner_text()
    assert page.locator("#link").inner_text().startswith("1 rolls in the history")
    assert page.locator(".die-card").count() == 2  # the red d6 and the uncoloured one
    shot(page, "first-paint-dice.png", full_page=True)
    bad = serious_violations(page, axe)
    assert not bad, bad
    ctx.close()


def test_the_table_page_goes_live_after_its_first_paint(live, page):
    """The painted state, then the stream: its snapshot adds nothing twice, and a new roll still shows."""
    page.goto(live.url + "/")
    page.wait_for_function("window.__dicecamEvents > 0")
    assert page.locator("#link").inner_text() == "Live"
    assert page.locator(f"#history tr[data-roll='{live.roll.id}']").count() == 1
    assert page.locator("#system option").count() == 1
    roll = live.pipeline.emit([DieReading(type="d6", value=1), DieReading(type="d6", value=1)])
    page.wait_for_function(f"window.__dicecamCurrent === '{roll.id}'")
    assert page.locator("#history tr").count() == 2


def test_a_table_without_a_camera_says_so_in_the_html(tmp_path, browser):
    s = make_settings(tmp_path)
    store = RollStore(s.db_path)
    with LiveServer(create_app(s, store, pipeline=None, reader=None, rules=FakeRules())) as srv:
        ctx = browser.new_context(java_script_enabled=False)
        page = ctx.new_page()
        page.goto(srv.url + "/")
        assert page.locator("#camera-status").inner_text() == "No live camera: enter rolls by hand or upload a photo."
        ctx.close()
    store.close()


def test_the_state_cannot_end_its_script_element():
    text = _script_json({"a": "</script><script>alert(1)</script>", "b": "<!-- & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"a": "</script><script>alert(1)</script>", "b": "<!-- & \u2028"}
