"""Emergence d10 rolls (seed 003): base + modifiers, take highest/lowest, Wyrd zeros and re-rolls.

`score` runs the rule on the real dice and the re-rolls made; `explain` and `summarise` turn its result
into words. The odds cannot come from that same definition: a Wyrd base is re-rolled until it shows 1-9,
and each re-rolled 0 asks for another, so the chain has no end for an evaluator to run over (icepool's
would need a cap, and a capped chain is not exact). `distribution` sums it in closed form instead, from
the same facts the rule states (a 0 base drops the last modifier, a 0 cuts the later modifiers, each
re-rolled 0 drops one more); tests/mechanics check it against `resolve` run over every face and re-roll.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Annotated, Any, Literal, Mapping, NamedTuple, Sequence

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


class EmergenceScore(NamedTuple):
    """A scored Emergence roll, before any words: what each zero and re-roll did, and the outcome."""

    base: int
    mods: list[int]
    fate: list[tuple[str, str | None]]  # each die's role, and why it is not counted (None: counted)
    wyrdness: int
    disrupted_at: int | None  # a base of 1-9: the modifier whose 0 cut it and every later one
    dropped: int | None  # a Wyrd base: the last modifier, dropped
    zero_at: int | None  # a Wyrd base: the modifier whose 0 added a Wyrdness and cut the later ones
    rerolls: list[tuple[int, int | None]]  # each re-roll used, and the modifier a re-rolled 0 dropped
    counted: list[int]  # the base (or its re-roll) and the modifiers still counted; empty while a Wyrd waits
    result: int | None  # None while a Wyrd base waits for its re-roll


def _fates(n: int) -> list[tuple[str, str | None]]:
    return [("base", None)] + [("modifier", None)] * n


def _plain(base: int, mods: list[int]) -> tuple[list, int | None, list[int]]:
    """A base of 1-9: (fates, the modifier 0 that disrupted the roll, the faces counted)."""
    fate = _fates(len(mods))
    cut = next((i for i, m in enumerate(mods) if m == 0), None)
    if cut is None:
        return fate, None, [base] + mods
    fate[1 + cut] = ("modifier", "a modifier 0: disrupted")
    for j in range(cut + 1, len(mods)):
        fate[1 + j] = ("modifier", "after a modifier 0: disrupted")
    return fate, cut, [base] + mods[:cut]


def _wyrd(mods: list[int], rerolls: Sequence[int]) -> EmergenceScore:
    """A base of 0: the last modifier drops, a modifier 0 adds a Wyrdness, each re-rolled 0 another and
    drops one more modifier, until a re-roll of 1-9 is the new base."""
    fate, kept = _fates(len(mods)), list(range(len(mods)))
    wyrdness, dropped, zero_at = 1, None, None
    if kept:
        dropped = kept.pop()
        fate[1 + dropped] = ("modifier", "the last modifier is dropped on a Wyrd base")
    zero_at = next((i for i in kept if mods[i] == 0), None)
    if zero_at is not None:
        wyrdness += 1
        fate[1 + zero_at] = ("modifier", "a modifier 0 on a Wyrd base: one more Wyrdness")
        for j in kept[zero_at + 1:]:
            fate[1 + j] = ("modifier", "after a modifier 0: ignored")
        kept = kept[:zero_at]
    value, used = None, []
    for r in rerolls:
        if value is not None:
            raise RulesError(f"more re-rolls than needed: the re-roll {value} already ended the Wyrd")
        gone = None
        if r == 0:
            wyrdness += 1
            if kept:
                gone = kept.pop()
                fate[1 + gone] = ("modifier", "dropped by a re-rolled 0")
        else:
            value = r
        used.append((r, gone))
    counted = [] if value is None else [value] + [mods[i] for i in kept]
    return EmergenceScore(0, mods, fate, wyrdness, None, dropped, zero_at, used, counted, None)


def score(dice: Sequence[DieReading], opts: EmergenceOptions) -> EmergenceScore:
    """The rule on real dice. Its odds are summed in closed form (`distribution`): see the module's docstring."""
    if not dice:
        raise RulesError("an Emergence roll needs at least the base d10")
    if len(dice) > MAX_DICE:
        raise LimitError(f"{len(dice)} dice is over the cap of {MAX_DICE}")
    bad = [d for d in dice if d.type is not DieType.d10]
    if bad:
        raise RulesError(f"Emergence rolls d10s only, not {bad[0].type.value}")
    base, mods = dice[0].value, [d.value for d in dice[1:]]
    if base == 0:
        s = _wyrd(mods, opts.rerolls)
    else:
        if opts.rerolls:
            raise RulesError("re-rolls are only made when the base is 0")
        fate, cut, counted = _plain(base, mods)
        s = EmergenceScore(base, mods, fate, 0, cut, None, None, [], counted, None)
    return s._replace(result=best(s.counted, opts.direction)) if s.counted else s


def explain(s: EmergenceScore, opts: EmergenceOptions) -> list[str]:
    """The steps of an Emergence roll, in the order the rule takes them."""
    which = "highest" if opts.direction == "+" else "lowest"
    steps = [f"Base {s.base}; modifiers {', '.join(map(str, s.mods)) or 'none'} ({which} counts)."]
    if s.disrupted_at is not None:
        steps.append(f"Modifier {s.disrupted_at + 1} is 0: it and every later modifier are ignored (disrupted, no re-roll).")
    if s.base == 0:
        steps.append("The base is 0: a Wyrd result.")
        if s.dropped is not None:
            steps.append(f"The last modifier ({s.mods[s.dropped]}) is dropped.")
        if s.zero_at is not None:
            steps.append(f"Modifier {s.zero_at + 1} is 0: one more Wyrdness, and later modifiers are ignored.")
        for r, gone in s.rerolls:
            if r:
                steps.append(f"Re-roll {r}: the new base.")
            else:
                steps.append("Re-roll 0: one more Wyrdness"
                             + (f", and modifier {gone + 1} ({s.mods[gone]}) is dropped" if gone is not None else "") + ".")
    if s.result is None:
        return steps + ["Re-roll the base die to find the outcome."]
    if len(s.counted) > 1:
        steps.append(f"Counted: {', '.join(map(str, s.counted))}; the {which} is {s.result}.")
    name = wyrd_name(s.wyrdness)
    steps.append(f"Outcome {s.result}: {(name + ' ') if name else ''}{LABELS[s.result]}.")
    return steps


def summarise(s: EmergenceScore) -> str:
    """The roll in one sentence."""
    name = wyrd_name(s.wyrdness)
    if s.result is None:
        return f"{name}: re-roll the base die to find the outcome."
    summary = (f"{(name + ' ') if name else ''}{LABELS[s.result]} ({s.result})"
               + ("; a modifier 0 disrupted the roll" if s.disrupted_at is not None else "") + ".")
    return summary[0].upper() + summary[1:]


def resolve(dice: Sequence[DieReading], opts: EmergenceOptions) -> EmergenceAdjudication:
    s = score(dice, opts)
    label = None if s.result is None else LABELS[s.result]
    return EmergenceAdjudication(
        system=NAME, outcome="reroll" if label is None else label.lower(), dice=_rolled(dice, s.fate),
        explanation=explain(s, opts), summary=summarise(s), options=opts.model_dump(), result=s.result, label=label,
        wyrdness=s.wyrdness, wyrd=wyrd_name(s.wyrdness), disrupted=s.disrupted_at is not None, base=s.base,
        rerolls=list(opts.rerolls),
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
