"""Futile Kingdoms deviation rolls (seed 004): a red and a white d6, DR, explosions, contests.

The rule is written once: the DR of two faces (`deviation`) and the word of a result (`verdict`). `resolve`
applies them to the real dice; `odds` maps the same `deviation` over every face of two d6 with icepool
(`dr_die`) and the same `verdict` over the result. `score` builds the numbers; `explain` and `summarise`
turn them into words.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Annotated, Any, Literal, Mapping, NamedTuple, Sequence

import icepool
from pydantic import Field

from .adjudication import Adjudication, RolledDie
from .dice import DieReading, DieType
from .errors import RulesError
from .odds import Odds, check_pool_size, entry, ladder, percent
from .options import Flag, SystemOptions, summed
from .follow_up import FollowUp, Join
from .system import System

if TYPE_CHECKING:
    from .roll import Roll

NAME = "futile-kingdoms"
TITLE = "Futile Kingdoms deviation roll"
OUTCOMES = ("success", "draw", "failure")
# The seed's difficulty words for a target #: you need DR > # (with no other modifier).
DIFFICULTY = {-6: "automatic", -5: "trivial", -4: "routine", -3: "easy", -2: "straightforward", -1: "moderate",
              0: "challenging", 1: "difficult", 2: "ambitious", 3: "precarious", 4: "heroic", 5: "desperate"}


class FutileOptions(SystemOptions):
    modifier: Annotated[int, Flag(metavar="+N", repeat=True, convert=summed("modifier", "--modifier"))] = Field(default=0, ge=-50, le=50, title="Sum of modifiers (R = DR + modifiers)")
    red_colour: str = Field(default="red", min_length=1, max_length=32, title="Colour of the red die")
    white_colour: str = Field(default="white", min_length=1, max_length=32, title="Colour of the white die")
    carry: int = Field(default=0, ge=-500, le=500, title="Sum of the earlier DRs this roll explodes from")


class FutileAdjudication(Adjudication):
    system: Literal["futile-kingdoms"] = Field(title="System name")
    red: int = Field(title="Red die")
    white: int = Field(title="White die")
    dr: int = Field(title="Deviation roll, -5..+5")
    modifier: int = Field(title="Modifiers")
    result: int = Field(title="R = DR + modifiers")
    may_explode: bool = Field(title="DR is ±5: another DR may be added")


def deviation(red: int, white: int) -> int:
    """DR: 0 on doubles, else the lower die, positive when red is higher."""
    if red == white:
        return 0
    return min(red, white) if red > white else -min(red, white)


def verdict(result: int) -> str:
    return "success" if result > 0 else "failure" if result < 0 else "draw"


def dr_die() -> icepool.Die:
    return icepool.map(deviation, icepool.d6, icepool.d6)


def odds_table() -> list[tuple[int, Fraction, Fraction, str]]:
    """The seed's table: (#, P(DR = #), P(DR > #), difficulty word) for # = -6..+5."""
    dr = dr_die()
    rows = []
    for n in range(-6, 6):
        eq = Fraction(dr.probability(n)) if n in dr else Fraction(0)
        gt = Fraction(sum(Fraction(p) for o, p in zip(dr.outcomes(), dr.probabilities()) if o > n))
        rows.append((n, eq, gt, DIFFICULTY[n]))
    return rows


def contest_result(score: int, d6_faces: Sequence[int]) -> int:
    """A contest entry: score + d6; each 6 the player chose to explode adds the next d6 - 3.

    `d6_faces` are the faces in the order rolled; a face after a non-6 is an error.
    """
    if not d6_faces:
        raise RulesError("a contest roll needs at least one d6")
    total = score + d6_faces[0]
    for prev, nxt in zip(d6_faces, d6_faces[1:]):
        if prev != 6:
            raise RulesError("a contest die only explodes on a 6")
        total += nxt - 3
    return total


def contest(results: dict[str, int]) -> tuple[str | None, int]:
    """(winner or None on a draw, margin to the next result)."""
    if len(results) < 2:
        raise RulesError("a contest needs two or more participants")
    ranked = sorted(results.items(), key=lambda kv: kv[1], reverse=True)
    margin = ranked[0][1] - ranked[1][1]
    return (ranked[0][0] if margin else None, margin)


def _find(dice: Sequence[DieReading], colour: str, word: str) -> DieReading:
    found = [d for d in dice if d.colour == colour.lower()]
    if not found:
        raise RulesError(f"no {word} d6 read (a die with colour {colour!r}); a DR needs one {word} and one "
                         f"{'white' if word == 'red' else 'red'} d6")
    if len(found) > 1:
        raise RulesError(f"{len(found)} {word} dice read; a DR takes one red and one white d6")
    return found[0]


class DevScore(NamedTuple):
    """A scored DR, before any words: the two dice, the DR, the result with modifiers, its word."""

    red: DieReading
    white: DieReading
    dr: int
    result: int
    outcome: str
    explode: bool


def score(dice: Sequence[DieReading], opts: FutileOptions) -> DevScore:
    """The rule on real dice: `deviation` and `verdict`, as `odds` maps them over every face."""
    bad = [d for d in dice if d.type is not DieType.d6]
    if bad:
        raise RulesError(f"a DR uses two d6 (red and white), not {bad[0].type.value}")
    red = _find(dice, opts.red_colour, "red")
    white = _find(dice, opts.white_colour, "white")
    if len(dice) != 2:
        raise RulesError(f"a DR takes exactly two d6 (red and white), read {len(dice)}")
    dr = deviation(red.value, white.value)
    result = opts.carry + dr + opts.modifier
    return DevScore(red, white, dr, result, verdict(result), abs(dr) == 5)


def explain(s: DevScore, opts: FutileOptions) -> list[str]:
    """The steps of a DR, in the order the rule takes them."""
    red, white, dr = s.red.value, s.white.value, s.dr
    steps = [f"Red {red}, white {white}."]
    if dr == 0:
        steps.append("Doubles: DR 0.")
    else:
        steps.append(f"The lower die is {min(red, white)}; {'red' if red > white else 'white'} is higher, so DR {dr:+d}.")
    if opts.carry:
        steps.append(f"Exploding from earlier DRs totalling {opts.carry:+d}.")
    steps.append(f"R = {(f'{opts.carry:+d} ' if opts.carry else '')}{dr:+d} {opts.modifier:+d} = {s.result:+d}: {s.outcome}.")
    if s.explode:
        steps.append("DR ±5: the player may explode, rolling another DR and adding it.")
    return steps


def summarise(s: DevScore) -> str:
    """The DR in one sentence."""
    return f"{s.outcome.capitalize()}: DR {s.dr:+d}" + (f", result {s.result:+d}" if s.result != s.dr else "") + (
        "; the roll may explode" if s.explode else "") + "."


def resolve(dice: Sequence[DieReading], opts: FutileOptions) -> FutileAdjudication:
    s = score(dice, opts)
    # Both dice count: the lower gives the size of the DR, the higher its sign.
    rolled = [RolledDie(**d.model_dump(), role="red" if d is s.red else "white") for d in dice]
    return FutileAdjudication(system=NAME, outcome=s.outcome, dice=rolled, explanation=explain(s, opts),
                              summary=summarise(s), options=opts.model_dump(), red=s.red.value, white=s.white.value,
                              dr=s.dr, modifier=opts.modifier, result=s.result, may_explode=s.explode)


def odds(pool: Sequence[DieType], opts: FutileOptions) -> Odds:
    check_pool_size(len(pool))
    if list(pool) not in ([], [DieType.d6, DieType.d6]):
        raise RulesError("a DR rolls exactly two d6 (red and white)")
    dr = dr_die()
    outcomes = ladder((dr + opts.modifier + opts.carry).map(verdict), OUTCOMES)
    events = [entry("may explode", Fraction(dr.probability(5) + dr.probability(-5)))]
    summary = f"DR with modifier {opts.modifier:+d}: success {percent(Fraction(outcomes[0].fraction))}, draw {percent(Fraction(outcomes[1].fraction))}."
    return Odds(system=NAME, pool=["d6", "d6"], options=opts.model_dump(), outcomes=outcomes, events=events, summary=summary)


def default_pool(opts: FutileOptions) -> list[DieType]:
    return [DieType.d6, DieType.d6]


def follow_up(roll: Roll, options: Mapping[str, Any]) -> FollowUp | None:
    """A DR of ±5 may explode: the next red and white pair adds its DR to this one's."""
    adj = roll.adjudication
    if adj is None or not adj.may_explode:
        return None
    return FollowUp.of(roll, "explode", carry=int(roll.options.get("carry", 0)) + adj.dr)


def join(follow: FollowUp, dice: Sequence[DieReading], options: Mapping[str, Any]) -> Join | None:
    if len(dice) != 2:
        return None
    return Join({**options, "carry": follow.carry})


SYSTEM = System(NAME, TITLE, FutileOptions, FutileAdjudication, resolve, odds, default_pool, follow_up, join)
