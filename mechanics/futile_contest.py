"""Futile Kingdoms contests (seed 004) as rolls the camera reads: one participant's throw after another.

"Each participant calculates his Result by determining his score and adding a single d6. Each
time you roll a 6, you may voluntarily explode by adding another d6 and subtracting 3
recursively." "The highest Result wins by a margin equal to the difference to the next Result.
Ties are literal draws."

One throw is one participant's dice. Explosion dice only follow a 6, so a throw's faces decide
the Result whatever order they were thrown in: the sixes come first, the one face that is not a
6 (if any) last; a throw with two faces below 6 is refused. The earlier participants' dice
travel in the `thrown` option ("4", "6+5"), so the resolver stays pure; the camera's session
fills it throw by throw, and the CLI and API give it directly.

The odds cannot run the verdict's own definition over every throw: exploding a 6 is the participant's
choice, made after seeing it, so no single rule says what a throw of the future will be. `odds` assumes a
policy (no 6 exploded, or every 6 up to EXPLODE_DEPTH times, `_d6_result`, which adds the next d6 - 3 as
`contest_result` does) for the participants still to throw, and takes the earlier throws' Results from
`contest_result` itself.

`score` builds every Result and the contest's numbers; `explain` turns them into the steps and the sentence.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Annotated, Any, Literal, Mapping, NamedTuple, Sequence

from pydantic import Field, field_validator, model_validator

from .adjudication import Adjudication, RolledDie
from .dice import DieReading, DieType
from .errors import RulesError
from .futile_kingdoms import contest, contest_result
from .odds import Odds, check_pool_size, entry, percent
from .options import Flag, SystemOptions
from .follow_up import FollowUp, Join
from .system import System

if TYPE_CHECKING:
    from .roll import Roll

NAME = "futile-kingdoms-contest"
TITLE = "Futile Kingdoms contest"
MAX_PARTICIPANTS = 8
MAX_DICE = 12  # one participant's dice: a chain of eleven sixes is already 1 in 362 million
EXPLODE_DEPTH = 4  # odds with `explode`: every 6 is exploded, up to this many extra dice


def faces_of(text: str) -> list[int]:
    """'6+5' (or '6,5', '6 5') → [6, 5]."""
    parts = [p for p in text.replace(",", "+").replace(" ", "+").split("+") if p]
    if not parts or not all(p.isdigit() and 1 <= int(p) <= 6 for p in parts):
        raise ValueError(f"thrown {text!r}: write the d6 faces a participant threw, e.g. 4 or 6+5")
    return [int(p) for p in parts]


def throw_order(faces: Sequence[int]) -> list[int]:
    """The faces in the only order the rule allows: the sixes, then the one face below 6."""
    low = [f for f in faces if f != 6]
    if len(low) > 1:
        raise RulesError(f"faces {'+'.join(map(str, faces))}: a contest die only explodes on a 6, so a throw "
                         "holds at most one die below 6")
    return [f for f in faces if f == 6] + low


class ContestOptions(SystemOptions):
    scores: Annotated[list[int], Flag(metavar="A,B")] = Field(default=[0, 0], min_length=2, max_length=MAX_PARTICIPANTS,
                              title="Each participant's score, in throwing order, e.g. 3 2")
    names: Annotated[list[str], Flag(metavar="A,B")] = Field(default_factory=list, max_length=MAX_PARTICIPANTS,
                             title="Their names, in the same order (default A, B, C...)")
    thrown: Annotated[list[str], Flag(metavar="FACES", repeat=True)] = Field(default_factory=list, max_length=MAX_PARTICIPANTS - 1,
                              title="Dice the earlier participants threw, e.g. 4 6+5",
                              description="filled throw by throw under the camera")
    explode: bool = Field(default=False, title="Odds: every 6 is exploded (up to 4 times)")

    @field_validator("scores")
    @classmethod
    def _scores(cls, v: list[int]) -> list[int]:
        if any(abs(n) > 100 for n in v):
            raise ValueError("a score must lie within -100..+100")
        return v

    @field_validator("names")
    @classmethod
    def _names(cls, v: list[str]) -> list[str]:
        v = [n.strip() for n in v]
        if any(not n or len(n) > 32 for n in v):
            raise ValueError("a participant's name is 1-32 characters")
        if len({n.lower() for n in v}) != len(v):
            raise ValueError("two participants share a name")
        return v

    @field_validator("thrown")
    @classmethod
    def _thrown(cls, v: list[str]) -> list[str]:
        for text in v:
            faces = faces_of(text)
            if len(faces) > MAX_DICE:
                raise ValueError(f"thrown {text!r}: over {MAX_DICE} dice")
            try:
                throw_order(faces)
            except RulesError as e:
                raise ValueError(str(e)) from None
        return v

    @model_validator(mode="after")
    def _fits(self) -> "ContestOptions":
        if self.names and len(self.names) != len(self.scores):
            raise ValueError(f"{len(self.names)} names for {len(self.scores)} scores")
        if len(self.thrown) >= len(self.scores):
            raise ValueError(f"all {len(self.scores)} participants have thrown: the contest is decided")
        return self

    def name(self, i: int) -> str:
        return self.names[i] if self.names else chr(ord("A") + i)


class ContestAdjudication(Adjudication):
    system: Literal["futile-kingdoms-contest"] = Field(title="System name")
    participant: str = Field(title="Who threw these dice")
    result: int = Field(title="Their Result: score + d6 (+ each exploded d6 - 3)")
    may_explode: bool = Field(title="The throw ends on a 6: the participant may add another d6")
    results: dict[str, int] = Field(title="Results so far, in throwing order")
    decided: bool = Field(title="Every participant has thrown")
    next: str | None = Field(default=None, title="Who throws next, while undecided")
    winner: str | None = Field(default=None, title="The highest Result, when decided and not a draw")
    margin: int | None = Field(default=None, title="Difference to the next Result, when decided")


def _explain(score: int, faces: list[int]) -> str:
    parts = [f"score {score:+d}", f"d6 {faces[0]}"] + [f"exploded d6 {f} - 3 = {f - 3:+d}" for f in faces[1:]]
    return ", ".join(parts)


class ContestScore(NamedTuple):
    """A scored throw, before any words: every Result so far (earlier throws' faces too) and, once all have
    thrown, the winner and margin."""

    me: str
    faces: list[int]  # this throw's faces in the order the rule reads them
    earlier: list[list[int]]  # each earlier participant's faces, likewise
    results: dict[str, int]  # in throwing order
    explode: bool  # the throw ends on a 6
    decided: bool
    winner: str | None
    margin: int | None


def score(dice: Sequence[DieReading], opts: ContestOptions) -> ContestScore:
    """The rule on real dice: each participant's Result (`contest_result`), then the contest (`contest`)."""
    if not dice:
        raise RulesError("no dice read: a contest throw is one d6 (and any exploded d6s)")
    bad = [d for d in dice if d.type is not DieType.d6]
    if bad:
        raise RulesError(f"a contest is thrown with d6s, not {bad[0].type.value}")
    if len(dice) > MAX_DICE:
        raise RulesError(f"{len(dice)} dice is over the {MAX_DICE} one participant may throw")
    i = len(opts.thrown)
    faces = throw_order([d.value for d in dice])
    earlier = [throw_order(faces_of(text)) for text in opts.thrown]
    results = {opts.name(j): contest_result(opts.scores[j], f) for j, f in enumerate(earlier)}
    me = opts.name(i)
    results[me] = contest_result(opts.scores[i], faces)
    decided = i == len(opts.scores) - 1
    winner, margin = contest(results) if decided else (None, None)
    return ContestScore(me, faces, earlier, results, faces[-1] == 6, decided, winner, margin)


def explain(s: ContestScore, opts: ContestOptions) -> tuple[list[str], str]:
    """The steps of the contest so far, and its one sentence."""
    steps = [f"{opts.name(j)} threw earlier: {_explain(opts.scores[j], f)} = {s.results[opts.name(j)]}."
             for j, f in enumerate(s.earlier)]
    result = s.results[s.me]
    steps.append(f"{s.me}: {_explain(opts.scores[len(s.earlier)], s.faces)} = Result {result}.")
    if s.explode:
        steps.append(f"{s.me} ends on a 6 and may explode: leave the dice and add another d6.")
    if not s.decided:
        nxt = opts.name(len(s.earlier) + 1)
        steps.append(f"{nxt} throws next.")
        return steps, f"{s.me}'s Result is {result}; {nxt} throws next" + ("; a 6 may explode" if s.explode else "") + "."
    ranked = ", ".join(f"{n} {r}" for n, r in sorted(s.results.items(), key=lambda kv: -kv[1]))
    if s.winner is None:
        top = max(s.results.values())
        tied = [n for n, r in s.results.items() if r == top]
        steps.append(f"Highest Result {top} is shared by {' and '.join(tied)}: a draw.")
        summary = f"Draw: {' and '.join(tied)} tie at {top} ({ranked})."
    else:
        steps.append(f"{s.winner} has the highest Result and wins by {s.margin}, the difference to the next.")
        summary = f"{s.winner} wins by {s.margin} ({ranked})."
    if s.explode:
        summary = summary[:-1] + f"; {s.me} may still explode the 6."
    return steps, summary


def resolve(dice: Sequence[DieReading], opts: ContestOptions) -> ContestAdjudication:
    s = score(dice, opts)
    steps, summary = explain(s, opts)
    common = dict(system=NAME, dice=[RolledDie(**d.model_dump(), role=s.me) for d in dice], options=opts.model_dump(),
                  participant=s.me, result=s.results[s.me], may_explode=s.explode, results=s.results,
                  decided=s.decided, explanation=steps, summary=summary)
    if not s.decided:
        return ContestAdjudication(outcome="waiting", next=opts.name(len(s.earlier) + 1), **common)
    return ContestAdjudication(outcome="draw" if s.winner is None else "win", winner=s.winner, margin=s.margin,
                               **common)


@lru_cache(maxsize=4)
def _d6_result(explode: bool) -> tuple[tuple[int, Fraction], ...]:
    """A participant's d6 part: plain, or every 6 exploded (another d6 - 3) up to EXPLODE_DEPTH times."""
    dist: Counter = Counter({f: Fraction(1, 6) for f in range(1, 7)})
    if explode:
        for _ in range(EXPLODE_DEPTH):
            nxt: Counter = Counter({f: Fraction(1, 6) for f in range(1, 6)})
            for v, p in dist.items():
                nxt[6 + v - 3] += Fraction(1, 6) * p
            dist = nxt
    return tuple(sorted(dist.items()))


def odds(pool: Sequence[DieType], opts: ContestOptions) -> Odds:
    """Exact chances that each participant wins, given the earlier throws, for the ones still to throw."""
    check_pool_size(len(pool))
    if any(k is not DieType.d6 for k in pool):
        raise RulesError("a contest is thrown with d6s")
    dists: list[dict[int, Fraction]] = []
    for j, score in enumerate(opts.scores):
        if j < len(opts.thrown):
            dists.append({contest_result(score, throw_order(faces_of(opts.thrown[j]))): Fraction(1)})
        else:
            dists.append({score + v: p for v, p in _d6_result(opts.explode)})

    def below(d: dict[int, Fraction], v: int) -> Fraction:
        return sum((p for r, p in d.items() if r < v), Fraction(0))

    wins = []
    for j, d in enumerate(dists):
        p = Fraction(0)
        for v, pv in d.items():
            term = pv
            for k, other in enumerate(dists):
                if k != j:
                    term *= below(other, v)
            p += term
        wins.append(p)
    draw = 1 - sum(wins, Fraction(0))
    outcomes = [entry(f"{opts.name(j)} wins", p) for j, p in enumerate(wins)] + [entry("draw", draw)]
    how = f"every 6 exploded (up to {EXPLODE_DEPTH} times)" if opts.explode else "no 6 exploded"
    best = max(range(len(wins)), key=lambda j: wins[j])
    summary = (f"{len(opts.scores)} participants, {len(opts.thrown)} thrown, {how}: {opts.name(best)} wins "
               f"{percent(wins[best])}, draw {percent(draw)}.")
    return Odds(system=NAME, pool=["d6"] * (len(opts.scores) - len(opts.thrown)), options=opts.model_dump(),
                outcomes=outcomes, events=[], summary=summary)


def default_pool(opts: ContestOptions) -> list[DieType]:
    return [DieType.d6]


def follow_up(roll: Roll, options: Mapping[str, Any]) -> FollowUp | None:
    """Until every participant has thrown, the next throw is the next participant's (or an explosion)."""
    if roll.adjudication is None or roll.adjudication.decided:
        return None
    return FollowUp.of(roll, "contest", own=0, joins=roll.follows or roll.id)


def join(follow: FollowUp, dice: Sequence[DieReading], options: Mapping[str, Any]) -> Join | None:
    before = list(follow.options.get("thrown", []))
    last = Counter(d.value for d in follow.extra)
    now = Counter(d.value for d in dice)
    if all(d.value == 6 for d in follow.extra) and len(dice) > len(follow.extra) and not last - now:
        # The last participant left their sixes on the table and added dice: an explosion, theirs.
        return Join({**options, "thrown": before})
    return Join({**options, "thrown": before + ["+".join(str(d.value) for d in follow.extra)]})


SYSTEM = System(NAME, TITLE, ContestOptions, ContestAdjudication, resolve, odds, default_pool, follow_up, join)
