"""Percentile rolls (seed 000): d00 + d10, percentage chances, and random table look-ups.

Each rule is written once and the odds count it over every face: a pair's value (`percentile_value`),
whether a chance happens (`chance_threshold`), the value a table reads and its row (`table_value`, `lookup`).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Annotated, Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .adjudication import Adjudication, RolledDie
from .dice import DieReading, DieType
from .errors import RulesError
from .odds import Odds, entry, percent
from .options import Flag, SystemOptions
from .system import System

MAX_ROWS = 1000
TABLE_DICE = ("d4", "d6", "d8", "d10", "d12", "d20", "d100")


class PercentileOptions(SystemOptions):
    tens_colour: str | None = Field(default=None, max_length=32, title="Colour of the d10 read as tens (two plain d10s)")


class ChanceOptions(PercentileOptions):
    percent: int = Field(default=50, ge=0, le=100, title="Chance in percent")


class TableRow(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    low: int = Field(ge=0, le=100, title="Lowest roll")
    high: int = Field(ge=0, le=100, title="Highest roll")
    text: str = Field(max_length=2000, title="The result")


class TableOptions(PercentileOptions):
    die: Annotated[str, Flag(hidden=True)] = Field(default="d6", title="The die named in the first column header")
    title: Annotated[str, Flag(hidden=True)] = Field(default="", max_length=200, title="Table title")
    rows: Annotated[list[TableRow], Flag(name="table", metavar="FILE", reads_file=True, convert=lambda text: parse_table_text(text))] = Field(default_factory=list, max_length=MAX_ROWS, title="Rows: a value or range and a result")

    @model_validator(mode="after")
    def _covers(self):
        if self.die not in TABLE_DICE:
            raise ValueError(f"a table die is one of {', '.join(TABLE_DICE)}, not {self.die!r}")
        seen: dict[int, int] = {}
        for i, r in enumerate(self.rows):
            if r.low > r.high:
                raise ValueError(f"row {i + 1}: range {r.low}-{r.high} runs backwards")
            for v in range(r.low, r.high + 1):
                if v in seen:
                    raise ValueError(f"rows {seen[v] + 1} and {i + 1} both cover {v}")
                seen[v] = i
        return self


class PercentileAdjudication(Adjudication):
    system: Literal["percentile"] = Field(title="System name")
    result: int = Field(title="Percentile 0-99 (00 and 0 make 0)")
    tens: int = Field(title="Tens die")
    ones: int = Field(title="Ones die")


class ChanceAdjudication(PercentileAdjudication):
    system: Literal["chance"] = Field(title="System name")
    percent: int = Field(title="Chance in percent")
    threshold: int = Field(title="Roll at least this (100 - percent)")
    happens: bool = Field(title="The event happens")


class TableAdjudication(Adjudication):
    system: Literal["table"] = Field(title="System name")
    result: int = Field(title="The roll looked up")
    row: int | None = Field(title="Row number (1-based), None when no row matches")
    text: str | None = Field(title="The row's result")


def percentile_pair(dice: Sequence[DieReading], tens_colour: str | None) -> tuple[DieReading, DieReading]:
    """(tens, ones) from a d00 + d10 or two d10s with the tens die named by colour."""
    if len(dice) != 2:
        raise RulesError(f"a percentile roll takes two dice (d00 + d10, or two d10), read {len(dice)}")
    bad = [d for d in dice if d.type not in (DieType.d00, DieType.d10)]
    if bad:
        raise RulesError(f"a percentile roll uses a d00 and a d10, not {bad[0].type.value}")
    d00 = [d for d in dice if d.type is DieType.d00]
    if len(d00) == 2:
        raise RulesError("two d00 dice: a percentile roll takes one d00 and one d10")
    if d00:
        ones = next(d for d in dice if d.type is DieType.d10)
        return d00[0], ones
    if not tens_colour:
        raise RulesError("two plain d10s: name the tens die's colour (tens_colour)")
    tens = [d for d in dice if d.colour == tens_colour.strip().lower()]
    if len(tens) != 1:
        raise RulesError(f"need exactly one d10 coloured {tens_colour!r} as the tens die, found {len(tens)}")
    ones = next(d for d in dice if d is not tens[0])
    return tens[0], ones


def percentile_value(tens: DieReading, ones: DieReading) -> int:
    t = tens.value if tens.type is DieType.d00 else tens.value * 10
    return t + ones.value


def _pair_dice(dice, tens, ones) -> list[RolledDie]:
    return [RolledDie(**d.model_dump(), role="tens" if d is tens else "ones",
                      effective=(d.value * 10 if d is tens and d.type is DieType.d10 else None)) for d in dice]


def resolve_percentile(dice: Sequence[DieReading], opts: PercentileOptions) -> PercentileAdjudication:
    tens, ones = percentile_pair(dice, opts.tens_colour)
    v = percentile_value(tens, ones)
    tv = v - ones.value
    steps = [f"Tens {tv:02d} + ones {ones.value} = {v}."]
    if v == 0:
        steps.append("00 and 0 make 0 (a face printed 100 reads as 0).")
    return PercentileAdjudication(system="percentile", outcome=str(v), dice=_pair_dice(dice, tens, ones),
                                  explanation=steps, summary=f"Percentile roll {v}.", options=opts.model_dump(),
                                  result=v, tens=tv, ones=ones.value)


def chance_threshold(percent: int) -> int:
    """A chance of `percent` % happens on this percentile roll or higher (of 0-99)."""
    return 100 - percent


def resolve_chance(dice: Sequence[DieReading], opts: ChanceOptions) -> ChanceAdjudication:
    tens, ones = percentile_pair(dice, opts.tens_colour)
    v = percentile_value(tens, ones)
    threshold = chance_threshold(opts.percent)
    happens = v >= threshold
    outcome = "success" if happens else "failure"
    steps = [f"Tens {v - ones.value:02d} + ones {ones.value} = {v}.",
             f"A {opts.percent}% chance happens on {threshold} or higher: {v} {'does' if happens else 'does not'}."]
    return ChanceAdjudication(system="chance", outcome=outcome, dice=_pair_dice(dice, tens, ones), explanation=steps,
                              summary=f"{'It happens' if happens else 'It does not happen'}: rolled {v} against {threshold} or higher for {opts.percent}%.",
                              options=opts.model_dump(), result=v, tens=v - ones.value, ones=ones.value,
                              percent=opts.percent, threshold=threshold, happens=happens)


def table_value(rolled: int, opts: TableOptions) -> int:
    """The value a table reads for a rolled face: a zero is 0 if a row covers 0, else the top of
    the die (00 + 0 is 100 on a 1-100 table, a d10 0 is 10). Resolve and odds both use this."""
    covered = {v for r in opts.rows for v in range(r.low, r.high + 1)}
    if rolled != 0 or 0 in covered:
        return rolled
    if opts.die == "d100":
        return 100 if 100 in covered else 0
    return 10 if opts.die == "d10" else rolled


def table_roll(dice: Sequence[DieReading], opts: TableOptions) -> tuple[int, list[RolledDie]]:
    if opts.die == "d100":
        tens, ones = percentile_pair(dice, opts.tens_colour)
        return table_value(percentile_value(tens, ones), opts), _pair_dice(dice, tens, ones)
    if len(dice) != 1 or dice[0].type.value != opts.die:
        raise RulesError(f"this table is rolled with one {opts.die}, read {', '.join(d.type.value for d in dice) or 'nothing'}")
    d = dice[0]
    v = table_value(d.value, opts)
    return v, [RolledDie(**d.model_dump(), role="table", effective=v if v != d.value else None)]


def lookup(rows: Sequence[TableRow], value: int) -> int | None:
    for i, r in enumerate(rows):
        if r.low <= value <= r.high:
            return i
    return None


def resolve_table(dice: Sequence[DieReading], opts: TableOptions) -> TableAdjudication:
    if not opts.rows:
        raise RulesError("the table has no rows")
    v, rolled = table_roll(dice, opts)
    i = lookup(opts.rows, v)
    name = opts.title or "the table"
    if i is None:
        return TableAdjudication(system="table", outcome="no row", dice=rolled, options=opts.model_dump(),
                                 explanation=[f"Rolled {v} on {opts.die}.", f"No row of {name} covers {v}."],
                                 summary=f"Rolled {v}: no row of {name} covers it.", result=v, row=None, text=None)
    r = opts.rows[i]
    span = str(r.low) if r.low == r.high else f"{r.low}-{r.high}"
    return TableAdjudication(system="table", outcome="found", dice=rolled, options=opts.model_dump(),
                             explanation=[f"Rolled {v} on {opts.die}.", f"Row {i + 1} ({span}): {r.text}"],
                             summary=f"Rolled {v}: {r.text}", result=v, row=i + 1, text=r.text)


def _pair_pool(pool: Sequence[DieType]) -> None:
    if sorted(k.value for k in pool) not in ([], ["d00", "d10"], ["d10", "d10"]):
        raise RulesError("a percentile roll takes a d00 and a d10 (or two d10)")


def _every_pair() -> list[int]:
    """The value of every face pair of a d00 and a d10, each as likely."""
    return [percentile_value(DieReading(type=DieType.d00, value=t), DieReading(type=DieType.d10, value=o))
            for t in DieType.d00.faces for o in DieType.d10.faces]


def odds_percentile(pool: Sequence[DieType], opts: PercentileOptions) -> Odds:
    _pair_pool(pool)
    values = _every_pair()
    outcomes = [entry(f"{lo:02d}-{lo + 9:02d}", Fraction(sum(lo <= v <= lo + 9 for v in values), len(values)))
                for lo in range(0, 100, 10)]
    return Odds(system="percentile", pool=["d00", "d10"], options=opts.model_dump(), outcomes=outcomes,
                summary="Every result from 00 to 99 is equally likely: 1 in 100 each.")


def odds_chance(pool: Sequence[DieType], opts: ChanceOptions) -> Odds:
    _pair_pool(pool)
    values = _every_pair()
    p = Fraction(sum(v >= chance_threshold(opts.percent) for v in values), len(values))
    return Odds(system="chance", pool=["d00", "d10"], options=opts.model_dump(),
                outcomes=[entry("success", p), entry("failure", 1 - p)],
                summary=f"A {opts.percent}% chance: roll {100 - opts.percent} or higher, {percent(p)}.")


def odds_table(pool: Sequence[DieType], opts: TableOptions) -> Odds:
    # The faces as they are rolled (a d100 roll is 0-99, a d10 shows 0-9), read as resolve reads them.
    faces = {"d100": range(100), "d10": range(10)}.get(opts.die) or range(1, int(opts.die[1:]) + 1)
    counts: dict[str, Fraction] = {}
    names: list[str] = []
    for rolled in faces:
        i = lookup(opts.rows, table_value(rolled, opts))
        name = f"{i + 1}: {opts.rows[i].text}"[:120] if i is not None else "no row"
        if name not in counts:
            names.append(name)
            counts[name] = Fraction(0)
        counts[name] += Fraction(1, len(faces))
    outcomes = [entry(n, counts[n]) for n in names]
    return Odds(system="table", pool=[opts.die], options=opts.model_dump(), outcomes=outcomes,
                summary=f"{len(opts.rows)} rows on a {opts.die}; the likeliest row has {percent(max(counts.values()))}.")


def default_pool(opts) -> list[DieType]:
    return [DieType.d00, DieType.d10]


def default_table_pool(opts: TableOptions) -> list[DieType]:
    return [DieType.d00, DieType.d10] if opts.die == "d100" else [DieType(opts.die)]


_RANGE = re.compile(r"^\s*(\d+)\s*(?:[-–—]|to)?\s*(\d+)?\s*$")


def parse_range(text: str) -> tuple[int, int]:
    """'3' → (3, 3); '1-2', '01–05', '96-00' (00 read as 100)."""
    shown = repr(text) if len(text) <= 40 else repr(text[:30]) + "…"
    if text.strip().endswith("+"):
        # "5+" means 5 and up, and the top depends on the die, which this row does not know.
        raise RulesError(f"bad table range {shown}: write the range up to the die's top, like 5-6 or 96-00")
    m = _RANGE.match(text)
    if not m:
        raise RulesError(f"bad table range {shown}: write a number or a range like 1-3")
    if any(g is not None and len(g) > 3 for g in m.groups()):  # int() of thousands of digits would fail
        raise RulesError(f"bad table range {shown}: no table die has a face of more than 3 digits")
    lo = int(m.group(1))
    hi = int(m.group(2)) if m.group(2) is not None else lo
    if m.group(2) is not None and m.group(2).strip() in ("00", "000") and hi == 0:
        hi = 100
    if m.group(1).strip() == "00" and m.group(2) is None:
        lo = hi = 100
    return lo, hi


def parse_table_text(text: str) -> dict[str, Any]:
    """A table: optional '# Title', then a header row whose first cell is a die (d6, d100, d%),
    then rows `value-or-range | result`. Cells split on '|', tabs or commas (the header decides)."""
    title = ""
    lines = [ln.rstrip() for ln in text.splitlines()]
    body: list[str] = []
    for ln in lines:
        s = ln.strip()
        if not s:
            continue
        if s.startswith("#") and not body:
            title = s.lstrip("#").strip()
            continue
        body.append(s)
    if not body:
        raise RulesError("the table file has no header row")
    head = body[0]
    sep = "|" if "|" in head else "\t" if "\t" in head else ","

    def cells(s: str) -> list[str]:
        if sep == "|":
            s = s.strip().strip("|")
        return [c.strip() for c in s.split(sep)]

    die = cells(head)[0].lower().replace("d%", "d100")
    if die.startswith("1d"):
        die = die[1:]
    if die not in TABLE_DICE:
        raise RulesError(f"the first column header must be a die ({', '.join(TABLE_DICE)}), not {cells(head)[0]!r}")
    rows = []
    for s in body[1:]:
        cs = cells(s)
        if all(set(c) <= set("-:= ") for c in cs):
            continue  # a markdown separator row
        if len(cs) < 2:
            raise RulesError(f"table row {s!r} needs a value and a result")
        lo, hi = parse_range(cs[0])
        rows.append({"low": lo, "high": hi, "text": " | ".join(c for c in cs[1:] if c)})
    return {"die": die, "title": title, "rows": rows}


PERCENTILE = System("percentile", "Percentile roll (d00 + d10)", PercentileOptions, PercentileAdjudication,
                    resolve_percentile, odds_percentile, default_pool)
CHANCE = System("chance", "Percentage chance", ChanceOptions, ChanceAdjudication, resolve_chance, odds_chance,
                default_pool)
TABLE = System("table", "Random table look-up", TableOptions, TableAdjudication, resolve_table, odds_table,
               default_table_pool)
