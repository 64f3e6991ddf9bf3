"""Contingency skill checks (seed 000): three dice, take the middle (or highest/lowest), luck, omens.

The rule is written once, in pieces both the verdict and the odds run: a face as it counts (`face`), the
order the dice sort in (`sort_key`), which one is the result (`pick_position`), the omens of a value
(`omens_of`) and the end of the check (`settle`: luck, target, fail by one). `check` runs them on the real
dice; `odds` runs the same pieces over every face of the three dice. Not through icepool's multiset
evaluator, as contingency-action's odds are: which die gives the result depends on its size (ties), its
place (a face modifier is given per die) and the tie order, so the pool is not a multiset of like dice;
the three dice are enumerated instead (at most 12^3 faces), equal checks grouped before the luck die.
`score` builds the numbers and each die's fate; `explain` and `summarise` turn them into words.
"""

from __future__ import annotations

from fractions import Fraction
from collections import Counter
from itertools import product
from math import prod
from typing import TYPE_CHECKING, Annotated, Any, Literal, Mapping, NamedTuple, Sequence

from pydantic import Field, field_validator

from .adjudication import Adjudication, RolledDie
from .dice import DieReading, DieType
from .errors import DiceError, RulesError
from .odds import Odds, check_pool_size, entry, percent
from .options import Flag, SystemOptions
from .follow_up import FollowUp, Join
from .system import System

if TYPE_CHECKING:
    from .roll import Roll

NAME = "contingency"
TITLE = "Contingency skill check"
SKILL_DICE = (DieType.d4, DieType.d6, DieType.d8, DieType.d10, DieType.d12)
OUTCOMES = ("success", "failure")

# The seed's "Typical Difficulty Targets": each target number's descriptor; 11 and over is Near Impossible.
DESCRIPTORS = {1: "Automatic", 2: "Very Easy", 3: "Easy", 4: "Moderate", 5: "Tricky", 6: "Hard", 7: "Difficult",
               8: "Very Difficult", 9: "Improbable", 10: "Inconceivable", 11: "Near Impossible"}
_BY_WORD = {w.lower(): n for n, w in DESCRIPTORS.items()}


def descriptor(target: int) -> str:
    """The seed's word for a target difficulty: 5 is Tricky, 11 and over Near Impossible."""
    return DESCRIPTORS[min(max(target, 1), 11)]


def target_from(value):
    """A target given as a word ("tricky", "Very Difficult", "near-impossible") is its number;
    anything else is left for the integer field to check."""
    if not isinstance(value, str) or value.strip().lstrip("+-").isdigit():
        return value
    word = " ".join(value.replace("-", " ").replace("_", " ").split()).lower()
    if word not in _BY_WORD:
        words = ", ".join(f"{w} ({n}{'+' if n == 11 else ''})" for n, w in DESCRIPTORS.items())
        raise ValueError(f"unknown difficulty {value!r}: give a number or one of {words}")
    return _BY_WORD[word]


def index_modifiers(given: list[str]) -> dict[int, int]:
    """The command line's face modifiers, `INDEX:+N` each (repeatable, summed per index), as the
    {index: modifier} map the modifiers option reads."""
    out: dict[int, int] = {}
    for m in given:
        idx, sep, n = m.partition(":")
        if not sep:
            raise RulesError(f"--modifier {m!r}: write INDEX:+N, e.g. 0:+2")
        try:
            i, add = int(idx), int(n)
        except ValueError:
            raise RulesError(f"--modifier {m!r}: the index and the modifier are whole numbers, e.g. 0:+2") from None
        out[i] = out.get(i, 0) + add
    return out


def _target_schema(schema: dict) -> None:
    # The page and the API docs offer the words too: a number, or one of the descriptors.
    number = {k: schema.pop(k) for k in ("type", "minimum", "maximum") if k in schema}
    schema["anyOf"] = [number, {"type": "string", "enum": list(DESCRIPTORS.values())}]


class ContingencyOptions(SystemOptions):
    target: Annotated[int, Flag(metavar="N|WORD", kind="text")] = Field(default=5, ge=1, le=40, title="Target difficulty (success when total ≥ target)",
                        description="A number or a word: Automatic 1, Very Easy 2, Easy 3, Moderate 4, Tricky 5, "
                                    "Hard 6, Difficult 7, Very Difficult 8, Improbable 9, Inconceivable 10, "
                                    "Near Impossible 11+",
                        json_schema_extra=_target_schema)
    advantage: int = Field(default=0, ge=0, le=10, title="Units of advantage")
    disadvantage: int = Field(default=0, ge=0, le=10, title="Units of disadvantage")
    modifiers: Annotated[list[int], Flag(name="modifier", metavar="INDEX:+N", repeat=True, convert=lambda given: {"modifiers": index_modifiers(given)})] = Field(
        default_factory=list, max_length=3, title="Face modifier per die, by index of the given dice"
    )
    luck: Annotated[str | None, Flag(metavar="TYPE:VALUE")] = Field(default=None, max_length=20, title="Luck die as TYPE:VALUE, e.g. d6:4")
    choose_to_fail: bool = Field(default=False, title="The player chooses to fail instead of rolling")
    tie_order: Literal["asc", "desc"] = Field(default="asc", title="Equal faces sort by die size asc or desc")
    with_luck: bool = Field(default=False, title="Odds: include spending a luck die")

    _word = field_validator("target", mode="before")(classmethod(lambda cls, v: target_from(v)))

    @field_validator("modifiers", mode="before")
    @classmethod
    def _index_map(cls, v):
        # {"0": 2, "2": -1} (the CLI's INDEX:+N) reads as a list by index.
        if isinstance(v, dict):
            out = [0, 0, 0]
            for k, n in v.items():
                i = int(k)
                if not 0 <= i <= 2:
                    raise ValueError(f"modifier index {i} is not 0, 1 or 2")
                out[i] += int(n)
            return out
        return v

    @field_validator("modifiers")
    @classmethod
    def _bounded(cls, v: list[int]) -> list[int]:
        if any(abs(n) > 20 for n in v):
            raise ValueError("a face modifier must lie within -20..+20")
        return v

    @field_validator("luck")
    @classmethod
    def _luck_die(cls, v: str | None) -> str | None:
        # A field check, not a model check, so the error names the option "luck".
        if v is not None:
            try:
                die = DieReading.parse(v)
            except DiceError as e:
                raise ValueError(str(e)) from None
            if die.type not in SKILL_DICE:
                raise ValueError(f"a luck die is a d4-d12, not {die.type.value}")
        return v

    @property
    def net(self) -> int:
        return self.advantage - self.disadvantage


class ContingencyAdjudication(Adjudication):
    system: Literal["contingency"] = Field(title="System name")
    result: int | None = Field(default=None, title="Value of the result die after modifiers")
    result_die: str | None = Field(default=None, title="Type of the result die")
    luck_die: str | None = Field(default=None, title="Luck die type (the result die's size)")
    luck_value: int | None = Field(default=None, title="Luck die face, when spent")
    total: int | None = Field(default=None, title="Result plus luck")
    target: int = Field(title="Target difficulty")
    difficulty: str = Field(title="The seed's word for the target (Tricky, Hard...)")
    success: bool = Field(title="Total reached the target")
    fail_by_one: bool = Field(title="Total is exactly target - 1")
    player_omens: int = Field(title="Player omens earned")
    gm_omens: int = Field(title="Game moderator omens earned")
    pick: Literal["middle", "highest", "lowest"] = Field(title="Which die gave the result")


def face(kind: DieType, value: int) -> int:
    """A d10's 0 counts as 10 in a skill check."""
    return 10 if kind is DieType.d10 and value == 0 else value


def omens_of(value: int) -> tuple[int, int]:
    """(player, gm) omens from one die's value after modifiers."""
    if value >= 12:
        return 3, 0
    if value >= 10:
        return 2, 0
    if value >= 8:
        return 1, 0
    if value <= 1:
        return 0, 1
    return 0, 0


class Check(NamedTuple):
    order: list[int]  # indices, lowest first
    index: int  # result die index
    result: int
    total: int
    success: bool
    fail_by_one: bool
    player: int
    gm: int


def sort_key(kind: DieType, effective: int, index: int, tie_order: str) -> tuple[int, int, int]:
    """Dice sort by value after modifiers, then by die size (ascending unless tie_order is desc)."""
    return (effective, kind.sides if tie_order == "asc" else -kind.sides, index)


def pick_position(opts: ContingencyOptions) -> int:
    """Net advantage takes the highest, net disadvantage the lowest, otherwise the middle."""
    return 2 if opts.net > 0 else 0 if opts.net < 0 else 1


def _modifiers(opts: ContingencyOptions) -> list[int]:
    """The face modifier of each of the three dice (the options may give fewer)."""
    return list(opts.modifiers) + [0] * (3 - len(opts.modifiers))


def check(kinds: Sequence[DieType], values: Sequence[int], opts: ContingencyOptions, luck: int | None = None) -> Check:
    """The rule, once: effective values → pick → luck → total → omens. `values` are raw faces."""
    mods = _modifiers(opts)
    eff = [face(k, v) + mods[i] for i, (k, v) in enumerate(zip(kinds, values))]
    keys = sorted(sort_key(kinds[i], eff[i], i, opts.tie_order) for i in range(len(eff)))
    order = [k[2] for k in keys]
    idx = order[pick_position(opts)]
    omens = [omens_of(v) for v in eff]
    return Check(order, idx, eff[idx], *settle(eff[idx], (sum(p for p, _ in omens), sum(g for _, g in omens)),
                                                luck, opts.target))


class Settled(NamedTuple):
    total: int
    success: bool
    fail_by_one: bool
    player: int
    gm: int


def settle(result: int, omens: tuple[int, int], luck: int | None, target: int) -> Settled:
    """The end of a check, on the real dice (`check`) and over every face (`odds`): the luck die added,
    the target met or missed by one, the luck die's omens added to the dice's (player, gm)."""
    total = result + (luck or 0)
    lp, lg = omens_of(luck) if luck is not None else (0, 0)
    return Settled(total, total >= target, total == target - 1, omens[0] + lp, omens[1] + lg)


def _pick_word(opts: ContingencyOptions) -> Literal["middle", "highest", "lowest"]:
    return "highest" if opts.net > 0 else "lowest" if opts.net < 0 else "middle"


def _chosen_failure(dice: Sequence[DieReading], opts: ContingencyOptions) -> ContingencyAdjudication:
    """The player chose to fail instead of rolling: the GM gains omens by the advantage the roll had."""
    gm = 3 if opts.net > 0 else 1 if opts.net < 0 else 2
    rolled = [RolledDie(**d.model_dump(), is_ignored=True, why="the player chose to fail") for d in dice]
    s = "with advantage" if opts.net > 0 else "with disadvantage" if opts.net < 0 else "with neither advantage nor disadvantage"
    return ContingencyAdjudication(
        system=NAME, outcome="failure", dice=rolled, options=opts.model_dump(), target=opts.target,
        difficulty=descriptor(opts.target), success=False,
        fail_by_one=False, player_omens=0, gm_omens=gm, pick=_pick_word(opts),
        explanation=[f"The player chose to fail a roll that would have been made {s}.",
                     f"The game moderator gains {gm} omen{'s' if gm != 1 else ''}."],
        summary=f"Failure by choice: the game moderator gains {gm} omen{'s' if gm != 1 else ''}.",
    )


class ContingencyScore(NamedTuple):
    """A scored check, before any words: the dice as read, the check, the luck die, each die kept or dropped."""

    kinds: list[DieType]
    faces: list[int]  # as read: a d10's 0 is still 0 here
    mods: list[int]  # the face modifier of each die
    check: Check
    luck: DieReading | None
    luck_value: int | None  # the luck die's face as it counts
    dice: list[RolledDie]


def _rolled(dice: Sequence[DieReading], opts: ContingencyOptions, c: Check, luck: DieReading | None,
            luck_value: int | None) -> list[RolledDie]:
    mods, pick = _modifiers(opts), _pick_word(opts)
    rolled: list[RolledDie] = []
    for i, d in enumerate(dice):
        eff = face(d.type, d.value) + mods[i]
        kept = i == c.index
        rolled.append(RolledDie(
            **d.model_dump(), role="result" if kept else "skill", is_dropped=not kept,
            why=None if kept else f"not the {pick} die", effective=eff if eff != d.value else None,
        ))
    if luck is not None:
        rolled.append(RolledDie(**luck.model_dump(), role="luck", effective=luck_value if luck_value != luck.value else None))
    return rolled


def score(dice: Sequence[DieReading], opts: ContingencyOptions) -> ContingencyScore:
    """The rule on real dice (`check`); the luck die must be the size of the result die it helps."""
    if len(dice) != 3:
        raise RulesError(f"a contingency check takes exactly 3 dice, got {len(dice)}")
    for d in dice:
        if d.type not in SKILL_DICE:
            raise RulesError(f"a contingency check uses d4-d12 dice, not {d.type.value}")
    kinds, faces = [d.type for d in dice], [d.value for d in dice]
    luck = DieReading.parse(opts.luck) if opts.luck else None
    luck_value = None
    if luck is not None:
        result_die = kinds[check(kinds, faces, opts).index]
        if luck.type is not result_die:
            raise RulesError(
                f"the luck die must be a {result_die.value} (the size of the result die), not a {luck.type.value}"
            )
        luck_value = face(luck.type, luck.value)
    c = check(kinds, faces, opts, luck_value)
    return ContingencyScore(kinds, faces, _modifiers(opts), c, luck, luck_value, _rolled(dice, opts, c, luck, luck_value))


def explain(s: ContingencyScore, opts: ContingencyOptions) -> list[str]:
    """The steps of a check, in the order the rule takes them."""
    c, kinds, mods = s.check, s.kinds, s.mods
    eff = [face(k, v) for k, v in zip(kinds, s.faces)]
    shown = [f"{k.value} {e}" + (f"{m:+d}={e + m}" if m else "") for k, e, m in zip(kinds, eff, mods)]
    steps = ["Dice after modifiers: " + ", ".join(shown) + "."]
    if any(k is DieType.d10 and v == 0 for k, v in zip(kinds, s.faces)):
        steps.append("A d10 showing 0 counts as 10.")
    net_txt = (f"net advantage {opts.net}" if opts.net > 0 else f"net disadvantage {-opts.net}" if opts.net < 0 else "no net advantage")
    steps.append(f"Sorted lowest to highest (ties by die size {'ascending' if opts.tie_order == 'asc' else 'descending'}): "
                 + ", ".join(f"{kinds[i].value}={eff[i] + mods[i]}" for i in c.order) + ".")
    steps.append(f"With {net_txt}, the {_pick_word(opts)} die is the result: {kinds[c.index].value} showing {c.result}.")
    if s.luck is not None:
        steps.append(f"Luck die {s.luck.type.value} adds {s.luck_value}: total {c.total}.")
    steps.append(f"Total {c.total} against target {opts.target} ({descriptor(opts.target)}): " + ("success." if c.success else
                 "failure by exactly one (a condition may turn it into a barely success)." if c.fail_by_one else "failure."))
    steps.append(f"Omens: {c.player} for the player, {c.gm} for the game moderator.")
    return steps


def summarise(s: ContingencyScore, opts: ContingencyOptions) -> str:
    """The check in one sentence."""
    c = s.check
    omen_txt = ""
    if c.player or c.gm:
        omen_txt = f"; {c.player} player omen{'s' if c.player != 1 else ''}, {c.gm} GM omen{'s' if c.gm != 1 else ''}"
    return (f"{'Success' if c.success else 'Failure'}: {_pick_word(opts)} die {s.kinds[c.index].value} {c.result}"
            + (f" plus luck {s.luck_value}" if s.luck_value is not None else "")
            + f" makes {c.total} against {opts.target} ({descriptor(opts.target)})"
            + (", failing by one" if c.fail_by_one else "") + omen_txt + ".")


def resolve(dice: Sequence[DieReading], opts: ContingencyOptions) -> ContingencyAdjudication:
    if opts.choose_to_fail:
        return _chosen_failure(dice, opts)
    s = score(dice, opts)
    c, kind = s.check, s.kinds[s.check.index].value
    return ContingencyAdjudication(
        system=NAME, outcome="success" if c.success else "failure", dice=s.dice, explanation=explain(s, opts),
        summary=summarise(s, opts), options=opts.model_dump(), result=c.result, result_die=kind, luck_die=kind,
        luck_value=s.luck_value, total=c.total, target=opts.target, difficulty=descriptor(opts.target),
        success=c.success, fail_by_one=c.fail_by_one, player_omens=c.player, gm_omens=c.gm, pick=_pick_word(opts),
    )


def odds(pool: Sequence[DieType], opts: ContingencyOptions) -> Odds:
    """Exact counting over the three dice (at most 12^3 faces), grouping equal checks before
    the luck die is added, so a query stays around a millisecond."""
    check_pool_size(len(pool))
    if len(pool) != 3 or any(k not in SKILL_DICE for k in pool):
        raise RulesError("contingency odds need exactly 3 dice from d4-d12")
    kinds = list(pool)
    o = opts.model_copy(update={"luck": None})
    # Per die and face: its sort key and omens, so each combination is one sort of three keys
    # (the same sort_key/pick_position/omens_of that `check` applies to real dice).
    mods = _modifiers(o)
    per_die = []
    for i, k in enumerate(kinds):
        per_die.append([(sort_key(k, face(k, v) + mods[i], i, o.tie_order), omens_of(face(k, v) + mods[i]))
                        for v in k.faces])
    pos = pick_position(o)
    groups: Counter = Counter()
    for (ka, oa), (kb, ob), (kc, oc) in product(*per_die):
        chosen = sorted((ka, kb, kc))[pos]
        groups[(kinds[chosen[2]], chosen[0], oa[0] + ob[0] + oc[0], oa[1] + ob[1] + oc[1])] += 1
    denom = prod(k.sides for k in kinds)
    tally: Counter = Counter()
    for (kind, result, player, gm), n in groups.items():
        lucks = [face(kind, v) for v in kind.faces] if opts.with_luck else [None]
        scale = kind.sides if opts.with_luck else 1
        for luck in lucks:
            end = settle(result, (player, gm), luck, o.target)
            tally[(end.success, end.fail_by_one, end.player > 0, end.gm > 0)] += Fraction(n, denom * scale)
    succ = sum((p for k, p in tally.items() if k[0]), Fraction(0))
    outcomes = [entry("success", succ), entry("failure", 1 - succ)]
    events = [entry(name, sum((p for k, p in tally.items() if k[i]), Fraction(0)))
              for i, name in ((1, "fail by one"), (2, "player omen"), (3, "gm omen"))]
    desc = " ".join(k.value for k in kinds)
    summary = (f"Success chance {percent(succ)} ({outcomes[0].fraction}) for {desc} against {opts.target} "
               f"({descriptor(opts.target)})"
               f", taking the {_pick_word(opts)} die" + (" and spending luck" if opts.with_luck else "") + ".")
    return Odds(system=NAME, pool=[k.value for k in kinds], options=opts.model_dump(), outcomes=outcomes,
                events=events, summary=summary)


def default_pool(opts: ContingencyOptions) -> list[DieType]:
    return [DieType.d6, DieType.d8, DieType.d10]


def follow_up(roll: Roll, options: Mapping[str, Any]) -> FollowUp | None:
    """A check not yet helped by luck waits for its luck die (seed: "roll a Luck Die of the same type")."""
    if roll.options.get("luck"):
        return None
    return FollowUp.of(roll, "luck", joins=roll.follows or roll.id)


def join(follow: FollowUp, dice: Sequence[DieReading], options: Mapping[str, Any]) -> Join | None:
    """A single die thrown after a check is its luck die: the check is adjudicated again with it."""
    if len(dice) != 1:
        return None
    return Join({**follow.options, "luck": f"{dice[0].type.value}:{dice[0].value}"}, again=True)


SYSTEM = System(NAME, TITLE, ContingencyOptions, ContingencyAdjudication, resolve, odds, default_pool, follow_up, join)
