"""House Games d10 pools (seed 002): difficulty, successes minus ones, contested and extended rolls."""

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


def resolve(dice: Sequence[DieReading], opts: HouseOptions) -> HouseAdjudication:
    if len(dice) > MAX_DICE:
        raise LimitError(f"{len(dice)} dice is over the cap of {MAX_DICE}")
    bad = [d for d in dice if d.type is not DieType.d10]
    if bad:
        raise RulesError(f"House Games rolls d10s only, not {bad[0].type.value}")
    diff = difficulty_of(opts)
    steps = [s for s in (pool_step(opts),) if s] + ["; ".join(diff.steps) + f": difficulty {diff.value}."]
    if opts.split:
        return _resolve_split(dice, opts, diff, steps)
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
    lost: set[int] = set()
    pool = opts.dice_pool
    if pool is not None:
        expect = pool - diff.overage
        if expect < 1:
            raise RulesError(f"a pool of {pool} loses {diff.overage} dice to the difficulty: nothing to roll")
        if len(mine) == pool and diff.overage:
            lost = set(range(expect, len(mine)))  # the pool rolled whole: set the overage aside
        elif len(mine) != expect:
            raise RulesError(count_problem(len(mine), expect, opts, diff.overage))
    if not mine:
        raise RulesError("no dice read")
    counted = [d for i, d in enumerate(mine) if i not in lost]
    scores = [die_score(d.value, diff.value) for d in counted]
    hits, ones = scores.count(1), scores.count(-1)
    net = hits - ones
    rolled: list[RolledDie] = []
    for i, d in enumerate(mine):
        eff = 10 if d.value == 0 else None
        if i in lost:
            rolled.append(RolledDie(**d.model_dump(), role="pool", is_ignored=True, why="lost to a difficulty above 9", effective=eff))
            continue
        s = die_score(d.value, diff.value)
        why = None if s else f"below difficulty {diff.value}"
        rolled.append(RolledDie(**d.model_dump(), role="pool", is_ignored=s == 0, why=why, effective=eff))
    faces = ", ".join(str(10 if d.value == 0 else d.value) for d in counted)
    steps.append(f"Dice: {faces} (a 0 counts as 10).")
    steps.append(f"{hits} at or above {diff.value}, {ones} one{'s' if ones != 1 else ''}: net {net}.")
    outcome = verdict(net)
    extra: dict = {}
    if theirs:
        their_net = sum(die_score(d.value, opts.opponent_difficulty) for d in theirs)
        for d in theirs:
            s = die_score(d.value, opts.opponent_difficulty)
            rolled.append(RolledDie(**d.model_dump(), role="defender", is_ignored=s == 0,
                                    why=None if s else f"below difficulty {opts.opponent_difficulty}",
                                    effective=10 if d.value == 0 else None))
        a, b = max(net, 0), max(their_net, 0)
        winner = "actor" if a > b else "defender"
        margin = abs(a - b)
        steps.append(f"Defender at difficulty {opts.opponent_difficulty}: net {their_net}.")
        steps.append(f"{winner.capitalize()} wins by {margin}" + (" (a tie goes to the defender)" if a == b else "") + ".")
        if outcome != "botch":
            outcome = "success" if winner == "actor" else "failure"
        extra = dict(opponent_successes=their_net, margin=margin, winner=winner)
        net_for_degree = a - b if winner == "actor" else 0
    else:
        net_for_degree = net
    degree = degree_of(net_for_degree)
    total = opts.prior_successes + net
    if opts.prior_successes or opts.extended:
        steps.append(f"Extended or teamwork: {opts.prior_successes} earlier + {net} = {total} successes.")
    if outcome == "botch":
        steps.append("More ones than successes: a botch.")
    elif degree:
        steps.append(f"Degree: {degree}.")
    summary = f"{outcome.capitalize()}: {net} net success{'es' if abs(net) != 1 else ''} at difficulty {diff.value}"
    if degree and outcome == "success":
        summary += f", {degree}"
    if theirs:
        summary += f"; {extra['winner']} wins by {extra['margin']}"
    if diff.overage:
        summary += f"; {diff.overage} {'die' if diff.overage == 1 else 'dice'} lost to the difficulty"
    if opts.prior_successes or opts.extended:
        summary += f"; {total} in all so far"
    return HouseAdjudication(
        system=NAME, outcome=outcome, dice=rolled, explanation=steps, summary=summary + ".", options=opts.model_dump(),
        difficulty=diff.value, dice_lost=diff.overage, dice_rolled=len(counted), hits=hits, ones=ones,
        successes=net, botch=net < 0, degree=degree, total_successes=total, pool=pool, **extra,
    )


def _resolve_split(dice: Sequence[DieReading], opts: HouseOptions, diff: Difficulty, steps: list[str]) -> HouseAdjudication:
    """One throw holding every split action's dice, read left to right: the first share is action 1."""
    if diff.overage:
        raise RulesError("the seed does not say how a difficulty above 9 shrinks a split pool: "
                         "roll the actions apart or lower the difficulty")
    shares = split_pool(opts.split, len(opts.split))
    low = min(opts.split)
    steps.append(f"Split {len(shares)} ways: the lower pool of {', '.join(map(str, opts.split))} is {low}, "
                 f"divided as {' + '.join(map(str, shares))} dice (at least 2 each), read left to right.")
    if len(dice) != sum(shares):
        diff_n = len(dice) - sum(shares)
        more = f"{diff_n} more" if diff_n > 0 else f"{-diff_n} fewer"
        raise RulesError(f"the table shows {len(dice)} {'die' if len(dice) == 1 else 'dice'}, {more} than the {sum(shares)} of the split "
                         f"({' + '.join(map(str, shares))})")
    rolled: list[RolledDie] = []
    actions: list[SplitAction] = []
    start = 0
    for i, n in enumerate(shares, start=1):
        part = list(dice[start:start + n])
        start += n
        scores = [die_score(d.value, diff.value) for d in part]
        hits, ones = scores.count(1), scores.count(-1)
        net = hits - ones
        for d, sc in zip(part, scores):
            rolled.append(RolledDie(**d.model_dump(), role=f"action {i}", is_ignored=sc == 0,
                                    why=None if sc else f"below difficulty {diff.value}",
                                    effective=10 if d.value == 0 else None))
        outcome = verdict(net)
        actions.append(SplitAction(action=i, dice=n, hits=hits, ones=ones, successes=net, outcome=outcome,
                                   degree=degree_of(net)))
        faces = ", ".join(str(10 if d.value == 0 else d.value) for d in part)
        steps.append(f"Action {i} ({n} dice: {faces}): {hits} at or above {diff.value}, {ones} "
                     f"one{'s' if ones != 1 else ''}: net {net}, {outcome}" + (f", {degree_of(net)}" if degree_of(net) else "") + ".")
    words = {a.outcome for a in actions}
    outcome = ("botch" if "botch" in words else words.pop() if len(words) == 1 else "partial")
    if outcome == "partial":
        steps.append("Some actions succeed and some fail.")
    hits = sum(a.hits for a in actions)
    ones = sum(a.ones for a in actions)
    net = hits - ones
    summary = (f"Split {len(actions)} ways at difficulty {diff.value}: "
               + "; ".join(f"action {a.action} {a.outcome}, {a.successes} net" for a in actions) + ".")
    return HouseAdjudication(
        system=NAME, outcome=outcome, dice=rolled, explanation=steps, summary=summary, options=opts.model_dump(),
        difficulty=diff.value, dice_lost=0, dice_rolled=len(dice), hits=hits, ones=ones, successes=net,
        botch=any(a.outcome == "botch" for a in actions), degree=None, total_successes=opts.prior_successes + net,
        actions=actions,
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

    def decide(a: int, b: int) -> str:
        if a < 0:
            return "botch"
        return "success" if max(a, 0) > max(b, 0) else "failure"

    result = icepool.map(decide, mine, theirs)
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
