"""The three pages in real headless Chromium (Debian's, through Playwright) against uvicorn on 127.0.0.1.

Screenshots go to work/screens/ (gitignored) for a person to look at.
"""

from __future__ import annotations


import pytest

from conftest import (FRAME_DICE, FakeRules, LiveServer, SCREENS, make_settings, serious_violations, served_table,
                      shot)
from dicecam.mechanics.dice import DieReading
from dicecam.server.app import create_app
from dicecam.server.store import RollStore

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def live(tmp_path_factory, browser):
    with served_table(tmp_path_factory.mktemp("pages")) as srv:
        yield srv


def wait_connected(page):
    page.wait_for_function("window.__dicecamEvents > 0 || window.__dicecamSeen > 0 || document.getElementById('link').textContent.includes('onnected')")


def test_table_page_shows_a_camera_roll_and_corrects_a_die(axe, live, page):
    page.goto(live.url + "/")
    page.wait_for_function("window.__dicecamEvents > 0")
    assert page.locator("#system option").first.inner_text() == "Sum against a target"
    assert page.locator("#opt-target").input_value() == "7"
    roll = live.pipeline.emit([DieReading(type="d6", value=5, box=(100, 100, 180, 180), colour="red"),
                               DieReading(type="d6", value=2, box=(300, 110, 380, 190)),
                               DieReading(type="d8", value=1, box=(200, 300, 280, 380)),
                               DieReading(type="d4", value=1, box=(400, 300, 460, 360))])
    page.wait_for_function(f"window.__dicecamCurrent === '{roll.id}'")
    assert page.locator("#verdict").inner_text().lower() == "success"  # 5+2+1 kept >= 7
    dice = page.locator("#dice li")
    assert dice.count() == 4
    assert "dropped" in dice.nth(3).inner_text() and "kept" in dice.nth(0).inner_text()
    assert page.locator("#explanation li").first.inner_text().startswith("Kept 3 dice")
    assert page.locator("#odds table tbody tr").count() >= 2
    page.wait_for_function("document.getElementById('video').naturalWidth > 0")  # MJPEG is playing
    assert page.locator("#video").is_visible()
    shot(page, "table-roll.png", full_page=True)

    # correct the misread d8 (1 -> 8) through the page
    page.click("#correct-btn")
    page.fill("#fix-value-2", "8")
    page.click("#correct-form button[type=submit]")
    page.wait_for_function(f"window.__dicecamCurrent !== '{roll.id}'")
    amended_id = page.evaluate("window.__dicecamCurrent")
    amended = live.store.get(amended_id)
    assert amended.amends == roll.id and [d.value for d in amended.dice] == [5, 2, 8, 1]
    assert live.store.get(roll.id).dice[2].value == 1  # the original stays
    assert "correction" in page.locator("#roll-meta").inner_text()
    assert page.locator(f"tr[data-roll='{amended_id}'] .outcome").inner_text().lower().endswith("success")
    assert (live.app.state.settings.corrections_dir / f"{amended_id}.jpg").exists()
    shot(page, "table-corrected.png", full_page=True)

    # a second correction of the same read: the d4 was a phantom, and a d20 was missed
    page.click("#correct-btn")
    page.click("#correct-dice .correct-row:nth-child(4) button")
    page.click("#correct-add")
    assert page.evaluate("document.activeElement.id") == "fix-type-4"
    page.select_option("#fix-type-4", "d20")
    page.fill("#fix-value-4", "20")
    page.locator("#current").screenshot(path=str(SCREENS / "table-correcting.png"))
    page.click("#correct-form button[type=submit]")
    page.wait_for_function(f"![{roll.id!r}, {amended_id!r}].includes(window.__dicecamCurrent)")
    second = live.store.get(page.evaluate("window.__dicecamCurrent"))
    assert second.amends == amended_id
    assert [(d.type.value, d.value) for d in second.dice] == [("d6", 5), ("d6", 2), ("d8", 8), ("d20", 20)]
    assert second.dice[0].box is not None and second.dice[3].box is None

    bad = serious_violations(page, axe)
    assert not bad, bad


def test_table_page_manual_entry_and_options(live, page):
    page.goto(live.url + "/")
    page.wait_for_function("window.__dicecamEvents > 0")
    page.fill("#opt-target", "20")
    page.click("#config-form button[type=submit]")
    # The odds of the new configuration: no two d6 reach 20, so only failure, critical and disaster are left
    # (waiting for any odds text would race: the page shows the starting configuration's odds already).
    page.wait_for_function("document.querySelector('#odds p') && document.querySelector('#odds p').textContent.startsWith('3 outcomes')")
    assert live.app.state.table.options["target"] == 20
    page.fill("#manual-dice", "d6:6 d6:4")
    page.press("#manual-dice", "Enter")
    page.wait_for_function("document.getElementById('verdict').textContent.toLowerCase() === 'failure'")
    assert page.locator("#summary").inner_text() == "Failure: 10 against 20."
    page.fill("#manual-dice", "d6:9")
    page.press("#manual-dice", "Enter")
    page.wait_for_function("document.getElementById('manual-msg').textContent.includes('no face 9')")
    live.app.state.table.configure("sum", {"target": 7}, None)


def test_overlay_is_transparent_and_marks_a_critical(axe, live, browser):
    ctx = browser.new_context(viewport={"width": 1920, "height": 1080})
    page = ctx.new_page()
    page.goto(live.url + "/overlay?theme=dark&scale=1&pos=bottom-right&hold=0")
    page.wait_for_function("window.__dicecamSeen > 0")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgba(0, 0, 0, 0)"
    assert page.locator("#card").is_hidden()
    live.pipeline.emit([DieReading(type="d6", value=6), DieReading(type="d6", value=6)])
    page.wait_for_function("window.__dicecamPaints.length > 0")
    card = page.locator("#card")
    assert "crit" in card.get_attribute("class")
    assert page.locator("#outcome").inner_text().lower() == "critical"  # a word and an icon, not colour alone
    assert page.locator("#icon").inner_text() == "\u2605"
    assert page.evaluate("getComputedStyle(document.getElementById('card')).borderTopStyle") == "double"
    box = card.bounding_box()
    assert box["x"] + box["width"] > 1800 and box["y"] + box["height"] > 1000  # bottom-right
    page.wait_for_timeout(400)  # let the entrance animation finish
    shot(page, "overlay-critical.png", omit_background=True)
    bad = serious_violations(page, axe)
    assert not bad, bad
    # disaster, top-left, light theme, events filter: uncertain rolls not shown
    page.goto(live.url + "/overlay?theme=light&pos=top-left&events=settled&hold=0.5")
    page.wait_for_function("window.__dicecamSeen > 0")
    live.pipeline.emit(status="uncertain")
    live.pipeline.emit([DieReading(type="d6", value=1), DieReading(type="d6", value=1)])
    page.wait_for_function("window.__dicecamPaints.length > 0")
    assert page.evaluate("window.__dicecamPaints.length") == 1
    assert page.locator("#outcome").inner_text().lower() == "disaster"
    assert page.evaluate("getComputedStyle(document.getElementById('card')).borderTopStyle") == "dashed"
    box = page.locator("#card").bounding_box()
    assert box["x"] < 100 and box["y"] < 100
    page.wait_for_timeout(300)
    shot(page, "overlay-disaster-light.png", omit_background=True)
    bad = serious_violations(page, axe)
    assert not bad, bad
    page.wait_for_function("document.getElementById('card').hidden")  # hold=0.5 s
    # Server-Sent Events instead of WebSocket, larger and pinned top-right: the card stays inside the frame
    page.goto(live.url + "/overlay?transport=sse&scale=1.5&pos=top-right&hold=0")
    page.wait_for_function("window.__dicecamSeen > 0")
    roll = live.pipeline.emit([DieReading(type="d6", value=3), DieReading(type="d6", value=5)])
    page.wait_for_function("window.__dicecamPaints.length > 0")
    assert page.locator("#summary").inner_text() == roll.adjudication.summary
    page.wait_for_timeout(400)
    assert page.evaluate("getComputedStyle(document.getElementById('card')).transform") == "matrix(1.5, 0, 0, 1.5, 0, 0)"
    box = page.locator("#card").bounding_box()
    assert box["x"] + box["width"] <= 1920 and box["y"] >= 0 and box["x"] > 960
    shot(page, "overlay-sse-scaled.png", omit_background=True)
    ctx.close()


def test_reader_announces_each_roll_once(axe, live, browser):
    ctx = browser.new_context(viewport={"width": 1100, "height": 1000}, reduced_motion="reduce")
    page = ctx.new_page()
    page.goto(live.url + "/reader")
    status = page.locator("[role=status]")
    assert status.count() == 1 and status.get_attribute("aria-live") == "polite"
    page.wait_for_function("document.getElementById('link').textContent.includes('Connected')")
    assert status.inner_text() == ""  # old rolls from the snapshot are shown, not announced
    roll = live.pipeline.emit([DieReading(type="d6", value=4), DieReading(type="d6", value=4)])
    summary = roll.adjudication.summary
    page.wait_for_function("document.getElementById('announce').textContent.length > 0")
    assert status.inner_text() == summary
    assert page.evaluate("window.__dicecamAnnounced") == [summary]
    # keyboard: R repeats the last sentence; Tab reaches the controls in order
    page.keyboard.press("r")
    page.wait_for_function("window.__dicecamAnnounced.length === 2")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "repeat"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "speak"
    page.keyboard.press("Space")
    assert page.is_checked("#speak")
    shot(page, "reader.png", full_page=True)
    bad = serious_violations(page, axe)
    assert not bad, bad
    # turning the single-key shortcut off (WCAG 2.1.4) stops R
    page.uncheck("#shortcut")
    page.keyboard.press("r")
    page.wait_for_timeout(150)
    assert len(page.evaluate("window.__dicecamAnnounced")) == 2
    ctx.close()


def test_reader_in_forced_colours_and_light_scheme(axe, live, browser):
    ctx = browser.new_context(viewport={"width": 1100, "height": 900}, forced_colors="active", color_scheme="light")
    page = ctx.new_page()
    page.goto(live.url + "/reader")
    page.wait_for_function("document.getElementById('link').textContent.includes('Connected')")
    shot(page, "reader-forced-colours.png")
    bad = serious_violations(page, axe)
    assert not bad, bad
    ctx.close()


def test_table_page_in_dark_scheme_passes_axe(axe, live, browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 1000}, color_scheme="dark")
    page = ctx.new_page()
    page.goto(live.url + "/")
    page.wait_for_function("window.__dicecamEvents > 0")
    page.wait_for_function("document.getElementById('video').naturalWidth > 0")
    # the serve command's fallback to the demo clip reaches the page as a banner
    live.app.state.table.set_camera("demo", "No camera found at 0: showing the demo clip instead.", source="demo")
    page.wait_for_function("!document.getElementById('banner').hidden")
    assert "demo clip" in page.locator("#banner").inner_text()
    assert page.locator("#camera-status").inner_text().startswith("No camera found")
    shot(page, "table-dark.png", full_page=True)
    bad = serious_violations(page, axe)
    assert not bad, bad
    live.app.state.table.set_camera("running", None)
    ctx.close()


def test_pages_load_without_any_outside_request(live, browser):
    ctx = browser.new_context()
    page = ctx.new_page()
    outside = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(live.url.replace("http", "ws")) and not r.url.startswith(live.url) else None)
    for path in ("/", "/overlay", "/reader", "/docs"):
        page.goto(live.url + path)
        page.wait_for_load_state("networkidle") if path != "/" else page.wait_for_timeout(300)
    assert not outside, outside
    page.goto(live.url + "/docs")
    page.wait_for_selector("article.endpoint")
    assert page.locator("h3", has_text="POST /api/rolls/{roll_id}/amend").count() == 1
    ctx.close()


def test_table_page_with_the_real_rules_engine(axe, tmp_path, browser):
    """No fake rules: every system's options render from its schema, and a manual roll is adjudicated."""
    from dicecam.server.rulebook import load_rules

    rules = load_rules()
    assert not hasattr(rules, "reason"), f"the rules engine must load here: {getattr(rules, 'reason', '')}"
    s = make_settings(tmp_path).model_copy(update={"system": "contingency"})
    store = RollStore(s.db_path)
    with LiveServer(create_app(s, store)) as srv:
        ctx = browser.new_context(viewport={"width": 1280, "height": 1000})
        page = ctx.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(srv.url + "/")
        page.wait_for_function("window.__dicecamEvents > 0")
        names = page.eval_on_selector_all("#system option", "os => os.map(o => o.value)")
        assert {"contingency", "house-games", "futile-kingdoms", "percentile"} <= set(names)
        for name in names:  # each system's options form renders and applies unchanged (defaults are valid)
            page.select_option("#system", name)
            page.click("#config-form button[type=submit]")
            page.wait_for_function(f"window.__dicecamConfig.system === '{name}'")
            assert page.locator("#config-msg").inner_text() == ""
            assert srv.server.config.app.state.table.system == name
            if name == "table":
                continue  # a table needs rows before it has odds
            page.wait_for_function(f"window.__dicecamOdds === '{name}'")
        page.select_option("#system", "contingency")
        page.fill("#opt-target", "5")
        page.click("#config-form button[type=submit]")
        page.wait_for_function("document.querySelector('#odds table')")
        page.fill("#manual-dice", "d6:2 d8:5 d10:7")
        page.press("#manual-dice", "Enter")
        page.wait_for_function("document.getElementById('summary').textContent.length > 0")
        roll = store.page(0, 1).items[0]
        assert roll.system == "contingency" and page.locator("#summary").inner_text() == roll.adjudication.summary
        shot(page, "table-contingency.png", full_page=True)
        bad = serious_violations(page, axe)
        assert not bad, bad
        assert not errors, errors
        ctx.close()
    store.close()


def test_history_pages_older_rolls_in(tmp_path, browser):
    s = make_settings(tmp_path)
    store = RollStore(s.db_path)
    app = create_app(s, store, rules=FakeRules())
    table = app.state.table
    for i in range(27):
        table.manual(None, None, [DieReading(type="d6", value=1 + i % 6)])
    with LiveServer(app) as srv:
        ctx = browser.new_context()
        page = ctx.new_page()
        page.goto(srv.url + "/")
        page.wait_for_function("window.__dicecamEvents > 0")
        assert page.locator("#history tr").count() == 20
        page.click("#more")
        page.wait_for_function("document.querySelectorAll('#history tr').length === 27")
        assert page.locator("#more").is_hidden()
        ids = page.eval_on_selector_all("#history tr", "rows => rows.map(r => r.dataset.roll)")
        assert ids == [r.id for r in store.page(0, 50).items]  # newest first, no gaps, no repeats
        ctx.close()
    store.close()


def test_table_page_speaks_the_verdict_of_a_roll_entered_by_hand(live, page, axe):
    """Focus stays in the dice field (the next roll is typed there), so the verdict comes through a
    polite live region that says the dice and the summary; an error empties it."""
    page.goto(live.url + "/")
    page.wait_for_function("window.__dicecamEvents > 0")
    region = page.locator("#entered")
    assert region.get_attribute("role") == "status" and region.inner_text() == ""
    page.fill("#manual-dice", "d6:6 d6:3")
    page.press("#manual-dice", "Enter")
    page.wait_for_function("document.getElementById('entered').textContent.length > 0")
    roll = live.store.get(page.evaluate("window.__dicecamCurrent"))
    assert roll.source == "manual"
    assert region.inner_text() == f"Entered d6 6, d6 3. {roll.adjudication.summary}"
    assert page.evaluate("document.activeElement.id") == "manual-dice"
    shot(page, "table-entered.png", full_page=True)
    bad = serious_violations(page, axe)
    assert not bad, bad
    page.fill("#manual-dice", "d6:9")
    page.press("#manual-dice", "Enter")
    page.wait_for_function("document.getElementById('manual-msg').textContent.includes('no face 9')")
    assert region.inner_text() == ""


def test_reader_names_the_dice_it_saw_when_a_roll_is_uncertain(live, browser, axe):
    ctx = browser.new_context(viewport={"width": 1100, "height": 1000})
    page = ctx.new_page()
    page.goto(live.url + "/reader")
    page.wait_for_function("document.getElementById('link').textContent.includes('Connected')")
    roll = live.pipeline.emit(FRAME_DICE, status="uncertain")  # a red d6 5 and a white d6 2, one cocked
    page.wait_for_function("window.__dicecamAnnounced.length > 0")
    said = page.evaluate("window.__dicecamAnnounced")[-1]
    assert said == f"Roll uncertain: {roll.reason}. Dice seen: red d6 5, white d6 2."
    page.wait_for_function("document.getElementById('announce').textContent.length > 0")
    assert page.locator("#announce").inner_text() == said
    page.keyboard.press("r")  # the repeated sentence is the same
    page.wait_for_function("window.__dicecamAnnounced.length === 2")
    assert page.evaluate("window.__dicecamAnnounced")[-1] == said
    shot(page, "reader-uncertain.png", full_page=True)
    bad = serious_violations(page, axe)
    assert not bad, bad
    ctx.close()
