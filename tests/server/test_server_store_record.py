"""The roll store is the product's memory: what is written comes back whole, in order, and nothing is lost
on the way (demo rolls cleared, pictures capped, names changed, a write refused). Pinned case by case
(issue 22: the mutants of server/store.py)."""

from __future__ import annotations

import csv
import io
import json
import logging
import sqlite3
import uuid
from datetime import datetime, timedelta, timezone

import pytest

from dicecam.mechanics.dice import DieReading
from dicecam.mechanics.roll import Roll
from dicecam.server.store import SCHEMA_VERSION, Frame, RollStore

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _roll(i: int = 0, *, source: str = "manual", amends: str | None = None, adjudicated: bool = True, **kw) -> Roll:
    fields = dict(id=str(uuid.uuid4()), ts=T0 + timedelta(seconds=i), source=source, status="settled", system="sum",
                  dice=[DieReading(type="d6", value=1 + i % 6)], amends=amends)
    if adjudicated:
        fields["adjudication"] = {"system": "sum", "outcome": "success", "summary": f"roll {i}"}
    return Roll(**(fields | kw))


def _frame(n: int) -> Frame:
    return Frame(jpeg=b"\xff\xd8 picture %d \xff\xd9" % n, width=640 + n, height=480 + n)


@pytest.fixture
def store(tmp_path):
    s = RollStore(tmp_path / "rolls.sqlite3")
    yield s
    s.close()


# -- opening the file -------------------------------------------------------------------------------------

def test_a_new_history_file_is_made_in_folders_that_do_not_exist_yet(tmp_path):
    path = tmp_path / "home" / "dicecam" / "rolls.sqlite3"
    store = RollStore(path)
    store.add(_roll())
    store.close()
    assert path.exists()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()


def test_demo_rolls_in_a_reopened_file_are_still_cleared_by_the_tables_first_roll(tmp_path):
    path = tmp_path / "rolls.sqlite3"
    store = RollStore(path)
    store.add(_roll(0, source="demo"))
    store.add(_roll(1, source="demo"))
    store.close()
    store = RollStore(path)  # restart: the flag is read back from the file
    own = store.add(_roll(2))
    assert [r.id for r in store.iter_all()] == [own.id] and store.demo_count() == 0
    store.close()


def test_a_reopened_file_without_demo_rolls_keeps_every_roll(tmp_path):
    path = tmp_path / "rolls.sqlite3"
    store = RollStore(path)
    first = store.add(_roll(0))
    store.close()
    store = RollStore(path)
    second = store.add(_roll(1))
    assert [r.id for r in store.iter_all()] == [first.id, second.id]
    store.close()


# -- writing: every field comes back ----------------------------------------------------------------------

def test_every_field_of_a_roll_comes_back_whole(store):
    original = store.add(_roll(0))
    full = _roll(1, source="camera", amends=original.id, follows=original.id, reason=None, frame_id=42,
                 options={"target": 9}, dice=[DieReading(type="d20", value=17, box=(1, 2, 30, 40), confidence=0.5,
                                                          colour="red", doubt="reads as 17 or 11", uncertain=True)])
    assert store.add(full) is full
    assert store.get(full.id) == full
    assert store.get("no-such-roll") is None
    # the columns beside the body index the same roll (anyone reading the file sees the verdict)
    db = sqlite3.connect(store.path)
    row = db.execute("SELECT id, ts, source, status, system, outcome, amends FROM rolls WHERE id=?", (full.id,)).fetchone()
    db.close()
    assert row == (full.id, full.ts.isoformat(), "camera", "settled", "sum", "success", original.id)


def test_a_roll_without_a_verdict_stores_no_outcome(store):
    roll = store.add(_roll(0, adjudicated=False, status="uncertain", reason="a die is cocked"))
    db = sqlite3.connect(store.path)
    assert db.execute("SELECT outcome FROM rolls WHERE id=?", (roll.id,)).fetchone() == (None,)
    db.close()
    assert store.get(roll.id) == roll


def test_a_duplicate_id_is_refused_naming_it_and_the_first_roll_stays(store):
    first = store.add(_roll(0))
    again = _roll(5, id=first.id)
    with pytest.raises(KeyError, match=f"roll {first.id} is already stored"):
        store.add(again)
    assert store.get(first.id) == first and store.count() == 1
    store.add(_roll(1))  # the store still takes rolls: the refused write was rolled back
    assert store.count() == 2


def test_a_refused_roll_leaves_the_demo_rolls_it_would_have_cleared(store):
    own = store.add(_roll(0))
    demo = store.add(_roll(1, source="demo"))
    with pytest.raises(KeyError):
        store.add(_roll(2, id=own.id))  # the table's own roll, refused: its transaction clears nothing
    assert store.demo_count() == 1 and store.get(demo.id) == demo and store.get(own.id) == own


def test_a_write_that_fails_midway_keeps_nothing_and_the_store_goes_on(store):
    roll = _roll(0)
    with pytest.raises(sqlite3.Error):
        store.add(roll, Frame(jpeg=object(), width=1, height=1))  # a picture SQLite cannot hold
    assert store.get(roll.id) is None and store.count() == 0 and store.frame_count() == 0
    store.add(roll, _frame(1))
    assert store.get(roll.id) == roll and store.frame(roll.id) == _frame(1)


# -- demo rolls --------------------------------------------------------------------------------------------

def test_demo_rolls_pile_up_until_the_tables_own_roll_clears_them_with_their_pictures(store, caplog):
    demos = [store.add(_roll(i, source="demo"), _frame(i)) for i in range(3)]
    assert store.demo_count() == 3 and store.frame_count() == 3
    with caplog.at_level(logging.INFO, logger="dicecam.server"):
        own = store.add(_roll(9, source="camera"), _frame(9))
    assert caplog.messages == ["the table's first roll of its own: 3 demo rolls cleared from the history"]
    assert [r.id for r in store.iter_all()] == [own.id] and store.demo_count() == 0
    assert store.frame_count() == 1 and all(store.frame(d.id) is None for d in demos)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="dicecam.server"):
        store.add(_roll(10))  # nothing left to clear: nothing said
        store.add(_roll(11, source="demo"))  # a demo roll after the table's own is kept, and so cleared again
    assert caplog.messages == [] and store.demo_count() == 1
    store.add(_roll(12, source="upload"))
    assert store.demo_count() == 0 and store.count() == 3


def test_drop_demo_clears_demo_rolls_and_their_pictures_and_says_how_many(store):
    assert store.drop_demo() == 0
    own = store.add(_roll(0))
    for i in range(3):
        store.add(_roll(i + 1, source="demo"), _frame(i))
    assert store.demo_count() == 3 and store.frame_count() == 3
    assert store.drop_demo() == 3
    assert [r.id for r in store.iter_all()] == [own.id] and store.frame_count() == 0
    assert store.drop_demo() == 0
    store.add(_roll(5, source="demo"))
    assert store.drop_demo() == 1 and store.count() == 1


def test_drop_demo_that_fails_keeps_the_demo_rolls_and_the_store_goes_on(store):
    store.add(_roll(0, source="demo"))
    other = sqlite3.connect(store.path)
    other.execute("CREATE TRIGGER keep BEFORE DELETE ON rolls BEGIN SELECT RAISE(ABORT, 'kept'); END")
    other.commit()
    with pytest.raises(sqlite3.IntegrityError, match="kept"):
        store.drop_demo()
    assert store.demo_count() == 1
    other.execute("DROP TRIGGER keep")
    other.commit()
    other.close()
    assert store.drop_demo() == 1 and store.demo_count() == 0


# -- pictures ----------------------------------------------------------------------------------------------

def test_a_picture_comes_back_as_stored_and_only_the_newest_are_kept(store):
    rolls = [store.add(_roll(i), _frame(i), frames_kept=2) for i in range(4)]
    assert store.frame_count() == 2
    assert [store.frame(r.id) for r in rolls] == [None, None, _frame(2), _frame(3)]
    assert isinstance(store.frame(rolls[3].id).jpeg, bytes)
    one = store.add(_roll(5), _frame(5), frames_kept=1)  # a cap of one keeps the newest picture
    assert store.frame(one.id) == _frame(5) and store.frame_count() == 1


def test_a_roll_stored_without_keeping_pictures_drops_no_other_picture(store):
    kept = store.add(_roll(0), _frame(0))
    bare = store.add(_roll(1), _frame(1), frames_kept=0)
    assert store.frame(bare.id) is None and store.frame(kept.id) == _frame(0)
    assert store.get(bare.id) == bare


def test_pictures_by_default_are_kept_up_to_five_hundred(store):
    rolls = [store.add(_roll(i), Frame(b"j", 1, 1)) for i in range(501)]
    assert store.frame_count() == 500 and store.frame(rolls[0].id) is None and store.frame(rolls[1].id) is not None


def test_keep_frames_drops_the_oldest_and_says_how_many_went(store):
    rolls = [store.add(_roll(i), _frame(i)) for i in range(5)]
    assert store.keep_frames(3) == 2 and store.frame_count() == 3
    assert [store.frame(r.id) is not None for r in rolls] == [False, False, True, True, True]
    assert store.keep_frames(3) == 0
    assert store.keep_frames(0) == 3 and store.frame_count() == 0
    assert store.count() == 5  # the rolls stay


def test_a_correction_is_shown_by_the_picture_of_the_roll_it_corrects(store):
    seen = store.add(_roll(0), _frame(0))
    fixed = store.add(_roll(1, amends=seen.id))
    fixed_again = store.add(_roll(2, amends=fixed.id))
    typed = store.add(_roll(3))
    assert store.frame_owner(seen) == seen.id
    assert store.frame_owner(fixed) == seen.id and store.frame_owner(fixed_again) == seen.id
    assert store.frame_owner(typed) is None
    assert store.frame(fixed.id) is None  # no picture of its own
    store.keep_frames(0)
    assert store.frame_owner(fixed_again) is None


def test_a_correction_chain_that_loops_is_followed_once(store):
    a_id, b_id = str(uuid.uuid4()), str(uuid.uuid4())
    a = store.add(_roll(0, id=a_id, amends=b_id))
    store.add(_roll(1, id=b_id, amends=a_id))
    own = store.add(_roll(2, id=str(uuid.uuid4())))
    selfish = store.add(_roll(3, id="self", amends="self"))
    gets = []
    real_get = store.get

    def counted(roll_id):
        gets.append(roll_id)
        assert len(gets) < 10, "the chain is walked round and round"
        return real_get(roll_id)

    store.get = counted
    assert store.frame_owner(a) is None and store.frame_owner(selfish) is None and store.frame_owner(own) is None
    assert gets == [b_id, a_id, "self"]


# -- reading -------------------------------------------------------------------------------------------------

def test_pages_are_newest_first_and_say_where_they_start(store):
    rolls = [store.add(_roll(i)) for i in range(55)]
    first = store.page()
    assert (first.total, first.offset, first.limit) == (55, 0, 50)
    assert [r.id for r in first.items] == [r.id for r in reversed(rolls)][:50]
    second = store.page(50, 10)
    assert (second.total, second.offset, second.limit) == (55, 50, 10)
    assert [r.id for r in second.items] == [r.id for r in reversed(rolls[:5])]


def test_recent_is_the_newest_n_rolls(store):
    rolls = [store.add(_roll(i)) for i in range(60)]
    assert [r.id for r in store.recent(1)] == [rolls[-1].id]
    assert [r.id for r in store.recent(3)] == [r.id for r in rolls[:-4:-1]]
    assert len(store.recent(55)) == 55
    assert store.recent(0) == [] and store.recent(-1) == []


def test_amendments_and_counts(store):
    original = store.add(_roll(0))
    fixes = [store.add(_roll(i, amends=original.id)) for i in (1, 2)]
    store.add(_roll(3))
    assert store.amendments(original.id) == fixes and store.amendments(fixes[0].id) == []
    assert store.count() == 4


def test_iter_all_reads_every_roll_oldest_first_across_batches(store):
    rolls = [store.add(_roll(i)) for i in range(3)]
    rolls += [store.add(_roll(i, source="demo")) for i in range(3, 5)]  # demo rolls after the table's own are kept
    assert list(store.iter_all(batch=2)) == rolls
    assert list(store.iter_all()) == rolls
    assert list(store.iter_all(batch=2, demo=False)) == [r for r in rolls if r.source != "demo"]


def test_iter_all_by_default_reads_more_than_five_hundred_rolls(store):
    rolls = [store.add(_roll(i)) for i in range(502)]
    assert [r.id for r in store.iter_all()] == [r.id for r in rolls]


# -- die names -------------------------------------------------------------------------------------------------

def test_a_die_is_named_renamed_and_forgotten(store):
    assert store.die_names() == {}
    assert store.name_die("d20:blue", "Old Faithful") == {"d20:blue": "Old Faithful"}
    assert store.name_die("d6:red", "Lucky") == {"d20:blue": "Old Faithful", "d6:red": "Lucky"}
    assert list(store.die_names()) == ["d20:blue", "d6:red"]
    assert store.name_die("d20:blue", "Traitor") == {"d20:blue": "Traitor", "d6:red": "Lucky"}
    assert store.name_die("d20:blue", None) == {"d6:red": "Lucky"}
    assert store.name_die("d6:red", "") == {}
    assert store.name_die("d8:green", None) == {}


# -- exports -------------------------------------------------------------------------------------------------

def test_csv_export_writes_every_field_of_the_tables_own_rolls(store):
    store.add(_roll(0, source="demo"))
    plain = store.add(_roll(1))
    cocked = store.add(_roll(2, adjudicated=False, status="uncertain", reason="a die is cocked",
                             dice=[DieReading(type="d6", value=3, colour="red"), DieReading(type="d10", value=0)]))
    linked = store.add(_roll(3, amends=plain.id, follows=cocked.id))
    store.add(_roll(4, source="demo"))
    rows = list(csv.reader(io.StringIO("".join(store.export_csv()))))
    assert rows[0] == ["id", "ts", "source", "status", "system", "outcome", "dice", "summary", "amends", "follows",
                       "reason"]
    assert rows[1:] == [
        [plain.id, plain.ts.isoformat(), "manual", "settled", "sum", "success", "d6:2", "roll 1", "", "", ""],
        [cocked.id, cocked.ts.isoformat(), "manual", "uncertain", "sum", "", "d6:3:red d10:0", "", "", "",
         "a die is cocked"],
        [linked.id, linked.ts.isoformat(), "manual", "settled", "sum", "success", "d6:4", "roll 3", plain.id,
         cocked.id, ""],
    ]


def test_json_export_names_each_pictured_rolls_picture_and_leaves_demo_rolls_out(store):
    store.add(_roll(0, source="demo"), _frame(0))
    seen = store.add(_roll(1, source="camera"), _frame(1))
    fixed = store.add(_roll(2, amends=seen.id))
    typed = store.add(_roll(3))
    fixed_typed = store.add(_roll(4, amends=typed.id))
    stray = store.add(_roll(5, amends="gone"))
    store.add(_roll(6, source="demo"))
    rolls = [seen, fixed, typed, fixed_typed, stray]
    text = "".join(store.export_json(lambda rid: f"/api/rolls/{rid}/frame.jpg"))
    data = json.loads(text)
    assert [d["id"] for d in data] == [r.id for r in rolls]
    assert [d["frame"] for d in data] == [f"/api/rolls/{seen.id}/frame.jpg", f"/api/rolls/{fixed.id}/frame.jpg",
                                          None, None, None]
    for d, r in zip(data, rolls):  # and each is the whole roll
        assert Roll.model_validate({k: v for k, v in d.items() if k != "frame"}) == r
    assert text.startswith("[\n{") and text.count("\n,") == 0 and text.count(",\n{") == len(rolls) - 1
    plain = json.loads("".join(store.export_json()))
    assert [d["frame"] for d in plain] == [None] * len(rolls)


def test_exports_of_an_empty_history(store):
    assert json.loads("".join(store.export_json())) == []
    assert "".join(store.export_csv()).splitlines() == [",".join(
        ["id", "ts", "source", "status", "system", "outcome", "dice", "summary", "amends", "follows", "reason"])]
