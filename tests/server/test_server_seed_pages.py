"""The seed rules on the table page, in real headless Chromium with the real rules engine: the
Contingency target as a word with its descriptor, the House Games pool from attribute + ability
(and the count it expects), a Futile Kingdoms contest; the accessibility scan stays clean.
Screenshots go to work/screens/."""

from __future__ import annotations

import pytest

from conftest import LiveServer, SCREENS, serious_violations
from dicecam.server.app import create_app
from dicecam.server.settings import ServerSettings
from dicecam.server.store import RollStore

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def live(tmp_path_factory, browser):
    tmp = tmp_path_factory.mktemp("seedpages")
    s = ServerSettings(data_dir=tmp / "data", system="contingency")
    store = RollStore(s.db_path)
    with LiveServer(create_app(s, store)) as srv:
        yield srv
    store.close()


def configure(page, system: str, fields: dict[str, str]):
    page.select_option("#system", system)
    for name, value in fields.items():
        page.fill(f"#opt-{name}", value)
    # wait for this Apply's own answer: when the system was already chosen, the config on the page
    # names it before the new options arrive
    with page.expect_response(lambda r: r.url.endswith("/api/config") and r.request.method == "PUT"):
        page.get_by_role("button", name="Apply").click()
    page.wait_for_function("!document.querySelector('#config-form button[type=submit]').disabled")
    page.wait_for_function(f"window.__dicecamConfig && window.__dicecamConfig.system === '{system}'")


def manual(page, dice: str):
    page.fill("#manual-dice", dice)
    page.get_by_role("button", name="Resolve").click()


def test_contingency_target_as_a_word_on_the_page(live, page, axe):
    page.goto(live.url + "/")
    page.wait_for_function("window.__dicecamEvents > 0")
    assert "Tricky 5" in page.locator("#opt-target-d").inner_text()  # the words are offered beside the field
    configure(page, "contingency", {"target": "very difficult"})
    assert page.evaluate("window.__dicecamConfig.options.target") == 8
    page.wait_for_function("document.getElementById('odds').textContent.includes('against 8 (Very Difficult)')")
    manual(page, "d6:3 d8:7 d10:0")
    page.wait_for_function("document.getElementById('summary').textContent.includes('against 8 (Very Difficult)')")
    page.select_option("#system", "contingency")
    page.fill("#opt-target", "brutal")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_function("document.getElementById('config-msg').textContent.includes(\"unknown difficulty 'brutal'\")")
    assert not serious_violations(page, axe)


def test_house_games_pool_from_the_sheet_and_a_contest_on_the_page(live, page, axe):
    page.goto(live.url + "/")
    page.wait_for_function("window.__dicecamEvents > 0")
    page.select_option("#system", "house-games")
    configure(page, "house-games", {"attribute": "3", "ability": "5"})
    assert page.evaluate("window.__dicecamConfig.pool.length") == 8
    page.wait_for_function("document.getElementById('odds').textContent.includes('8 dice at difficulty 6')")
    manual(page, "d10:2 d10:4 d10:5 d10:6 d10:8 d10:6 d10:7")
    page.wait_for_function("document.getElementById('manual-msg').textContent.includes('1 fewer than the 8 to roll')")
    manual(page, "d10:2 d10:4 d10:5 d10:6 d10:8 d10:6 d10:7 d10:1")
    page.wait_for_function("document.getElementById('summary').textContent.startsWith('Success: 3 net successes')")
    assert "Pool: attribute 3 + ability 5 = 8 dice." in page.locator("#explanation").inner_text()
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENS / "table-house-games-pool.png"), full_page=True)
    page.select_option("#system", "futile-kingdoms-contest")
    configure(page, "futile-kingdoms-contest", {"scores": "3 2", "names": "Ann Bob"})
    manual(page, "d6:4")
    page.wait_for_function("document.getElementById('summary').textContent === \"Ann's Result is 7; Bob throws next.\"")
    configure(page, "futile-kingdoms-contest", {"thrown": "4"})
    manual(page, "d6:6 d6:5")
    page.wait_for_function("document.getElementById('summary').textContent.startsWith('Bob wins by 3')")
    page.screenshot(path=str(SCREENS / "table-futile-contest.png"), full_page=True)
    assert not serious_violations(page, axe)


def test_the_overlay_shows_the_descriptor_with_the_target(live, page):
    page.goto(live.url + "/overlay?hold=0")
    page.wait_for_function("window.__dicecamSeen > 0")
    page.evaluate("""fetch('/api/rolls', {method: 'POST', headers: {'Content-Type': 'application/json'},
        body: JSON.stringify({system: 'contingency', options: {target: 'Hard'}, dice: ['d6:3', 'd8:7', 'd10:0']})})""")
    page.wait_for_function("document.getElementById('summary').textContent.includes('against 6 (Hard)')")
