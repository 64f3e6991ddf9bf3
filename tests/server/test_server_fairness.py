"""Is this die fair? through the API (`GET /api/fairness`, die names) and `dicecam fairness`, on a
history written the way the table writes it: camera rolls, hand-entered rolls, corrections and
uncertain rolls."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import uuid
from datetime import datetime, timezone

from dicecam.mechanics.dice import DieReading
from dicecam.mechanics.roll import Roll
from dicecam.server.store import RollStore

# A red d20 that shows 20 far too often and a fair blue one, seeded.
RNG_SEED = 2026


def history(store: RollStore, rolls: int = 300) -> None:
    rng = random.Random(RNG_SEED)
    for _ in range(rolls):
        red = 20 if rng.random() < 0.25 else rng.randint(1, 20)
        dice = [DieReading(type="d20", value=red, colour="red"), DieReading(type="d20", value=rng.randint(1, 20), colour="blue")]
        store.add(Roll(id=str(uuid.uuid4()), ts=datetime.now(timezone.utc), source="camera", status="settled",
                       system="sum", dice=dice))


def by_name(report: dict) -> dict[str, dict]:
    return {d["name"]: d for d in report["dice"]}


def test_api_fairness_flags_the_loaded_die_and_not_the_fair_one(client, app_parts):
    history(app_parts[1])
    r = client.get("/api/fairness")
    assert r.status_code == 200, r.text
    dice = by_name(r.json())
    red, blue = dice["red d20"], dice["blue d20"]
    assert red["flagged"] and red["verdict"].startswith("face 20 comes up ") and red["rolls"] == 300
    assert not blue["flagged"] and blue["verdict"].startswith("no evidence of bias after 300 rolls")
    assert sum(f["count"] for f in blue["faces"]) == 300 and len(blue["faces"]) == 20
    assert red["plan"]["rolls_needed"] > 100 and "a d20 needs about" in red["plan"]["sentence"]
    only = client.get("/api/fairness", params={"die": "blue d20"}).json()
    assert [d["name"] for d in only["dice"]] == ["blue d20"]


def test_api_fairness_counts_corrections_and_leaves_uncertain_readings_out(client, app_parts):
    _, store, pipeline, _, _ = app_parts
    made = client.post("/api/rolls", json={"system": "sum", "dice": ["d20:20:green"]}).json()
    fixed = client.post(f"/api/rolls/{made['id']}/amend", json={"dice": ["d20:2:green"]})
    assert fixed.status_code == 201, fixed.text
    pipeline.emit([DieReading(type="d20", value=7, colour="green")], status="uncertain")
    green = by_name(client.get("/api/fairness").json())["green d20"]
    assert [f["face"] for f in green["faces"] if f["count"]] == [2]
    assert (green["rolls"], green["corrected"], green["uncertain"]) == (1, 1, 1)


def test_api_names_a_die_and_groups_two_colours_of_it(client, app_parts):
    history(app_parts[1], rolls=40)
    app_parts[1].add(Roll(id=str(uuid.uuid4()), ts=datetime.now(timezone.utc), source="camera", status="settled",
                          system="sum", dice=[DieReading(type="d20", value=3, colour="orange")]))
    assert client.put("/api/dice/names", json={"die": "d20:red", "name": "Lucky"}).json() == {"names": {"d20:red": "Lucky"}}
    # The same name in another case joins the one spelling already given.
    names = client.put("/api/dice/names", json={"die": "d20:Orange", "name": "lucky "}).json()["names"]
    assert names == {"d20:orange": "Lucky", "d20:red": "Lucky"}
    lucky = by_name(client.get("/api/fairness", params={"die": "lucky"}).json())["Lucky"]
    assert lucky["keys"] == ["d20:orange", "d20:red"] and lucky["rolls"] == 41
    refused = client.put("/api/dice/names", json={"die": "d6:red", "name": "Lucky"})
    assert refused.status_code == 400 and "already names a d20" in refused.json()["detail"]
    assert client.put("/api/dice/names", json={"die": "d20:red", "name": ""}).json()["names"] == {"d20:orange": "Lucky"}
    assert client.get("/api/dice/names").json() == {"names": {"d20:orange": "Lucky"}}


def test_api_fairness_bad_input_is_a_4xx_with_a_reason(client, app_parts):
    history(app_parts[1], rolls=5)
    r = client.get("/api/fairness", params={"die": "Grumpy"})
    assert r.status_code == 400 and "no die called 'Grumpy'" in r.json()["detail"]
    r = client.get("/api/fairness", params={"ratio": 1})
    assert r.status_code == 400 and "ratio must differ from 1" in r.json()["detail"]
    assert client.get("/api/fairness", params={"alpha": 0.9}).status_code == 422
    r = client.put("/api/dice/names", json={"die": "d7:red", "name": "x"})
    assert r.status_code == 400 and "unknown die type" in r.json()["detail"]


def test_api_fairness_is_typed_in_the_openapi_schema(client):
    spec = client.get("/openapi.json").json()
    ok = spec["paths"]["/api/fairness"]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert ok == {"$ref": "#/components/schemas/FairnessReport"}


# -- the command -------------------------------------------------------------------------------
def dicecam(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dicecam.server.cli", *args], capture_output=True, text=True, timeout=120)


def test_cli_fairness_human_and_json(tmp_path):
    store = RollStore(tmp_path / "rolls.sqlite3")
    history(store)
    store.name_die("d20:blue", "Old Faithful")
    store.close()
    r = dicecam("fairness", "--data", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("Red d20: face 20 comes up ")
    assert "Old Faithful (d20:blue): no evidence of bias after 300 rolls" in r.stdout
    r = dicecam("fairness", "--data", str(tmp_path), "--die", "Old Faithful", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [d["name"] for d in out["dice"]] == ["Old Faithful"] and out["dice"][0]["rolls"] == 300


def test_cli_fairness_bad_input_is_one_line_and_exit_2(tmp_path):
    for args, words in [(("--data", str(tmp_path / "none")), "no roll history at"),
                        (("--data", str(tmp_path), "--die", "Grumpy"), "no die called 'Grumpy'"),
                        (("--ratio", "1"), "ratio must differ from 1"),
                        (("--alpha", "2"), "--alpha")]:
        if args[:2] == ("--data", str(tmp_path)):
            store = RollStore(tmp_path / "rolls.sqlite3")
            history(store, rolls=3)
            store.close()
        r = dicecam("fairness", *args)
        assert r.returncode == 2, (args, r.stderr)
        assert words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "rolls.sqlite3").write_text("not a database")
    r = dicecam("fairness", "--data", str(tmp_path / "junk"))
    assert r.returncode == 2 and "cannot read the roll history" in r.stderr and "Traceback" not in r.stderr
