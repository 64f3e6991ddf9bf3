"""Contingency action rolls (seed 001): d8 action dice, d6 pressure dice, resource pools.

The rule is written once: the action dice as one order-independent fold (`INIT`, `step`, `score_final`)
and the pressure cuts (`cut`). `score` runs the fold over the real faces (`odds.fold`); `odds` runs the
same fold over every face with icepool's multiset evaluator (`odds.FoldEvaluator`), then the same cuts.
`score` builds the numbers and each die's fate; `explain` and `summarise` turn them into words.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Annotated, Any, Literal, Mapping, NamedTuple, Sequence

import icepool
from pydantic import Field

from .adjudication import Adjudication, RolledDie
from .dice import DieReading, DieType
from .errors import LimitError, RulesError
from .odds import FoldEvaluator, Odds, check_pool_size, entry, fold, ladder, percent
from .options import Flag, SystemOptions
from .follow_up import FollowUp, Join
from .system import System

if TYPE_CHECKING:
    from .roll import Roll

NAME = "contingency-action"
TITLE = "Contingency action roll"
MAX_DICE = 40
# Levels from worst to best; a critical with k levels scores 3 + k.
LEVELS = ("disaster", "grim", "messy", "clean", "critical")
OUTCOMES = ("critical", "clean", "messy", "grim", "disaster")
RESOURCE_OUTCOMES = ("depleted", "diminished", "none-removed")


class ActionOptions(SystemOptions):
    zero_dice: bool = Field(default=False, title="Zero dice: roll two d8 and take the lower, no critical")
    mode: Annotated[Literal["action", "resource"], Flag(hidden=True)] = Field(default="action", title="Action roll or resource pool roll")
    pool_size: Annotated[int | None, Flag(name="pool", metavar="N", convert=lambda n: {"mode": "resource", "pool_size": n})] = Field(default=None, ge=1, le=MAX_DICE, title="Resource pool size before this roll (checked)")


class ActionAdjudication(Adjudication):
    system: Literal["contingency-action"] = Field(title="System name")
    highest: int | None = Field(title="The kept action die (the lower one on a zero-dice roll)")
    eights: int = Field(title="Action dice showing 8")
    level_before_cuts: str = Field(title="Outcome before pressure")
    critical_levels: int = Field(title="Critical levels left after cuts (0 unless critical)")
    cuts: int = Field(title="Pressure sixes")
    tension: int = Field(title="Tension tokens the GM gains (cuts below disaster)")
    action_outcome: str = Field(title="The action ladder word (same as outcome for an action roll)")
    remaining: int | None = Field(default=None, title="Resource pool: dice left")
    removed: int | None = Field(default=None, title="Resource pool: dice removed (6 or more)")
    depleted: bool | None = Field(default=None, title="Resource pool: no dice left")
    none_removed: bool | None = Field(default=None, title="Resource pool: nothing removed (a minor consequence)")


# The action dice as one order-independent fold over each die's rung (level_of its face):
# state (lowest rung, highest rung, number of 8s). Odds run it over a pool of rung dice
# (4 outcomes instead of 8, so icepool has fewer states); resolve runs it over the real faces.
INIT = (9, -1, 0)


def level_of(value: int) -> int:
    """A d8 face's rung: 1 disaster, 2-5 grim, 6-7 messy, 8 clean."""
    return 0 if value <= 1 else 1 if value <= 5 else 2 if value <= 7 else 3


def step(state, rung: int, count: int):
    lo, hi, n8 = state
    return (min(lo, rung), max(hi, rung), n8 + (count if rung == 3 else 0))


def score_final(zero_dice: bool):
    def final(state) -> int:
        lo, hi, n8 = state
        if zero_dice:
            return lo
        return 3 + (n8 - 1) if n8 >= 2 else hi
    return final


def cut(score: int, sixes: int) -> tuple[str, int, int]:
    """(outcome, critical levels left, tension) after `sixes` cuts; criticals are cut first."""
    s = score - sixes
    tension = max(0, -s)
    s = max(0, s)
    return (LEVELS[min(s, 4)], max(0, s - 3), tension)


def removed(value: int) -> int:
    """A resource pool's d8 is removed on 6 or more."""
    return int(value >= 6)


def pool_word(removed_dice: int, thrown: int) -> str:
    """A resource pool roll's outcome word."""
    return "depleted" if removed_dice == thrown else "none-removed" if removed_dice == 0 else "diminished"


def _level_name(score: int) -> str:
    return LEVELS[min(score, 4)]


class ActionScore(NamedTuple):
    """A scored action roll, before any words: the numbers, and each die kept, dropped or ignored with why."""

    action: list[int]  # the d8 faces, as read
    pressure: list[int]  # the d6 faces, as read
    eights: int
    before: str  # the level before pressure cuts it
    kept: int  # the kept action die (the lower on a zero-dice roll)
    sixes: int
    outcome: str  # the action ladder's word after the cuts
    critical_levels: int
    tension: int
    dice: list[RolledDie]
    removed: int  # resource pool: dice at 6 or more (0 on an action roll)


def _checked(dice: Sequence[DieReading], opts: ActionOptions) -> tuple[list[int], list[int]]:
    """The action and pressure faces of a throw the rules accept."""
    if len(dice) > MAX_DICE:
        raise LimitError(f"{len(dice)} dice is over the cap of {MAX_DICE}")
    other = [d for d in dice if d.type not in (DieType.d8, DieType.d6)]
    if other:
        raise RulesError(f"an action roll uses d8 action dice and d6 pressure dice, not {other[0].type.value}")
    action = [d.value for d in dice if d.type is DieType.d8]
    pressure = [d.value for d in dice if d.type is DieType.d6]
    if opts.mode == "resource" and pressure:
        raise RulesError("a resource pool roll uses d8 dice only")
    if opts.zero_dice and len(action) != 2:
        raise RulesError(f"a zero-dice roll takes exactly two d8, got {len(action)}")
    if not action:
        raise RulesError("no action dice (d8) read; for a zero-dice roll pass zero_dice and roll two d8")
    if opts.mode == "resource" and opts.pool_size is not None and opts.pool_size != len(action):
        raise RulesError(f"the resource pool holds {opts.pool_size} dice but {len(action)} were read")
    return action, pressure


def _rolled(dice: Sequence[DieReading], opts: ActionOptions, kept_value: int) -> list[RolledDie]:
    """Each die with its role: the one kept action die, the dropped ones, the pressure sixes that cut."""
    rolled: list[RolledDie] = []
    kept_done = False
    for d in dice:
        if d.type is DieType.d8:
            if opts.mode == "resource":
                gone = bool(removed(d.value))
                rolled.append(RolledDie(**d.model_dump(), role="resource", is_dropped=gone,
                                        why="6 or more: removed from the pool" if gone else None))
                continue
            keep = not kept_done and d.value == kept_value
            kept_done = kept_done or keep
            why = None
            if not keep:
                why = "not the lower die (zero dice)" if opts.zero_dice else ("another 8: a critical level" if d.value == 8 else "not the highest die")
            rolled.append(RolledDie(**d.model_dump(), role="action", is_dropped=not keep, why=why))
        else:
            six = d.value == 6
            rolled.append(RolledDie(**d.model_dump(), role="pressure", is_ignored=not six,
                                    why=None if six else "a pressure die cuts only on a 6"))
    return rolled


def score(dice: Sequence[DieReading], opts: ActionOptions) -> ActionScore:
    """The rule on real dice: the same fold `odds` runs over every face (INIT, step, score_final), then the cuts."""
    action, pressure = _checked(dice, opts)
    state = fold(INIT, step, lambda s: s, [level_of(v) for v in action])
    points = score_final(opts.zero_dice)(state)
    sixes = sum(1 for v in pressure if v == 6)
    outcome, crit, tension = cut(points, sixes)
    kept = min(action) if opts.zero_dice else max(action)
    return ActionScore(action, pressure, state[2], _level_name(points), kept, sixes, outcome, crit, tension,
                       _rolled(dice, opts, kept), sum(removed(v) for v in action))


def _plural(n: int, word: str, many: str | None = None) -> str:
    return word if n == 1 else many or word + "s"


def explain(s: ActionScore, opts: ActionOptions) -> list[str]:
    """The steps of an action roll, in the order the rule takes them."""
    steps = [f"Action dice: {', '.join(map(str, s.action))}."]
    if opts.zero_dice:
        steps.append(f"Zero dice: the lower d8 counts, {s.kept}; no critical is possible.")
    elif s.eights >= 2:
        steps.append(f"{s.eights} eights: a critical with {s.eights - 1} critical level{'s' if s.eights > 2 else ''}.")
    else:
        steps.append(f"Highest die {s.kept}: {s.before}.")
    if s.pressure:
        steps.append(f"Pressure dice: {', '.join(map(str, s.pressure))}; {s.sixes} {_plural(s.sixes, 'six', 'sixes')}.")
    if s.sixes:
        steps.append(f"Each six cuts one level (critical levels first): {s.before} becomes {s.outcome}"
                     + (f" with {s.critical_levels} critical {_plural(s.critical_levels, 'level')}"
                        if s.outcome == 'critical' else "") + ".")
    if s.tension:
        steps.append(f"{s.tension} {_plural(s.tension, 'cut')} below disaster: the GM gains {s.tension} tension "
                     f"{_plural(s.tension, 'token')}.")
    return steps


def summarise(s: ActionScore, opts: ActionOptions) -> str:
    """The action roll in one sentence."""
    head = f"{s.outcome.capitalize()} outcome: " + (f"lower die {s.kept}" if opts.zero_dice else
                                                    f"{s.eights} eights" if s.eights >= 2 else f"highest die {s.kept}")
    if s.sixes:
        count = {1: "one", 2: "two", 3: "three"}.get(s.sixes, str(s.sixes))
        sixes = f"{count} pressure {_plural(s.sixes, 'six', 'sixes')}"
        if s.before == s.outcome == "critical":
            head += f"; {sixes} cut {s.sixes} critical {_plural(s.sixes, 'level')}"
        elif s.before == s.outcome:
            head += f"; {sixes} could not cut below Disaster"
        else:
            head += f"; {sixes} cut {s.before.capitalize()} to {s.outcome.capitalize()}"
    if s.tension:
        head += f"; the GM gains {s.tension} tension"
    return head + "."


def explain_resource(s: ActionScore) -> tuple[list[str], str]:
    """A resource pool roll's own steps (after the action steps) and its one sentence."""
    n, gone = len(s.action), s.removed
    remaining, word = n - gone, pool_word(gone, n)
    steps = [f"Resource pool: {gone} of {n} dice showed 6 or more and are removed; {remaining} remain."]
    if word == "depleted":
        steps.append("The pool is empty: the event happens or the resource runs out.")
    elif word == "none-removed":
        steps.append("No die was removed: the GM applies a secondary effect or a minor consequence.")
    summary = {"depleted": f"Pool depleted: all {n} dice removed.",
               "diminished": f"Pool diminished: {gone} removed, {remaining} remain.",
               "none-removed": f"No dice removed: {remaining} remain and a minor consequence applies."}[word]
    return steps, summary


def resolve(dice: Sequence[DieReading], opts: ActionOptions) -> ActionAdjudication:
    s = score(dice, opts)
    fields = dict(system=NAME, dice=s.dice, options=opts.model_dump(), highest=s.kept, eights=s.eights,
                  level_before_cuts=s.before, critical_levels=s.critical_levels, cuts=s.sixes, tension=s.tension,
                  action_outcome=s.outcome)
    steps = explain(s, opts)
    if opts.mode == "resource":
        more, summary = explain_resource(s)
        remaining = len(s.action) - s.removed
        return ActionAdjudication(**fields, outcome=pool_word(s.removed, len(s.action)), explanation=steps + more, summary=summary,
                                  remaining=remaining, removed=s.removed, depleted=remaining == 0,
                                  none_removed=s.removed == 0)
    return ActionAdjudication(**fields, outcome=s.outcome, explanation=steps, summary=summarise(s, opts))


def odds(pool: Sequence[DieType], opts: ActionOptions) -> Odds:
    check_pool_size(len(pool))
    other = [k for k in pool if k not in (DieType.d8, DieType.d6)]
    if other:
        raise RulesError(f"an action roll uses d8 and d6 dice, not {other[0].value}")
    a = sum(1 for k in pool if k is DieType.d8)
    p = sum(1 for k in pool if k is DieType.d6)
    if opts.zero_dice:
        if a not in (0, 2):
            raise RulesError("a zero-dice roll takes two d8 (or none in the pool)")
        a = 2
    if a == 0:
        raise RulesError("no action dice (d8) in the pool")
    pool_str = ["d8"] * a + ["d6"] * p
    if opts.mode == "resource":
        if p:
            raise RulesError("a resource pool roll uses d8 dice only")
        names = (a @ icepool.d8.map(removed)).map(lambda r: pool_word(r, a))
        outcomes = ladder(names, RESOURCE_OUTCOMES)
        summary = f"Rolling a pool of {a} d8: depleted {percent(Fraction(outcomes[0].fraction))}, nothing removed {percent(Fraction(outcomes[2].fraction))}."
        return Odds(system=NAME, pool=pool_str, options=opts.model_dump(), outcomes=outcomes, summary=summary)
    rung = icepool.d8.map(level_of)
    score = FoldEvaluator(INIT, step, score_final(opts.zero_dice)).evaluate(icepool.Pool([rung] * a))
    sixes = p @ icepool.d6.map(lambda v: int(v == 6)) if p else icepool.Die([0])
    # One pass over (score, sixes): the cut outcome, and whether the GM gains tension.
    joint = icepool.map(lambda s, k: cut(s, k)[0] + ("|t" if cut(s, k)[2] else ""), score, sixes)
    probs = {o: Fraction(p) for o, p in zip(joint.outcomes(), joint.probabilities())}
    outcomes = [entry(n, probs.get(n, Fraction(0)) + probs.get(n + "|t", Fraction(0))) for n in OUTCOMES]
    events = [entry("gm tension", sum((p for o, p in probs.items() if o.endswith("|t")), Fraction(0)))]
    best = max(outcomes, key=lambda o: o.probability)
    summary = (f"{a} action {'die' if a == 1 else 'dice'}" + (f" and {p} pressure" if p else "")
               + f": most likely {best.outcome} ({percent(Fraction(best.fraction))}); clean or better "
               + percent(sum((Fraction(o.fraction) for o in outcomes[:2]), Fraction(0))) + ".")
    return Odds(system=NAME, pool=pool_str, options=opts.model_dump(), outcomes=outcomes, events=events, summary=summary)


def default_pool(opts: ActionOptions) -> list[DieType]:
    return [DieType.d8, DieType.d8]


def follow_up(roll: Roll, options: Mapping[str, Any]) -> FollowUp | None:
    """A resource pool shrinks roll after roll until it is depleted: the next throw is the pool that is left."""
    adj = roll.adjudication
    if options.get("mode") != "resource" or adj is None or adj.depleted:
        return None
    return FollowUp.of(roll, "pool", remaining=adj.remaining)


def join(follow: FollowUp, dice: Sequence[DieReading], options: Mapping[str, Any]) -> Join | None:
    # pool_size is checked against the dice thrown, so a throw of the wrong number of dice is caught.
    return Join({**options, "mode": "resource", "pool_size": follow.remaining})


SYSTEM = System(NAME, TITLE, ActionOptions, ActionAdjudication, resolve, odds, default_pool, follow_up, join,
                pool_die=DieType.d8, added_dice={"pressure": DieType.d6})
