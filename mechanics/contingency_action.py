"""Contingency action rolls (seed 001): d8 action dice, d6 pressure dice, resource pools."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Annotated, Any, Literal, Mapping, Sequence

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


def _level_name(score: int) -> str:
    return LEVELS[min(score, 4)]


def resolve(dice: Sequence[DieReading], opts: ActionOptions) -> ActionAdjudication:
    if len(dice) > MAX_DICE:
        raise LimitError(f"{len(dice)} dice is over the cap of {MAX_DICE}")
    other = [d for d in dice if d.type not in (DieType.d8, DieType.d6)]
    if other:
        raise RulesError(f"an action roll uses d8 action dice and d6 pressure dice, not {other[0].type.value}")
    action = [d for d in dice if d.type is DieType.d8]
    pressure = [d for d in dice if d.type is DieType.d6]
    if opts.mode == "resource" and pressure:
        raise RulesError("a resource pool roll uses d8 dice only")
    if opts.zero_dice and len(action) != 2:
        raise RulesError(f"a zero-dice roll takes exactly two d8, got {len(action)}")
    if not action:
        raise RulesError("no action dice (d8) read; for a zero-dice roll pass zero_dice and roll two d8")
    if opts.mode == "resource" and opts.pool_size is not None and opts.pool_size != len(action):
        raise RulesError(f"the resource pool holds {opts.pool_size} dice but {len(action)} were read")
    state = fold(INIT, step, lambda s: s, [level_of(d.value) for d in action])
    score = score_final(opts.zero_dice)(state)
    n8 = state[2]
    lo, hi = min(d.value for d in action), max(d.value for d in action)
    sixes = sum(1 for d in pressure if d.value == 6)
    outcome, crit, tension = cut(score, sixes)
    kept_value = lo if opts.zero_dice else hi
    rolled: list[RolledDie] = []
    kept_done = False
    for d in dice:
        if d.type is DieType.d8:
            if opts.mode == "resource":
                gone = d.value >= 6
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
    before = _level_name(score)
    steps = [f"Action dice: {', '.join(str(d.value) for d in action)}."]
    if opts.zero_dice:
        steps.append(f"Zero dice: the lower d8 counts, {lo}; no critical is possible.")
    elif n8 >= 2:
        steps.append(f"{n8} eights: a critical with {n8 - 1} critical level{'s' if n8 > 2 else ''}.")
    else:
        steps.append(f"Highest die {hi}: {before}.")
    if pressure:
        steps.append(f"Pressure dice: {', '.join(str(d.value) for d in pressure)}; {sixes} six{'es' if sixes != 1 else ''}.")
    if sixes:
        steps.append(f"Each six cuts one level (critical levels first): {before} becomes {outcome}"
                     + (f" with {crit} critical level{'s' if crit != 1 else ''}" if outcome == 'critical' else "") + ".")
    if tension:
        steps.append(f"{tension} cut{'s' if tension != 1 else ''} below disaster: the GM gains {tension} tension token{'s' if tension != 1 else ''}.")
    head = f"{outcome.capitalize()} outcome: " + (f"lower die {lo}" if opts.zero_dice else
                                                  f"{n8} eights" if n8 >= 2 else f"highest die {hi}")
    if sixes:
        cut_word = {1: "one", 2: "two", 3: "three"}.get(sixes, str(sixes))
        if before == outcome == "critical":
            head += f"; {cut_word} pressure six{'es' if sixes != 1 else ''} cut {sixes} critical level{'s' if sixes != 1 else ''}"
        elif before == outcome:
            head += f"; {cut_word} pressure six{'es' if sixes != 1 else ''} could not cut below Disaster"
        else:
            head += f"; {cut_word} pressure six{'es' if sixes != 1 else ''} cut {before.capitalize()} to {outcome.capitalize()}"
    if tension:
        head += f"; the GM gains {tension} tension"
    fields = dict(system=NAME, dice=rolled, options=opts.model_dump(), highest=kept_value, eights=n8,
                  level_before_cuts=before, critical_levels=crit, cuts=sixes, tension=tension, action_outcome=outcome)
    if opts.mode == "resource":
        removed = sum(1 for d in action if d.value >= 6)
        remaining = len(action) - removed
        word = "depleted" if remaining == 0 else "none-removed" if removed == 0 else "diminished"
        steps.append(f"Resource pool: {removed} of {len(action)} dice showed 6 or more and are removed; {remaining} remain.")
        if word == "depleted":
            steps.append("The pool is empty: the event happens or the resource runs out.")
        elif word == "none-removed":
            steps.append("No die was removed: the GM applies a secondary effect or a minor consequence.")
        summary = {"depleted": f"Pool depleted: all {len(action)} dice removed.",
                   "diminished": f"Pool diminished: {removed} removed, {remaining} remain.",
                   "none-removed": f"No dice removed: {remaining} remain and a minor consequence applies."}[word]
        return ActionAdjudication(**fields, outcome=word, explanation=steps, summary=summary, remaining=remaining,
                                  removed=removed, depleted=remaining == 0, none_removed=removed == 0)
    return ActionAdjudication(**fields, outcome=outcome, explanation=steps, summary=head + ".")


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
        removed = a @ icepool.d8.map(lambda v: int(v >= 6))
        names = removed.map(lambda r: "depleted" if r == a else "none-removed" if r == 0 else "diminished")
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
