"""`dicecam resolve` and `dicecam odds` through the real dispatcher, in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dicecam.mechanics.percentile import parse_table_text
from dicecam.server.benchmarks.odds import bench_odds
from dicecam.server.commands.rules import expand_pool


def dicecam(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dicecam.server.cli", *args], input=stdin, capture_output=True,
                          text=True, timeout=120)


def test_resolve_json_contingency():
    r = dicecam("resolve", "contingency", "d6:3", "d8:1", "d10:9", "--target", "5", "--luck", "d6:4", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    for key in ("result", "result_die", "luck_die", "total", "success", "fail_by_one", "player_omens", "gm_omens",
                "summary", "explanation"):
        assert key in out
    assert (out["result"], out["luck_die"], out["total"], out["outcome"]) == (3, "d6", 7, "success")


def test_resolve_contingency_modifier_flag_and_human_block():
    r = dicecam("resolve", "contingency", "d6:3", "d8:1", "d10:9", "--modifier", "0:+2", "--modifier", "1:-1")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("Success") and lines[1].startswith("  1. ")


@pytest.mark.parametrize("args, key, value", [
    (["contingency-action", "d8:8", "d8:8", "d8:8", "d6:6", "d6:6"], "outcome", "clean"),
    (["contingency-action", "d8:1", "d6:6", "d6:6"], "tension", 2),
    (["contingency-action", "d8:8", "d8:8", "--zero-dice"], "outcome", "clean"),
    (["contingency-action", "d8:6", "d8:2", "--pool", "2"], "remaining", 1),
    (["house-games", "d10:2", "d10:4", "d10:5", "d10:6", "d10:8"], "successes", 2),
    (["house-games", "d10:9", "d10:9", "d10:9", "--difficulty", "8", "--modifier", "+4"], "dice_lost", 3),
    (["house-games", "d10:1", "d10:1", "d10:7", "--no-ability"], "botch", True),
    (["emergence", "d10:0", "d10:4", "d10:0", "d10:7", "--rerolls", "0,3"], "wyrdness", 3),
    (["emergence", "d10:4", "d10:0", "d10:6", "d10:8", "--direction", "-"], "disrupted", True),
    (["futile-kingdoms", "d6:6:red", "d6:5:white", "--modifier", "-2"], "may_explode", True),
    (["percentile", "d10:3:red", "d10:7", "--tens-colour", "red"], "result", 37),
    (["chance", "d00:90", "d10:0", "--percent", "10"], "outcome", "success"),
])
def test_resolve_systems(args, key, value):
    r = dicecam("resolve", *args, "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)[key] == value


def test_resolve_reads_json_lines_on_stdin():
    lines = [
        json.dumps({"image": "a.jpg", "width": 640, "height": 480,
                    "dice": [{"type": "d00", "value": 30}, {"type": "d10", "value": 7, "confidence": 0.9}]}),
        json.dumps([{"type": "d00", "value": 100}, {"type": "d10", "value": 0}]),
    ]
    r = dicecam("resolve", "percentile", "--json", stdin="\n".join(lines) + "\n")
    assert r.returncode == 0, r.stderr
    assert [json.loads(x)["result"] for x in r.stdout.splitlines()] == [37, 0]


def test_resolve_table_file(tmp_path):
    f = tmp_path / "weather.md"
    f.write_text("# Weather\n| d6 | Weather |\n|---|---|\n| 1-2 | Rain |\n| 3 | Fog |\n| 4-6 | Sun |\n")
    r = dicecam("resolve", "table", "d6:5", "--table", str(f), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["text"] == "Sun"


@pytest.mark.parametrize("args, stdin, words", [
    (["resolve", "dnd", "d6:3"], None, "unknown system"),
    (["resolve", "contingency", "d7:3", "d6:1", "d6:2"], None, "unknown die type"),
    (["resolve", "contingency", "d6:9", "d6:1", "d6:2"], None, "no face 9"),
    (["resolve", "futile-kingdoms", "d6:3", "d6:4:white"], None, "no red d6"),
    (["resolve", "percentile"], "{not json\n", "not JSON"),
    (["resolve", "percentile"], '{"dice": 3}\n', "stdin line 1"),
    (["resolve", "contingency", "d6:1", "d6:2", "d6:3", "--target", "0"], None, "target"),
    (["resolve", "house-games", "d10:3", "--target", "5"], None, "does not apply"),
    (["resolve", "contingency", "d6:1", "d6:2", "d6:3", "--modifier", "7:+1"], None, "index"),
    (["odds", "house-games", "--dice", "40"], None, "cap"),
    (["odds", "contingency", "d6", "d8"], None, "exactly 3"),
])
def test_bad_input_is_one_line_and_exit_2(args, stdin, words):
    r = dicecam(*args, stdin=stdin)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and "Traceback" not in r.stderr


def test_odds_examples_from_the_issue():
    r = dicecam("odds", "contingency", "d6", "d8", "d10", "--target", "5", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["outcomes"][0] == {"outcome": "success", "probability": 7 / 15, "fraction": "7/15"}
    r = dicecam("odds", "contingency-action", "d8", "d8", "d8", "--pressure", "2", "--json")
    out = json.loads(r.stdout)
    assert out["pool"] == ["d8"] * 3 + ["d6"] * 2 and len(out["outcomes"]) == 5
    r = dicecam("odds", "house-games", "--dice", "10", "--difficulty", "7")
    assert r.returncode == 0 and r.stdout.startswith("10 dice at difficulty 7")


def test_pool_notation_and_table_parser():
    assert expand_pool(["3d8", "d6"]) == ["d8", "d8", "d8", "d6"]
    t = parse_table_text("d100\tResult\n01-50\tlow\n51-00\thigh\n")
    assert t["die"] == "d100" and t["rows"][1] == {"low": 51, "high": 100, "text": "high"}


def test_bench_odds_rows():
    rows = bench_odds(quick=True)
    assert {r["name"].split()[0] for r in rows} >= {"contingency", "contingency-action", "house-games", "emergence",
                                                    "futile-kingdoms", "percentile", "chance", "table"}
    assert all(r["p95_ms"] >= r["median_ms"] > 0 for r in rows)
