"""The table page's "Your dice" section in real headless Chromium: teach a die face by face with the
keyboard, see it known, forget it; a correction says what it taught; the accessibility scan is clean.
Screenshots go to work/screens/ for a person to look at."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import FakePipeline, FakeReader, FakeRules, LiveServer, make_settings, serious_violations, shot
from dicecam.mechanics.dice import DieReading
from dicecam.server.app import create_app
from dicecam.server.store import RollStore
from learning_reader import learning_reader

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
RED = DieReading(type="d4", value=2, box=(100, 100, 180, 180), colour="red")


@pytest.fixture
def live(tmp_path, browser):
    s = make_settings(tmp_path)
    store = RollStore(s.db_path)
    pipeline = FakePipeline()
    app = create_app(s, store, pipeline=pipeline, reader=learning_reader(), rules=FakeRules())
    with LiveServer(app) as srv:
        srv.store, srv.pipeline, srv.app = store, pipeline, app
        yield srv
    store.close()


def _show_face(pipeline, face: int) -> None:
    """Turn the die under the camera to another face: other markings inside its box."""
    frame = pipeline.frame.copy()
    frame[110:170, 110:170] = np.random.default_rng(face).integers(0, 255, (4, 4, 3), np.uint8).repeat(15, 0).repeat(15, 1)
    pipeline.frame = frame


def test_teach_a_d4_face_by_face_with_the_keyboard_then_forget_it(live, page, axe):
    live.pipeline.dice = [RED]
    page.goto(live.url + "/")
    page.wait_for_function("document.getElementById('memory-status').textContent.includes('knows none')")
    page.focus("#teach-name")
    page.keyboard.type("Lucky d4")
    page.keyboard.press("Tab")
    page.keyboard.press("Home")  # the kind list starts at d4
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # Start teaching
    page.wait_for_function("!document.getElementById('teach-steps').hidden")
    assert page.evaluate("document.activeElement.id") == "teach-ask", "focus moves to the question"
    assert page.locator("#teach-ask").inner_text().startswith("Show face 1 on top of Lucky d4")
    for face in (1, 2, 3):
        _show_face(live.pipeline, face)
        page.click("#teach-learn")
        page.wait_for_function(f"document.getElementById('teach-said').textContent.startsWith('Learnt face {face}')")
    assert page.locator("#teach-faces li.learnt").count() == 3
    assert page.locator("#teach-faces li[aria-current=step]").inner_text().endswith("4: now")
    shot(page, "teach-flow.png", full_page=True)
    # The same face shown again but called 4: flagged, said, not learnt.
    page.click("#teach-learn")
    page.wait_for_function("document.getElementById('teach-msg').textContent.includes('already taught as 3')")
    # The player knows better (that earlier photo was the 4): replacing it leaves face 3 to teach again.
    page.click("#teach-force")
    page.wait_for_function("document.getElementById('teach-said').textContent.startsWith('Learnt face 4')")
    assert live.app.state.memory.memory.dice()[0]["faces"] == {1: 1, 2: 1, 4: 1}
    page.wait_for_function("document.getElementById('teach-ask').textContent.startsWith('Show face 3')")
    _show_face(live.pipeline, 7)
    page.click("#teach-learn")
    page.wait_for_function("document.getElementById('teach-ask').textContent.includes('is known')")
    assert live.app.state.memory.memory.dice()[0]["faces"] == {1: 1, 2: 1, 3: 1, 4: 1}
    assert "known: all 4 faces learnt" in page.locator("#memory-dice li[data-die='Lucky d4']").inner_text()
    bad = serious_violations(page, axe)
    assert not bad, bad
    shot(page, "teach-known.png", full_page=True)
    page.click("#teach-stop")
    page.click("#memory-dice li[data-die='Lucky d4'] button")
    page.wait_for_function("document.getElementById('teach-said').textContent.startsWith('Forgot Lucky d4')")
    assert live.app.state.memory.memory.dice() == []


def test_the_teach_flow_learns_each_face_by_itself_when_the_camera_settles_on_the_die_alone(live, page):
    live.pipeline.dice = [RED]
    page.goto(live.url + "/")
    page.wait_for_function("!document.getElementById('teach-controls').hidden")
    page.fill("#teach-name", "Auto d4")
    page.select_option("#teach-kind", "d4")
    page.click("#teach-start button[type=submit]")
    assert "let it lie still" in page.locator("#teach-ask").inner_text()
    for face in (1, 2):
        _show_face(live.pipeline, face)
        live.pipeline.emit([RED])  # the player turned the die; the table went still; the camera read it
        page.wait_for_function(f"document.getElementById('teach-said').textContent.startsWith('Learnt face {face} of Auto d4')")
    assert "Show face 3" in page.locator("#teach-said").inner_text(), "the next face is asked for"
    live.pipeline.emit([RED, RED.model_copy(update={"box": (300, 100, 380, 180)})])
    page.wait_for_function("document.getElementById('teach-msg').textContent.includes('2 dice under the camera')")
    page.uncheck("#teach-auto")  # by hand from here: a settled roll teaches nothing
    page.wait_for_function("document.getElementById('teach-ask').textContent.includes('then press Learn')")
    _show_face(live.pipeline, 3)
    roll = live.pipeline.emit([RED])
    page.wait_for_function(f"window.__dicecamCurrent === '{roll.id}'")
    page.wait_for_timeout(300)  # time for a teach it would have posted
    assert live.app.state.memory.memory.dice()[0]["faces"] == {1: 1, 2: 1}


def test_a_correction_on_the_page_says_what_it_taught(live, page):
    page.goto(live.url + "/")
    page.wait_for_function("window.__dicecamEvents > 0")
    roll = live.pipeline.emit()  # red d6 read 5, white d6 read 2
    page.wait_for_function(f"window.__dicecamCurrent === '{roll.id}'")
    page.click("#correct-btn")
    page.fill("#fix-value-0", "4")
    page.click("#correct-form button[type=submit]")
    page.wait_for_function("document.getElementById('taught-msg').textContent.length > 0")
    assert page.locator("#taught-msg").inner_text() == ("Learnt from your correction: the red d6 as 4. "
                                                        "1 other die confirmed as read.")
    page.wait_for_function("document.querySelectorAll('#memory-dice li').length === 2")
    shot(page, "teach-after-correction.png", full_page=True)


def test_a_server_that_cannot_learn_says_why_and_hides_the_teaching(tmp_path, browser):
    s = make_settings(tmp_path)
    store = RollStore(s.db_path)
    app = create_app(s, store, pipeline=FakePipeline(), reader=FakeReader(), rules=FakeRules())
    with LiveServer(app) as srv:
        ctx = browser.new_context()
        page = ctx.new_page()
        page.goto(srv.url + "/")
        page.wait_for_function("document.getElementById('memory-status').textContent.includes('cannot learn')")
        assert page.locator("#teach-controls").is_hidden()
        ctx.close()
    store.close()


def test_the_teach_flow_in_the_dark_scheme_passes_the_accessibility_scan(live, browser, axe):
    ctx = browser.new_context(viewport={"width": 1280, "height": 1100}, color_scheme="dark")
    page = ctx.new_page()
    live.pipeline.dice = [RED]
    page.goto(live.url + "/")
    page.wait_for_function("!document.getElementById('teach-controls').hidden")
    page.fill("#teach-name", "Night d6")
    page.click("#teach-start button[type=submit]")
    _show_face(live.pipeline, 1)
    page.click("#teach-learn")
    page.wait_for_function("document.getElementById('teach-said').textContent.startsWith('Learnt face 1')")
    page.click("#teach-learn")  # the same face again as 2: the refusal is shown too
    page.wait_for_function("document.getElementById('teach-msg').textContent.includes('already taught')")
    assert page.locator("#teach-force").inner_text() == "Replace it: this is face 2"
    bad = serious_violations(page, axe)
    assert not bad, bad
    page.locator("#teach").screenshot(path=str(__import__("conftest").SCREENS / "teach-dark.png"))
    ctx.close()


def test_the_page_says_when_the_taught_dice_and_the_live_camera_taught_the_table_its_camera(live, page):
    from dicecam.vision.crops import FACE_CLASSES, FACE_INDEX
    from dicecam.vision.camera import LOOKS, TAUGHT_LEAST

    memory = live.app.state.memory.memory
    reader = live.app.state.memory.reader
    for i in range(TAUGHT_LEAST):  # d20s whose centre looks read their faces and the finder's look a neighbour
        looks = np.full((LOOKS, len(FACE_CLASSES)), -25.0, np.float32)
        looks[:2, FACE_INDEX[("d20", 3 + i)]] = looks[2, FACE_INDEX[("d20", 4 + i)]] = -0.2
        crop = np.random.default_rng(i).integers(0, 255, (memory.crop_size, memory.crop_size, 3), np.uint8)
        assert memory.teach(crop, reader.embed(crop[None])[0], "d20", 3 + i, looks=looks, die=f"d20 no. {i}").learnt
    page.goto(live.url + "/")
    page.wait_for_function("document.getElementById('memory-status').textContent.includes('knows')")
    assert f"It has learnt where this camera shows a die's up face, from {TAUGHT_LEAST} taught numeral dice." in \
        page.locator("#memory-status").inner_text()
    reader.watching().camera.observe(np.array([[1, 1, 0]] * 20, np.float32))  # the live camera's own sure reads
    page.reload()
    page.wait_for_function("document.getElementById('memory-status').textContent.includes('read surely')")
    assert f"from {TAUGHT_LEAST} taught numeral dice and 20 dice it read surely." in page.locator("#memory-status").inner_text()
    page.locator("#memory-status").scroll_into_view_if_needed()
    shot(page, "teach-camera.png")


def test_the_page_says_it_when_the_live_camera_learns_its_camera_without_a_reload(live, page):
    reader = live.app.state.memory.reader
    page.goto(live.url + "/")
    page.wait_for_function("document.getElementById('memory-status').textContent.includes('knows none')")
    assert "this camera" not in page.locator("#memory-status").inner_text()
    reader.watching().camera.observe(np.array([[1, 1, 0]] * 20, np.float32))  # the camera's sure reads so far
    live.pipeline.emit([RED])  # the next roll it settles on
    page.wait_for_function("document.getElementById('memory-status').textContent.includes('read surely')")
    assert "It has learnt where this camera shows a die's up face, from 20 dice it read surely." in \
        page.locator("#memory-status").inner_text()
