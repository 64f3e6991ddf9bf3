"""Error wording: every refusal names the field in the user's words, in one line — never a parser's
internals (a character position where the field should be, Python's int-conversion advice)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from fastapi.testclient import TestClient

from dicecam.server.app import create_app
from dicecam.server.rulebook import load_rules
from dicecam.server.settings import ServerSettings
from dicecam.server.store import RollStore

HUGE = "9" * 5000
THREE = '"d6:3","d8:7","d10:0"'
INTERNALS = ("set_int_max_str_digits", "JSON decode error", "bad option options", "Extra inputs", "Exceeds the limit")


@pytest.fixture
def real(tmp_path):
    s = ServerSettings(data_dir=tmp_path / "data", allowed_hosts=["testserver"])  # contingency, the default
    store = RollStore(s.db_path)
    with TestClient(create_app(s, store, rules=load_rules())) as c:
        yield c, store
    store.close()


@pytest.mark.parametrize(
    "body, status, says",
    [
        ('{"dice":[%s],"options":{"target":%s}}' % (THREE, HUGE), 400, "bad option target: a number of 5000 digits"),
        ('{"dice":["d6:%s"]}' % HUGE, 422, "dice #1: bad die 'd6:99"),
        ('{"dice":[{"type":"d6","value":%s}]}' % HUGE, 422, "dice #1 value: a number of 5000 digits"),
        ('{"dice": [d6:3]}', 422, "the request body is not valid JSON: Expecting value at character 11"),
        ('{bad', 422, "the request body is not valid JSON"),
        ('{"dice":[%s],"options":{"luck":"d7"}}' % THREE, 400, "bad option luck: bad die 'd7'"),
        ('{"dice":[%s],"options":{"luck_die":"d6:2"}}' % THREE, 400, "bad option luck_die: no such option (options: target,"),
        ('{"dice":["d6:3","d6:9"]}', 422, "dice #2: a d6 has no face 9"),
        ('{"dice":[{"type":"d6"}]}', 422, "dice #1 value: missing"),
        ('[]', 422, "request body: should be an object"),
    ],
    ids=["huge option", "huge die text", "huge die value", "bad JSON", "bad JSON start", "bad luck die",
         "unknown option", "no such face", "missing value", "not an object"],
)
def test_api_refusals_name_the_field(real, body, status, says):
    c, store = real
    r = c.post("/api/rolls", content=body, headers={"content-type": "application/json"})
    detail = r.json()["detail"]
    assert r.status_code == status and detail.startswith(says), detail
    assert not any(word in detail for word in INTERNALS) and len(detail) < 300
    assert store.count() == 0


def cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "dicecam.server.cli", *args], input=stdin, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize(
    "args, stdin, says",
    [
        (["resolve", "contingency", f"d6:{HUGE}", "d8:1", "d10:2"], None, "bad die 'd6:99"),
        (["resolve", "contingency", "d6:3", "d8:1", "d10:2", "--options", '{"target": %s}' % HUGE], None,
         "bad option target: a number of 5000 digits"),
        (["resolve", "contingency"], json.dumps({"image": "x", "width": 1, "height": 1, "dice": []})[:-2]
         + '{"type": "d6", "value": %s}]}\n' % HUGE, "dice #1 value: a number of 5000 digits"),
        (["resolve", "contingency", "d6:3", "d8:1", "d10:2", "--luck", "d7"], None, "bad option luck: bad die 'd7'"),
        (["odds", "contingency", "--target", HUGE], None, "bad option target: a number of 5000 digits"),
        (["serve", "--option", f"target={HUGE}", "--port", "1"], None, "bad option target: a number of 5000 digits"),
    ],
    ids=["huge die", "huge option", "huge die on stdin", "bad luck die", "huge flag", "huge serve option"],
)
def test_cli_refusals_name_the_field_in_one_short_line(args, stdin, says):
    r = cli(*args, stdin=stdin)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-500:]
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0] and len(lines[0]) < 300, lines
    assert not any(word in lines[0] for word in INTERNALS)


def test_amending_into_another_system_starts_from_its_defaults(real):
    """A roll under contingency (with its own target) corrected into house-games: no contingency option
    is carried into house-games, which would refuse it; the same system keeps the original's options."""
    c, store = real
    original = c.post("/api/rolls", json={"dice": ["d6:3", "d8:7", "d10:0"], "options": {"target": 9}}).json()
    assert original["options"]["target"] == 9
    moved = c.post(f"/api/rolls/{original['id']}/amend", json={"dice": ["d10:7", "d10:2"], "system": "house-games"})
    assert moved.status_code == 201, moved.text
    defaults = c.post("/api/odds", json={"system": "house-games"}).json()["options"]
    assert moved.json()["system"] == "house-games" and moved.json()["options"] == defaults
    same = c.post(f"/api/rolls/{original['id']}/amend", json={"dice": ["d6:4", "d8:7", "d10:0"]}).json()
    assert same["options"]["target"] == 9
    given = c.post(f"/api/rolls/{original['id']}/amend",
                   json={"dice": ["d6:4", "d8:7", "d10:0"], "system": "contingency", "options": {"target": 3}}).json()
    assert given["options"]["target"] == 3
    assert store.count() == 4
