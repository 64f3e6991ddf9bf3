"""The seed rules that were library functions only, through the real rules engine: the CLI
(in a subprocess) and the API (TestClient) with the seeds' own examples."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from fastapi.testclient import TestClient

from dicecam.server.app import create_app
from dicecam.server.settings import ServerSettings
from dicecam.server.store import RollStore


def dicecam(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dicecam.server.cli", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def api(tmp_path):
    s = ServerSettings(data_dir=tmp_path / "data", system="contingency", allowed_hosts=["testserver"])
    store = RollStore(s.db_path)
    with TestClient(create_app(s, store)) as c:
        yield c
    store.close()


# -- Contingency: difficulty descriptors ---------------------------------------------------------
def test_cli_contingency_target_as_a_word():
    r = dicecam("resolve", "contingency", "d6:3", "d8:1", "d10:9", "--target", "Tricky", "--luck", "d6:4", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["target"], out["difficulty"], out["total"], out["outcome"]) == (5, "Tricky", 7, "success")
    assert out["summary"].endswith("makes 7 against 5 (Tricky); 1 player omen, 1 GM omen.")
    r = dicecam("odds", "contingency", "d6", "d8", "d10", "--target", "very difficult")
    assert r.returncode == 0 and "against 8 (Very Difficult)" in r.stdout
    r = dicecam("resolve", "contingency", "d6:3", "d8:1", "d10:9", "--target", "brutal")
    assert r.returncode == 2 and "unknown difficulty 'brutal'" in r.stderr and len(r.stderr.splitlines()) == 1


def test_api_contingency_target_as_a_word(api):
    r = api.post("/api/rolls", json={"system": "contingency", "options": {"target": "Hard"},
                                     "dice": ["d6:3", "d8:7", "d10:0"]})
    assert r.status_code == 201, r.text
    adj = r.json()["adjudication"]
    assert (adj["target"], adj["difficulty"], adj["outcome"]) == (6, "Hard", "success")
    assert "against 6 (Hard)" in adj["summary"]
    assert api.put("/api/config", json={"system": "contingency", "options": {"target": "Improbable"}}).json()["options"]["target"] == 9
    assert "against 9 (Improbable)" in api.get("/api/odds").json()["summary"]
    r = api.post("/api/odds", json={"system": "contingency", "options": {"target": "Tough"}})
    assert r.status_code == 400 and "unknown difficulty 'Tough'" in r.json()["detail"]


# -- House Games: the pool from the sheet, contested, extended, split ---------------------------------
SMITTY = ["d10:2", "d10:4", "d10:5", "d10:6", "d10:8", "d10:6", "d10:7", "d10:1"]


def test_cli_house_games_pool_from_attribute_and_ability():
    r = dicecam("resolve", "house-games", *SMITTY, "--attribute", "3", "--ability", "5", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert (out["pool"], out["difficulty"], out["successes"]) == (8, 6, 3)
    assert out["explanation"][0] == "Pool: attribute 3 + ability 5 = 8 dice."
    r = dicecam("resolve", "house-games", *SMITTY[:7], "--attribute", "3", "--ability", "5")
    assert r.returncode == 2 and "the table shows 7 dice, 1 fewer than the 8 to roll" in r.stderr
    r = dicecam("odds", "house-games", "--attribute", "3", "--ability", "5")
    assert r.returncode == 0 and r.stdout.startswith("8 dice at difficulty 6")


def test_cli_house_games_contested_extended_and_split():
    r = dicecam("resolve", "house-games", "d10:9", "d10:8", "d10:7:black", "--opponent-colour", "black",
                "--opponent-difficulty", "7", "--json")
    out = json.loads(r.stdout)
    assert (out["winner"], out["margin"]) == ("actor", 1), r.stderr
    lines = "\n".join(json.dumps({"dice": [{"type": "d10", "value": v} for v in vs], "image": "x", "width": 1, "height": 1})
                      for vs in ([9, 9], [8, 1, 7], [6]))
    r = subprocess.run([sys.executable, "-m", "dicecam.server.cli", "resolve", "house-games", "--extended", "--json"],
                       input=lines, capture_output=True, text=True, timeout=120)
    assert [json.loads(x)["total_successes"] for x in r.stdout.splitlines()] == [2, 3, 4], r.stderr
    r = dicecam("resolve", "house-games", "d10:9", "d10:8", "d10:1", "d10:2", "d10:3", "d10:4", "--split", "8,6")
    assert r.returncode == 0 and r.stdout.startswith("Split 2 ways at difficulty 6: action 1 success, 1 net; "
                                                     "action 2 failure, 0 net."), r.stderr


def test_api_house_games_sheet_pool_contested_and_split(api):
    r = api.post("/api/rolls", json={"system": "house-games", "options": {"attribute": 3, "ability": 5}, "dice": SMITTY})
    assert r.status_code == 201 and r.json()["adjudication"]["pool"] == 8
    r = api.post("/api/rolls", json={"system": "house-games", "options": {"attribute": 3, "ability": 5}, "dice": SMITTY[:7]})
    assert r.status_code == 400 and "1 fewer than the 8 to roll" in r.json()["detail"]
    cfg = api.put("/api/config", json={"system": "house-games", "options": {"attribute": 3, "ability": 5}}).json()
    assert cfg["pool"] == ["d10"] * 8  # the page's odds and the live view expect the sheet's pool
    r = api.post("/api/rolls", json={"system": "house-games", "options": {"opponent_colour": "black"},
                                     "dice": ["d10:9", "d10:2", "d10:9:black"]})
    assert (r.json()["adjudication"]["winner"], r.json()["adjudication"]["outcome"]) == ("defender", "failure")
    r = api.post("/api/rolls", json={"system": "house-games", "options": {"split": [8, 6]},
                                     "dice": ["d10:9", "d10:8", "d10:1", "d10:2", "d10:3", "d10:4"]})
    assert [a["outcome"] for a in r.json()["adjudication"]["actions"]] == ["success", "failure"]
    r = api.post("/api/rolls", json={"system": "house-games", "options": {"prior_successes": 3, "extended": True},
                                     "dice": ["d10:9"]})
    assert r.json()["adjudication"]["total_successes"] == 4


# -- Futile Kingdoms contests -----------------------------------------------------------------------------
def test_cli_futile_kingdoms_contest_one_throw_after_another():
    r = dicecam("resolve", "futile-kingdoms-contest", "d6:4", "--scores", "3,2", "--names", "Ann,Bob")
    assert r.returncode == 0 and r.stdout.startswith("Ann's Result is 7; Bob throws next."), r.stderr
    r = dicecam("resolve", "futile-kingdoms-contest", "d6:6", "d6:5", "--scores", "3,2", "--names", "Ann,Bob",
                "--thrown", "4", "--json")
    out = json.loads(r.stdout)
    assert (out["winner"], out["margin"], out["results"]) == ("Bob", 3, {"Ann": 7, "Bob": 10})
    assert "exploded d6 5 - 3" in out["explanation"][1]
    r = dicecam("odds", "futile-kingdoms-contest", "--scores", "3,2", "--names", "Ann,Bob", "--thrown", "4")
    assert "Bob wins" in r.stdout and "1/6" in r.stdout
    r = dicecam("resolve", "futile-kingdoms-contest", "d6:4", "d6:5", "--scores", "3,2")
    assert r.returncode == 2 and "only explodes on a 6" in r.stderr


def test_api_futile_kingdoms_contest(api):
    opts = {"scores": [3, 2], "names": ["Ann", "Bob"]}
    first = api.post("/api/rolls", json={"system": "futile-kingdoms-contest", "options": opts, "dice": ["d6:4"]}).json()
    assert first["adjudication"]["outcome"] == "waiting"
    second = api.post("/api/rolls", json={"system": "futile-kingdoms-contest", "options": {**opts, "thrown": ["4"]},
                                          "dice": ["d6:5"], "follows": first["id"]}).json()
    assert (second["adjudication"]["outcome"], second["follows"]) == ("draw", first["id"])
    assert "futile-kingdoms-contest" in [s["name"] for s in api.get("/api/systems").json()]
    o = api.post("/api/odds", json={"system": "futile-kingdoms-contest", "options": {**opts, "explode": True}}).json()
    assert [x["outcome"] for x in o["outcomes"]] == ["Ann wins", "Bob wins", "draw"]
