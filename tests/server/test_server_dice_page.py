"""The Dice page in real headless Chromium against uvicorn: histograms a screen reader reads as
tables, the accessibility scan clean, naming a die, and new rolls counted as they arrive.
Screenshots go to work/screens/ for a person to look at."""

from __future__ import annotations

import random
import uuid
from datetime import datetime, timezone

import pytest

from conftest import SCREENS, serious_violations, served_table
from dicecam.mechanics.dice import DieReading
from dicecam.mechanics.roll import Roll

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def live(tmp_path_factory, browser):
    def loaded_d20(store):
        rng = random.Random(14)
        for _ in range(260):
            dice = [DieReading(type="d20", value=20 if rng.random() < 0.2 else rng.randint(1, 20), colour="red"),
                    DieReading(type="d6", value=rng.randint(1, 6), colour="white")]
            store.add(Roll(id=str(uuid.uuid4()), ts=datetime.now(timezone.utc), source="camera", status="settled",
                           system="sum", dice=dice))

    with served_table(tmp_path_factory.mktemp("dice"), loaded_d20) as srv:
        yield srv


def test_table_page_links_to_the_dice_page(live, page):
    page.goto(live.url + "/")
    page.get_by_role("link", name="Dice", exact=True).click()
    page.wait_for_function("window.__dicecamDice !== undefined")
    assert page.url.endswith("/dice")


def test_dice_page_draws_each_die_and_reads_as_a_table(live, page, axe):
    page.goto(live.url + "/dice")
    page.wait_for_function("window.__dicecamDice !== undefined")
    cards = page.locator(".die-card")
    assert cards.count() == 2
    red = cards.first  # flagged dice come first
    assert red.locator("h2").inner_text().startswith("red d20")
    assert "face 20 comes up" in red.locator(".die-verdict").inner_text()
    # The histogram: one bar per face and the expected line, hidden from screen readers...
    assert red.locator("svg.hist rect").count() == 20 and red.locator("svg.hist line.expected").count() == 1
    assert red.locator("svg.hist").get_attribute("aria-hidden") == "true"
    # ...which read the same numbers as a table with headers.
    table = page.get_by_role("table", name="Rolls per face of red d20, against a fair die")
    assert table.get_by_role("columnheader").count() == 21
    report = page.evaluate("window.__dicecamDice")
    red_counts = [f["count"] for f in report["dice"][0]["faces"]]
    assert table.get_by_role("row").nth(1).locator("td").all_inner_texts() == [str(c) for c in red_counts]
    white = cards.nth(1)
    assert "no evidence of bias after 260 rolls" in white.locator(".die-verdict").inner_text()
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENS / "dice-page.png"), full_page=True)
    bad = serious_violations(page, axe)
    assert not bad, bad


def test_dice_page_names_a_die_and_counts_new_rolls(live, page, axe):
    page.goto(live.url + "/dice")
    page.wait_for_function("window.__dicecamDice !== undefined")
    page.get_by_label("Name the white d6").fill("Bone")
    page.locator(".die-card").nth(1).get_by_role("button", name="Save name").click()
    page.wait_for_function("window.__dicecamDice.dice.some(d => d.name === 'Bone')")
    assert live.store.die_names() == {"d6:white": "Bone"}
    assert page.locator(".die-card h2", has_text="Bone").count() == 1
    # A roll arriving from the camera is counted without a reload.
    live.pipeline.emit([DieReading(type="d6", value=3, colour="white")])
    page.wait_for_function("window.__dicecamDice.dice.some(d => d.name === 'Bone' && d.rolls === 261)")
    # A bad setting is refused with the server's reason.
    page.fill("#ratio", "1")
    page.get_by_role("button", name="Test again").click()
    page.wait_for_function("document.getElementById('settings-msg').textContent.includes('ratio must differ from 1')")
    bad = serious_violations(page, axe)
    assert not bad, bad
