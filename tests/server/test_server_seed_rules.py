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
    s = ServerSettings(data_dir=tmp_path / "data", system="contingency")
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
