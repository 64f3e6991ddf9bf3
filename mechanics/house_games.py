"""House Games d10 pools (seed 002): difficulty, successes minus ones, contested and extended rolls.

The rule is written once: a die's share of the net (`die_score`), the net's word (`verdict`) and a
contest's (`contest_verdict`). `score` sums `die_score` over the real dice; `odds` sums the same
`die_score` over every face of n d10 with icepool (`net_die`) and maps it through the same words. `score`
builds the numbers and each die's fate; `explain` and `summarise` turn them into words.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Annotated, Any, Literal, Mapping, NamedTuple, Sequence

import icepool
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .adjudication import Adjudication, RolledDie
from .dice import DieReading, DieType
from .errors import LimitError, RulesError
from .odds import Odds, check_pool_size, entry, ladder, percent
from .options import Flag, SystemOptions, summed
from .follow_up import FollowUp, Join
from .system import System

if TYPE_CHECKING:
    from .roll import Roll

NAME = "house-games"
TITLE = "House Games dice pool"
MAX_DICE = 40
OUTCOMES = ("success", "failure", "botch")
DEGREES = {1: "marginal", 2: "between marginal and average", 3: "average", 4: "between average and complete"}


class HouseOptions(SystemOptions):
    attribute: int | None = Field(default=None, ge=0, le=10, title="Attribute score: the pool is attribute + ability",
                                  description="e.g. Intelligence 3; the pool is its dots plus the ability's")
    ability: int | None = Field(default=None, ge=0, le=10, title="Ability ranks (0: none, difficulty +1)",
                                description="e.g. Computer 5; 0 means no ranks: roll the attribute alone at +1")
    difficulty: int = Field(default=6, ge=1, le=20, title="Base difficulty before the other modifiers")
    modifier: Annotated[int, Flag(metavar="+N", repeat=True, convert=summed("modifier", "--modifier"))] = Field(default=0, ge=-10, le=10, title="Situational difficulty modifier")
    no_ability: bool = Field(default=False, title="Rolling without the ability (+1)")
    secondary: bool = Field(default=False, title="A relevant secondary ability (-1 in combat, -2 out)")
    combat: bool = Field(default=False, title="A combat roll (floor 3 instead of 2)")
    failed_attempts: int = Field(default=0, ge=0, le=10, title="Earlier failed attempts (+1 each)")
    pool: int | None = Field(default=None, ge=1, le=MAX_DICE, title="Dice pool before losses to a difficulty above 9")
    opponent_dice: int = Field(default=0, ge=0, le=MAX_DICE, title="Contested: the last N dice are the defender's")
    opponent_difficulty: int = Field(default=6, ge=2, le=9, title="Contested: the defender's difficulty")
    opponent_colour: str | None = Field(default=None, max_length=32, title="Contested: the defender's dice colour",
                                        description="the defender throws dice of this colour with the actor's")
    prior_successes: Annotated[int, Flag(name="prior", metavar="N")] = Field(default=0, ge=-100, le=100, title="Extended or teamwork: net successes so far")
    extended: bool = Field(default=False, title="Extended or teamwork: each throw adds to the last",
                           description="the camera adds each throw's successes to the running total")
    split: Annotated[list[int], Flag(metavar="A,B")] = Field(default_factory=list, max_length=4,
                             title="Split: the pools of the actions taken at once, e.g. 7 6",
                             description="the lower pool is divided between the actions; one throw, read left to right")

    @field_validator("opponent_colour")
    @classmethod
    def _colour(cls, v: str | None) -> str | None:
        return v.strip().lower() or None if v is not None else None

    @field_validator("split")
    @classmethod
    def _split_pools(cls, v: list[int]) -> list[int]:
        if v and len(v) < 2:
            raise ValueError("a split needs the pools of two or more actions")
        if any(not 1 <= n <= MAX_DICE for n in v):
            raise ValueError(f"each split pool is 1-{MAX_DICE} dice")
        return v

    @model_validator(mode="after")
    def _sane(self):
        if self.ability is not None and self.attribute is None:
            raise ValueError("an ability needs its attribute: the pool is attribute + ability")
        if self.attribute is not None and self.pool is not None and self.pool != self.attribute + (self.ability or 0):
            raise ValueError(f"pool {self.pool} is not attribute {self.attribute} + ability {self.ability or 0}")
        if self.attribute is not None and self.attribute + (self.ability or 0) < 1:
            raise ValueError("attribute + ability is 0 dice: nothing to roll")
        if (self.pool is not None or self.attribute is not None) and self.opponent_dice:
            # Counted from the end, the defender's dice would hide a miscounted pool: name them by colour.
            raise ValueError("a pool to expect needs the defender's dice named by colour (opponent_colour), not count")
        if self.opponent_dice and self.opponent_colour:
            raise ValueError("name the defender's dice by count (opponent_dice) or by colour, not both")
        if self.split and (self.pool is not None or self.attribute is not None or self.opponent_dice
                           or self.opponent_colour or self.extended):
            raise ValueError("a split roll takes its dice from the split pools alone")
        return self

    @property
    def dice_pool(self) -> int | None:
        """The dice the roller should throw, before losses to a difficulty above 9."""
        if self.attribute is not None:
            return self.attribute + (self.ability or 0)
        return self.pool

    @property
    def unranked(self) -> bool:
        """Rolling without ranks in the ability: told directly, or as ability 0."""
        return self.no_ability or self.ability == 0


class SplitAction(BaseModel):
    model_config = ConfigDict(frozen=True)

    action: int = Field(title="Action number, from 1")
    dice: int = Field(title="Dice this action rolls")
    hits: int
    ones: int
    successes: int = Field(title="Net successes")
    outcome: str
    degree: str | None


class HouseAdjudication(Adjudication):
    system: Literal["house-games"] = Field(title="System name")
    difficulty: int = Field(title="Final difficulty (2-9)")
    dice_lost: int = Field(title="Dice the pool loses to a difficulty above 9")
    dice_rolled: int = Field(title="Dice counted for the roller")
    hits: int = Field(title="Dice at or above the difficulty")
    ones: int = Field(title="Ones rolled")
    successes: int = Field(title="Net successes: hits minus ones")
    botch: bool = Field(title="Net below 0")
    degree: str | None = Field(title="Degree of success (marginal, average, complete...)")
    total_successes: int = Field(title="Extended/teamwork: prior plus this roll's net")
    opponent_successes: int | None = Field(default=None, title="Contested: the defender's net")
    margin: int | None = Field(default=None, title="Contested: the winner's margin")
    winner: str | None = Field(default=None, title="Contested: actor or defender")
    pool: int | None = Field(default=None, title="Dice the roller should throw (attribute + ability), when known")
    actions: list[SplitAction] = Field(default_factory=list, title="Split: each action's dice and verdict")


class Difficulty(NamedTuple):
    value: int
    overage: int
    steps: list[str]


def difficulty_of(opts: HouseOptions) -> Difficulty:
    d = opts.difficulty + opts.modifier
    steps = [f"Base difficulty {opts.difficulty}" + (f" {opts.modifier:+d} modifiers = {d}" if opts.modifier else "")]
    if opts.unranked:
        d += 1
        steps.append(f"+1 without ranks in the ability = {d}")
    if opts.secondary:
        cut = 1 if opts.combat else 2
        d -= cut
        steps.append(f"-{cut} for a secondary ability {'in' if opts.combat else 'out of'} combat = {d}")
    if opts.failed_attempts:
        d += opts.failed_attempts
        steps.append(f"+{opts.failed_attempts} for earlier failed attempts = {d}")
    floor = 3 if opts.combat else 2
    if d < floor:
        d = floor
        steps.append(f"raised to the floor of {floor}")
    overage = max(0, d - 9)
    if overage:
        steps.append(f"{d} is above 9: difficulty 9 and the pool loses {overage} {'die' if overage == 1 else 'dice'}")
        d = 9
    return Difficulty(d, overage, steps)


def die_score(value: int, difficulty: int) -> int:
    """One die's share of the net: +1 at or above the difficulty, -1 on a 1 (face 0 is 10)."""
    v = 10 if value == 0 else value
    return 1 if v >= difficulty else -1 if v == 1 else 0


def verdict(net: int) -> str:
    return "botch" if net < 0 else "failure" if net == 0 else "success"


def degree_of(net: int) -> str | None:
    return None if net < 1 else DEGREES.get(net, "complete")


def pool_step(opts: HouseOptions) -> str | None:
    """How the pool was built, in the seed's words (Smitty: Intelligence 3 + Computer 5 = 8 dice)."""
    if opts.attribute is None:
        return None
    if opts.ability is None:
        return f"Pool: attribute {opts.attribute} = {opts.attribute} {'die' if opts.attribute == 1 else 'dice'}."
    if opts.ability == 0:
        return f"Pool: attribute {opts.attribute} alone (no ranks in the ability, difficulty +1) = {opts.attribute} dice."
    return f"Pool: attribute {opts.attribute} + ability {opts.ability} = {opts.dice_pool} dice."


def count_problem(read: int, expect: int, opts: HouseOptions, overage: int) -> str:
    """What the live view says when the table shows more or fewer dice than the pool."""
    pool = opts.dice_pool
    built = (f"attribute {opts.attribute} + ability {opts.ability or 0}" if opts.attribute is not None
             else f"pool {pool}")
    if overage:
        built += f", minus {overage} lost to the difficulty"
    diff = read - expect
    more = f"{diff} more" if diff > 0 else f"{-diff} fewer"
    return (f"the table shows {read} {'die' if read == 1 else 'dice'}, {more} than the {expect} to roll ({built}): "
            f"{'take the extra off' if diff > 0 else 'add the missing dice'} and roll again, or correct the roll")


class Tally(NamedTuple):
    """Some dice counted at a difficulty: hits, ones, and the net (hits minus ones)."""

    hits: int
    ones: int
    net: int


def tally(values: Sequence[int], difficulty: int) -> Tally:
    scores = [die_score(v, difficulty) for v in values]
    hits, ones = scores.count(1), scores.count(-1)
    return Tally(hits, ones, hits - ones)


def contest(net: int, their_net: int) -> tuple[str, int]:
    """(winner, margin) of a contested roll: a net below 0 counts as 0, and a tie goes to the defender."""
    a, b = max(net, 0), max(their_net, 0)
    return ("actor" if a > b else "defender"), abs(a - b)


def contest_verdict(net: int, their_net: int) -> str:
    """The actor's outcome: a botch stays a botch, otherwise success only when the actor wins."""
    if net < 0:
        return "botch"
    return "success" if contest(net, their_net)[0] == "actor" else "failure"


class HouseScore(NamedTuple):
    """A scored House Games roll, before any words: the numbers, and each die counted, lost or ignored with why."""

    difficulty: Difficulty
    counted: list[int]  # the actor's faces that count (a 0 is 10)
    own: Tally
    their_net: int | None  # contested: the defender's net
    winner: str | None
    margin: int | None
    outcome: str
    degree: str | None
    total: int  # extended or teamwork: the prior successes plus this roll's net
    dice: list[RolledDie]


def _check_dice(dice: Sequence[DieReading]) -> None:
    if len(dice) > MAX_DICE:
        raise LimitError(f"{len(dice)} dice is over the cap of {MAX_DICE}")
    bad = [d for d in dice if d.type is not DieType.d10]
    if bad:
        raise RulesError(f"House Games rolls d10s only, not {bad[0].type.value}")


def _sides(dice: Sequence[DieReading], opts: HouseOptions) -> tuple[list[DieReading], list[DieReading]]:
    """(the actor's dice, the defender's): told apart by colour, or the defender's are the last N."""
    if opts.opponent_colour:
        mine = [d for d in dice if d.colour != opts.opponent_colour]
        theirs = [d for d in dice if d.colour == opts.opponent_colour]
        if not theirs:
            raise RulesError(f"no {opts.opponent_colour} dice read: the defender throws {opts.opponent_colour} dice")
        if not mine:
            raise RulesError(f"only {opts.opponent_colour} dice read: the actor's dice are another colour")
    else:
        mine = list(dice[: len(dice) - opts.opponent_dice]) if opts.opponent_dice else list(dice)
        theirs = list(dice[len(dice) - opts.opponent_dice:]) if opts.opponent_dice else []
    if opts.opponent_dice and len(mine) < 1:
        raise RulesError(f"{opts.opponent_dice} defender dice leave none for the actor")
    return mine, theirs


def _lost(mine: Sequence[DieReading], opts: HouseOptions, diff: Difficulty) -> set[int]:
    """The indices of the actor's dice set aside for a difficulty above 9, when the pool is known and
    thrown whole; a throw of another size than the pool is refused, saying how many."""
    pool = opts.dice_pool
    if pool is None:
        return set()
    expect = pool - diff.overage
    if expect < 1:
        raise RulesError(f"a pool of {pool} loses {diff.overage} dice to the difficulty: nothing to roll")
    if len(mine) == pool and diff.overage:
        return set(range(expect, len(mine)))  # the pool rolled whole: set the overage aside
    if len(mine) != expect:
        raise RulesError(count_problem(len(mine), expect, opts, diff.overage))
    return set()


def _rolled(dice: Sequence[DieReading], difficulty: int, role: str, lost: set[int] = frozenset()) -> list[RolledDie]:
    out = []
    for i, d in enumerate(dice):
        eff = 10 if d.value == 0 else None
        if i in lost:
            out.append(RolledDie(**d.model_dump(), role=role, is_ignored=True, why="lost to a difficulty above 9",
                                 effective=eff))
            continue
        s = die_score(d.value, difficulty)
        out.append(RolledDie(**d.model_dump(), role=role, is_ignored=s == 0,
                             why=None if s else f"below difficulty {difficulty}", effective=eff))
    return out


def score(dice: Sequence[DieReading], opts: HouseOptions) -> HouseScore:
    """The rule on real dice: each die's `die_score` summed to a net, its `verdict` (or the contest's)."""
    _check_dice(dice)
    diff = difficulty_of(opts)
    mine, theirs = _sides(dice, opts)
    lost = _lost(mine, opts, diff)
    if not mine:
        raise RulesError("no dice read")
    counted = [d.value for i, d in enumerate(mine) if i not in lost]
    own = tally(counted, diff.value)
    rolled = _rolled(mine, diff.value, "pool", lost)
    their_net = winner = margin = None
    outcome, for_degree = verdict(own.net), own.net
    if theirs:
        their_net = tally([d.value for d in theirs], opts.opponent_difficulty).net
        rolled += _rolled(theirs, opts.opponent_difficulty, "defender")
        winner, margin = contest(own.net, their_net)
        outcome = contest_verdict(own.net, their_net)
        for_degree = margin if winner == "actor" else 0
    return HouseScore(diff, counted, own, their_net, winner, margin, outcome, degree_of(for_degree),
                      opts.prior_successes + own.net, rolled)


def _head(opts: HouseOptions, diff: Difficulty) -> list[str]:
    """How the pool and the difficulty were found: the first steps of every House Games roll."""
    return [s for s in (pool_step(opts),) if s] + ["; ".join(diff.steps) + f": difficulty {diff.value}."]


def explain(s: HouseScore, opts: HouseOptions) -> list[str]:
    """The steps of a House Games roll, in the order the rule takes them."""
    d, own = s.difficulty.value, s.own
    steps = _head(opts, s.difficulty)
    steps.append(f"Dice: {', '.join(str(10 if v == 0 else v) for v in s.counted)} (a 0 counts as 10).")
    steps.append(f"{own.hits} at or above {d}, {own.ones} one{'s' if own.ones != 1 else ''}: net {own.net}.")
    if s.their_net is not None:
        steps.append(f"Defender at difficulty {opts.opponent_difficulty}: net {s.their_net}.")
        steps.append(f"{s.winner.capitalize()} wins by {s.margin}"
                     + (" (a tie goes to the defender)" if s.margin == 0 else "") + ".")
    if opts.prior_successes or opts.extended:
        steps.append(f"Extended or teamwork: {opts.prior_successes} earlier + {own.net} = {s.total} successes.")
    if s.outcome == "botch":
        steps.append("More ones than successes: a botch.")
    elif s.degree:
        steps.append(f"Degree: {s.degree}.")
    return steps


def summarise(s: HouseScore, opts: HouseOptions) -> str:
    """The roll in one sentence."""
    net, overage = s.own.net, s.difficulty.overage
    summary = f"{s.outcome.capitalize()}: {net} net success{'es' if abs(net) != 1 else ''} at difficulty {s.difficulty.value}"
    if s.degree and s.outcome == "success":
        summary += f", {s.degree}"
    if s.their_net is not None:
        summary += f"; {s.winner} wins by {s.margin}"
    if overage:
        summary += f"; {overage} {'die' if overage == 1 else 'dice'} lost to the difficulty"
    if opts.prior_successes or opts.extended:
        summary += f"; {s.total} in all so far"
    return summary + "."


def resolve(dice: Sequence[DieReading], opts: HouseOptions) -> HouseAdjudication:
    if opts.split:
        return _resolve_split(dice, opts)
    s = score(dice, opts)
    return HouseAdjudication(
        system=NAME, outcome=s.outcome, dice=s.dice, explanation=explain(s, opts), summary=summarise(s, opts),
        options=opts.model_dump(), difficulty=s.difficulty.value, dice_lost=s.difficulty.overage,
        dice_rolled=len(s.counted), hits=s.own.hits, ones=s.own.ones, successes=s.own.net, botch=s.own.net < 0,
        degree=s.degree, total_successes=s.total, pool=opts.dice_pool, opponent_successes=s.their_net,
        margin=s.margin, winner=s.winner,
    )


class SplitScore(NamedTuple):
    """A scored split roll: each action's share of the dice, its faces and verdict, and the roll's word."""

    difficulty: Difficulty
    shares: list[int]
    faces: list[list[int]]  # each action's faces, as read
    actions: list[SplitAction]
    outcome: str
    dice: list[RolledDie]


def score_split(dice: Sequence[DieReading], opts: HouseOptions) -> SplitScore:
    """One throw holding every split action's dice, read left to right: the first share is action 1."""
    _check_dice(dice)
    diff = difficulty_of(opts)
    if diff.overage:
        raise RulesError("the seed does not say how a difficulty above 9 shrinks a split pool: "
                         "roll the actions apart or lower the difficulty")
    shares = split_pool(opts.split, len(opts.split))
    if len(dice) != sum(shares):
        diff_n = len(dice) - sum(shares)
        more = f"{diff_n} more" if diff_n > 0 else f"{-diff_n} fewer"
        raise RulesError(f"the table shows {len(dice)} {'die' if len(dice) == 1 else 'dice'}, {more} than the {sum(shares)} of the split "
                         f"({' + '.join(map(str, shares))})")
    rolled: list[RolledDie] = []
    actions: list[SplitAction] = []
    faces: list[list[int]] = []
    start = 0
    for i, n in enumerate(shares, start=1):
        part = list(dice[start:start + n])
        start += n
        t = tally([d.value for d in part], diff.value)
        rolled += _rolled(part, diff.value, f"action {i}")
        actions.append(SplitAction(action=i, dice=n, hits=t.hits, ones=t.ones, successes=t.net, outcome=verdict(t.net),
                                   degree=degree_of(t.net)))
        faces.append([d.value for d in part])
    words = {a.outcome for a in actions}
    outcome = ("botch" if "botch" in words else words.pop() if len(words) == 1 else "partial")
    return SplitScore(diff, shares, faces, actions, outcome, rolled)


def explain_split(s: SplitScore, opts: HouseOptions) -> list[str]:
    d = s.difficulty.value
    steps = _head(opts, s.difficulty)
    steps.append(f"Split {len(s.shares)} ways: the lower pool of {', '.join(map(str, opts.split))} is {min(opts.split)}, "
                 f"divided as {' + '.join(map(str, s.shares))} dice (at least 2 each), read left to right.")
    for a, faces in zip(s.actions, s.faces):
        shown = ", ".join(str(10 if v == 0 else v) for v in faces)
        steps.append(f"Action {a.action} ({a.dice} dice: {shown}): {a.hits} at or above {d}, {a.ones} "
                     f"one{'s' if a.ones != 1 else ''}: net {a.successes}, {a.outcome}" + (f", {a.degree}" if a.degree else "") + ".")
    if s.outcome == "partial":
        steps.append("Some actions succeed and some fail.")
    return steps


def _resolve_split(dice: Sequence[DieReading], opts: HouseOptions) -> HouseAdjudication:
    s = score_split(dice, opts)
    hits = sum(a.hits for a in s.actions)
    ones = sum(a.ones for a in s.actions)
    net = hits - ones
    summary = (f"Split {len(s.actions)} ways at difficulty {s.difficulty.value}: "
               + "; ".join(f"action {a.action} {a.outcome}, {a.successes} net" for a in s.actions) + ".")
    return HouseAdjudication(
        system=NAME, outcome=s.outcome, dice=s.dice, explanation=explain_split(s, opts), summary=summary,
        options=opts.model_dump(), difficulty=s.difficulty.value, dice_lost=0, dice_rolled=len(dice), hits=hits,
        ones=ones, successes=net, botch=any(a.outcome == "botch" for a in s.actions), degree=None,
        total_successes=opts.prior_successes + net, actions=s.actions,
    )


def net_die(n: int, difficulty: int) -> icepool.Die:
    """Distribution of the net over n d10s: the per-die score summed n times (polynomial, not 10^n)."""
    return n @ icepool.Die([die_score(v, difficulty) for v in range(10)])


def odds(pool: Sequence[DieType], opts: HouseOptions) -> Odds:
    check_pool_size(len(pool))
    if any(k is not DieType.d10 for k in pool):
        raise RulesError("House Games rolls d10s only")
    if opts.opponent_colour:
        raise RulesError("for contested odds give the defender's dice as a count (opponent_dice), not a colour")
    if opts.opponent_dice:
        return _contested_odds(pool, opts)
    if opts.split:
        raise RulesError("odds for a split roll are not offered; ask for one action's share of the pool")
    diff = difficulty_of(opts)
    n = len(pool) - diff.overage
    if n < 1:
        raise RulesError(f"a pool of {len(pool)} loses {diff.overage} dice to the difficulty: nothing to roll")
    net = net_die(n, diff.value)
    outcomes = ladder(net.map(verdict), OUTCOMES)
    ge = lambda k: Fraction(sum(Fraction(p) for o, p in zip(net.outcomes(), net.probabilities()) if o >= k))
    events = [entry("average or better (3+)", ge(3)), entry("complete (5+)", ge(5))]
    summary = (f"{n} {'die' if n == 1 else 'dice'} at difficulty {diff.value}: success {percent(Fraction(outcomes[0].fraction))}, "
               f"botch {percent(Fraction(outcomes[2].fraction))}, expected net {float(net.mean()):.2f}.")
    return Odds(system=NAME, pool=["d10"] * len(pool), options=opts.model_dump(), outcomes=outcomes, events=events, summary=summary)


def _contested_odds(pool: Sequence[DieType], opts: HouseOptions) -> Odds:
    """The last opponent_dice of the pool are the defender's: each side's net exactly, then the
    contest the same way `resolve` decides it (a botch stays a botch; a tie goes to the defender)."""
    diff = difficulty_of(opts)
    n_actor = len(pool) - opts.opponent_dice - diff.overage
    if n_actor < 1:
        raise RulesError(f"{opts.opponent_dice} defender dice (and {diff.overage} lost) leave none for the actor")
    mine = net_die(n_actor, diff.value)
    theirs = net_die(opts.opponent_dice, opts.opponent_difficulty)
    result = icepool.map(contest_verdict, mine, theirs)
    outcomes = ladder(result, OUTCOMES)
    summary = (f"{n_actor} {'die' if n_actor == 1 else 'dice'} at difficulty {diff.value} "
               f"against {opts.opponent_dice} at {opts.opponent_difficulty}: "
               f"the actor wins {percent(Fraction(outcomes[0].fraction))}, botches {percent(Fraction(outcomes[2].fraction))}.")
    return Odds(system=NAME, pool=["d10"] * len(pool), options=opts.model_dump(), outcomes=outcomes, events=[],
                summary=summary)


def split_pool(pools: Sequence[int], actions: int) -> list[int]:
    """Dice per split action: the LOWER pool divided between the actions, each part at least 2 dice."""
    if actions < 2:
        raise RulesError("a split needs at least two actions")
    if not pools:
        raise RulesError("no pools to split")
    low = min(pools)
    if low // actions < 2:
        raise RulesError(f"a pool of {low} cannot be split {actions} ways with at least 2 dice each")
    base, rest = divmod(low, actions)
    return [base + (1 if i < rest else 0) for i in range(actions)]


def default_pool(opts: HouseOptions) -> list[DieType]:
    """The character's pool when the options give it (attribute + ability, or pool), else 5 dice."""
    return [DieType.d10] * (opts.dice_pool or 5)


def follow_up(roll: Roll, options: Mapping[str, Any]) -> FollowUp | None:
    """Extended or teamwork rolls: each throw adds its net successes to the running total."""
    if not options.get("extended") or roll.adjudication is None:
        return None
    return FollowUp.of(roll, "extend", carry=roll.adjudication.total_successes)


def join(follow: FollowUp, dice: Sequence[DieReading], options: Mapping[str, Any]) -> Join | None:
    return Join({**options, "prior_successes": follow.carry})


SYSTEM = System(NAME, TITLE, HouseOptions, HouseAdjudication, resolve, odds, default_pool, follow_up, join,
                pool_die=DieType.d10)
