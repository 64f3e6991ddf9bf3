"""Emergence d10 rolls (seed 003): base + modifiers, take highest/lowest, Wyrd zeros and re-rolls."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Annotated, Any, Literal, Mapping, Sequence

from pydantic import Field, field_validator

from .adjudication import Adjudication, RolledDie
from .dice import DieReading, DieType
from .errors import LimitError, RulesError
from .odds import Odds, check_pool_size, entry, percent
from .options import Flag, SystemOptions
from .follow_up import FollowUp, Join
from .system import System

if TYPE_CHECKING:
    from .roll import Roll

NAME = "emergence"
TITLE = "Emergence outcome roll"
MAX_DICE = 20
LABELS = {1: "Worst", 2: "Almost the Worst", 3: "Bad", 4: "Close to Even", 5: "Even", 6: "Close to Even",
          7: "Good", 8: "Almost the Best", 9: "Best"}
# Outcome words: the labels, lower case, best first. "close to even" covers both 4 and 6.
OUTCOMES = ("best", "almost the best", "good", "close to even", "even", "bad", "almost the worst", "worst")
# The seed's names: "Wyrd, Double Wyrd, Triple Wyrd or Third Wyrd, Fourth Wyrd etc."
WYRD_NAMES = {1: "Wyrd", 2: "Double Wyrd", 3: "Triple Wyrd", 4: "Fourth Wyrd", 5: "Fifth Wyrd", 6: "Sixth Wyrd",
              7: "Seventh Wyrd", 8: "Eighth Wyrd", 9: "Ninth Wyrd", 10: "Tenth Wyrd"}


def wyrd_name(n: int) -> str:
    return WYRD_NAMES.get(n, f"{n}{_suffix(n)} Wyrd") if n else ""


def _suffix(n: int) -> str:
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


class EmergenceOptions(SystemOptions):
    direction: Literal["+", "-"] = Field(default="+", title="Modifiers: + takes the highest, - the lowest")
    rerolls: Annotated[list[int], Flag(metavar="A,B")] = Field(default_factory=list, max_length=MAX_DICE, title="Re-rolls of a Wyrd base, in order (0-9)")

    @field_validator("rerolls")
    @classmethod
    def _faces(cls, v: list[int]) -> list[int]:
        if any(not 0 <= x <= 9 for x in v):
            raise ValueError("a re-roll is a d10 face, 0-9")
        return v


class EmergenceAdjudication(Adjudication):
    system: Literal["emergence"] = Field(title="System name")
    result: int | None = Field(title="Outcome 1-9 (None while a Wyrd base awaits its re-roll)")
    label: str | None = Field(title="Worst ... Best")
    wyrdness: int = Field(title="Number of Wyrd zeros")
    wyrd: str = Field(title="Wyrd, Double Wyrd, ... or empty")
    disrupted: bool = Field(title="A modifier 0 cut the later modifiers (no re-roll)")
    base: int = Field(title="The base die as first read")
    rerolls: list[int] = Field(default_factory=list, title="Re-rolls used")


def best(values: Sequence[int], direction: str) -> int:
    return max(values) if direction == "+" else min(values)


def resolve(dice: Sequence[DieReading], opts: EmergenceOptions) -> EmergenceAdjudication:
    if not dice:
        raise RulesError("an Emergence roll needs at least the base d10")
    if len(dice) > MAX_DICE:
        raise LimitError(f"{len(dice)} dice is over the cap of {MAX_DICE}")
    bad = [d for d in dice if d.type is not DieType.d10]
    if bad:
        raise RulesError(f"Emergence rolls d10s only, not {bad[0].type.value}")
    base, mods = dice[0].value, [d.value for d in dice[1:]]
    fate: list[tuple[str | None, str | None]] = [("base", None)] + [("modifier", None)] * len(mods)
    steps = [f"Base {base}; modifiers {', '.join(map(str, mods)) or 'none'} ({'highest' if opts.direction == '+' else 'lowest'} counts)."]
    wyrdness, disrupted = 0, False
    kept = list(range(len(mods)))  # indices of modifiers still counted
    if base != 0:
        if opts.rerolls:
            raise RulesError("re-rolls are only made when the base is 0")
        for i, m in enumerate(mods):
            if m == 0:
                disrupted = True
                kept = kept[:i]
                fate[1 + i] = ("modifier", "a modifier 0: disrupted")
                for j in range(i + 1, len(mods)):
                    fate[1 + j] = ("modifier", "after a modifier 0: disrupted")
                steps.append(f"Modifier {i + 1} is 0: it and every later modifier are ignored (disrupted, no re-roll).")
                break
        value = base
    else:
        wyrdness = 1
        steps.append("The base is 0: a Wyrd result.")
        if kept:
            last = kept.pop()
            fate[1 + last] = ("modifier", "the last modifier is dropped on a Wyrd base")
            steps.append(f"The last modifier ({mods[last]}) is dropped.")
        for pos, i in enumerate(list(kept)):
            if mods[i] == 0:
                wyrdness += 1
                fate[1 + i] = ("modifier", "a modifier 0 on a Wyrd base: one more Wyrdness")
                for j in kept[pos + 1:]:
                    fate[1 + j] = ("modifier", "after a modifier 0: ignored")
                kept = kept[:pos]
                steps.append(f"Modifier {i + 1} is 0: one more Wyrdness, and later modifiers are ignored.")
                break
        value = None
        used: list[int] = []
        for r in opts.rerolls:
            if value is not None:
                raise RulesError(f"more re-rolls than needed: the re-roll {value} already ended the Wyrd")
            used.append(r)
            if r == 0:
                wyrdness += 1
                msg = "Re-roll 0: one more Wyrdness"
                if kept:
                    gone = kept.pop()
                    fate[1 + gone] = ("modifier", "dropped by a re-rolled 0")
                    msg += f", and modifier {gone + 1} ({mods[gone]}) is dropped"
                steps.append(msg + ".")
            else:
                value = r
                steps.append(f"Re-roll {r}: the new base.")
        if value is None:
            rolled = _rolled(dice, fate)
            name = wyrd_name(wyrdness)
            return EmergenceAdjudication(
                system=NAME, outcome="reroll", dice=rolled, options=opts.model_dump(), result=None, label=None,
                wyrdness=wyrdness, wyrd=name, disrupted=disrupted, base=base, rerolls=list(opts.rerolls),
                explanation=steps + ["Re-roll the base die to find the outcome."],
                summary=f"{name}: re-roll the base die to find the outcome.",
            )
    counted = [value] + [mods[i] for i in kept]
    result = best(counted, opts.direction)
    label = LABELS[result]
    if len(counted) > 1:
        steps.append(f"Counted: {', '.join(map(str, counted))}; the {'highest' if opts.direction == '+' else 'lowest'} is {result}.")
    name = wyrd_name(wyrdness)
    steps.append(f"Outcome {result}: {(name + ' ') if name else ''}{label}.")
    rolled = _rolled(dice, fate)
    summary = f"{(name + ' ') if name else ''}{label} ({result})" + ("; a modifier 0 disrupted the roll" if disrupted else "") + "."
    return EmergenceAdjudication(
        system=NAME, outcome=label.lower(), dice=rolled, explanation=steps, summary=summary[0].upper() + summary[1:],
        options=opts.model_dump(), result=result, label=label, wyrdness=wyrdness, wyrd=name, disrupted=disrupted,
        base=base, rerolls=list(opts.rerolls),
    )


def _rolled(dice, fate) -> list[RolledDie]:
    return [RolledDie(**d.model_dump(), role=role, is_ignored=why is not None, why=why) for d, (role, why) in zip(dice, fate)]


def _best_of(n: int, direction: str) -> list[Fraction]:
    """P(best of n uniform 1-9 = v) for v = 1..9 (index v-1)."""
    if direction == "+":
        return [Fraction(v ** n - (v - 1) ** n, 9 ** n) for v in range(1, 10)]
    return [Fraction((10 - v) ** n - (9 - v) ** n, 9 ** n) for v in range(1, 10)]


def distribution(k: int, direction: str) -> tuple[list[Fraction], Fraction, Fraction]:
    """Exact P(result = v) with k modifiers, plus P(Wyrd) and P(disrupted).

    The re-roll chain is unbounded, but no cap is needed: given how many modifiers remain
    (a prefix of non-zero faces, each uniform on 1-9), each re-rolled 0 drops one more, and once
    none remain further zeros change only the Wyrdness, so the tail sums in closed form.
    """
    tenth, nine = Fraction(1, 10), Fraction(9, 10)
    dist = [Fraction(0)] * 9
    disrupted = Fraction(0)
    # Base 1-9 (9/10): the kept modifiers are those before the first 0.
    for length in range(k + 1):
        p_len = nine ** length * (tenth if length < k else 1)
        if length < k:
            disrupted += nine * p_len
        for v, q in enumerate(_best_of(length + 1, direction)):
            dist[v] += nine * p_len * q
    # Base 0 (1/10): drop the last modifier, truncate at the first 0, then re-roll.
    m = max(k - 1, 0)
    for length in range(m + 1):
        p_len = nine ** length * (tenth if length < m else 1)
        # j zeros on re-roll before a 1-9: probability tenth^j * 9/10; j >= length leaves no modifiers.
        for j in range(length + 1):
            p_j = tenth ** j * nine if j < length else tenth ** length  # the tail j >= length, summed
            left = length - j
            for v, q in enumerate(_best_of(left + 1, direction)):
                dist[v] += tenth * p_len * p_j * q
    return dist, tenth, disrupted


def odds(pool: Sequence[DieType], opts: EmergenceOptions) -> Odds:
    check_pool_size(len(pool))
    if not pool or any(k is not DieType.d10 for k in pool):
        raise RulesError("Emergence rolls d10s only (the base and any modifiers)")
    dist, wyrd, disrupted = distribution(len(pool) - 1, opts.direction)
    by_label: dict[str, Fraction] = {o: Fraction(0) for o in OUTCOMES}
    for v, p in enumerate(dist, start=1):
        by_label[LABELS[v].lower()] += p
    outcomes = [entry(o, by_label[o]) for o in OUTCOMES]
    m = max(len(pool) - 2, 0)
    double = Fraction(1, 10) * (1 - Fraction(9, 10) ** m * Fraction(9, 10))
    events = [entry("wyrd", wyrd), entry("double wyrd or more", double), entry("disrupted", disrupted)]
    good = by_label["best"] + by_label["almost the best"] + by_label["good"]
    summary = (f"Base and {len(pool) - 1} modifier{'s' if len(pool) != 2 else ''} ({opts.direction}): Good or better "
               f"{percent(good)}, Wyrd {percent(wyrd)}.")
    return Odds(system=NAME, pool=["d10"] * len(pool), options=opts.model_dump(), outcomes=outcomes, events=events, summary=summary)


def default_pool(opts: EmergenceOptions) -> list[DieType]:
    return [DieType.d10]


def follow_up(roll: Roll, options: Mapping[str, Any]) -> FollowUp | None:
    """A Wyrd base not yet re-rolled to a face waits for its re-roll."""
    if roll.adjudication is None or roll.adjudication.outcome != "reroll":
        return None
    own = len(roll.dice) - len(roll.options.get("rerolls", []))
    return FollowUp.of(roll, "reroll", own=own, joins=roll.follows or roll.id)


def join(follow: FollowUp, dice: Sequence[DieReading], options: Mapping[str, Any]) -> Join | None:
    """A single d10 thrown after a Wyrd base is its re-roll: the roll is adjudicated again with it."""
    if len(dice) != 1 or dice[0].type is not DieType.d10:
        return None
    return Join({**follow.options, "rerolls": list(follow.options.get("rerolls", [])) + [dice[0].value]}, again=True)


def arrange(dice: list[DieReading], base_colour: str | None) -> tuple[list[DieReading], str | None]:
    """The base die is read first; a table that names the base by its colour puts that die first."""
    if not base_colour:
        return dice, None
    base = next((d for d in dice if d.colour == base_colour), None)
    if base is None:
        return dice, f"no {base_colour} base die read — roll it with the others or correct the roll"
    return [base] + [d for d in dice if d is not base], None


SYSTEM = System(NAME, TITLE, EmergenceOptions, EmergenceAdjudication, resolve, odds, default_pool, follow_up, join,
                arrange=arrange, pool_die=DieType.d10)
