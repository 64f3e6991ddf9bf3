"""The camera's session for the seed rules that span throws: House Games pools from the sheet
(more or fewer dice than the pool make the roll uncertain with the count), extended and teamwork
totals throw after throw, and Futile Kingdoms contests one participant's throw after another."""

from __future__ import annotations

from dicecam.mechanics.dice import DieReading
from dicecam.vision.assembly import RollSession


def row(kind: str, *values: int, y: float = 0.0, colour: str | None = None) -> list[DieReading]:
    return [DieReading(type=kind, value=v, box=(i * 60.0, y, i * 60.0 + 40, y + 40), colour=colour)
            for i, v in enumerate(values)]


def test_the_live_view_says_when_the_table_shows_fewer_or_more_dice_than_the_pool():
    session = RollSession("house-games", {"attribute": 3, "ability": 5})
    short = session.add(row("d10", 2, 4, 5, 6, 8, 6, 7))
    assert short.status == "uncertain"
    assert short.reason.startswith("the table shows 7 dice, 1 fewer than the 8 to roll (attribute 3 + ability 5)")
    extra = session.add(row("d10", 2, 4, 5, 6, 8, 6, 7, 1, 9))
    assert extra.reason.startswith("the table shows 9 dice, 1 more than the 8 to roll")
    good = session.add(row("d10", 2, 4, 5, 6, 8, 6, 7, 1))
    assert good.status == "settled" and good.adjudication.successes == 3


def test_extended_rolls_add_each_throw_to_the_last():
    session = RollSession("house-games", {"extended": True})
    first = session.add(row("d10", 9, 8, 2))
    second = session.add(row("d10", 7, 1, 6, 6))
    third = session.add(row("d10", 1, 2))
    assert [r.adjudication.total_successes for r in (first, second, third)] == [2, 4, 3]
    assert second.follows == first.id and third.follows == second.id
    assert third.options["prior_successes"] == 4
    session.configure("house-games", {"extended": True})  # a new extended action starts from nothing
    assert session.add(row("d10", 9)).adjudication.total_successes == 1


def test_a_contest_is_thrown_one_participant_after_another():
    session = RollSession("futile-kingdoms-contest", {"scores": [3, 2], "names": ["Ann", "Bob"]})
    ann = session.add(row("d6", 4))
    assert (ann.adjudication.outcome, ann.adjudication.next) == ("waiting", "Bob")
    bob = session.add(row("d6", 6, 5, y=200))
    assert bob.follows == ann.id and bob.options["thrown"] == ["4"]
    assert (bob.adjudication.winner, bob.adjudication.margin) == ("Bob", 3)
    again = session.add(row("d6", 2))  # decided: the next throw opens a new contest
    assert again.follows is None and again.adjudication.participant == "Ann"


def test_sixes_left_on_the_table_with_another_die_added_explode_the_same_participants_throw():
    session = RollSession("futile-kingdoms-contest", {"scores": [3, 2], "names": ["Ann", "Bob"]})
    six = session.add(row("d6", 6))
    assert six.adjudication.may_explode
    boom = session.add(row("d6", 6, 5))  # the 6 stays, a 5 is added: Ann's Result is 3 + 6 + 2
    assert (boom.adjudication.participant, boom.adjudication.result) == ("Ann", 11)
    assert boom.options["thrown"] == []
    bob = session.add(row("d6", 3, y=200))
    assert bob.options["thrown"] == ["6+5"] and bob.adjudication.winner == "Ann"
    assert bob.adjudication.margin == 11 - 5
