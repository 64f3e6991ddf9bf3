"""Turn voted readings into Roll objects: order, percentile pairing, uncertainty, follow-ups.

`RollSession` is a small, pure state machine: feed it the dice of each settled throw, get a
Roll back. It remembers just enough of the previous roll to join follow-up throws to it:
- contingency: a single die thrown right after a check is its luck die (re-adjudicate the
  original with the `luck` option; the new roll `follows` the first);
- emergence: the base die is the first in reading order, or the die of a named colour; after a
  Wyrd result, the next single d10 throws are base re-rolls;
- futile-kingdoms: after a DR of ±5, the next red+white pair adds (the `carry` option);
- contingency-action resource rolls: the pool shrinks roll after roll (`pool_size` is the
  previous roll's `remaining`, so a throw of the wrong number of dice is caught);
- house-games extended or teamwork rolls: each throw adds its successes to the last
  (`prior_successes` is the previous roll's `total_successes`);
- futile-kingdoms contests: one participant's throw after another (`thrown` holds the earlier
  participants' dice); the last participant's throw decides the contest and a new contest begins.
"""

from __future__ import annotations

import math
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Literal, Mapping, Sequence

from dicecam.mechanics.dice import DieReading, DieType, reading_order
from dicecam.mechanics.errors import DicecamError
from dicecam.mechanics.roll import Roll

Resolver = Callable[[str, Sequence[DieReading], Mapping[str, Any] | None], Any]


def default_resolver(system: str, dice: Sequence[DieReading], options: Mapping[str, Any] | None):
    from dicecam.mechanics.registry import resolve

    return resolve(system, dice, options)


def _centre(d: DieReading) -> tuple[float, float]:
    b = d.box
    return ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2) if b else (0.0, 0.0)


def pair_percentile(dice: Sequence[DieReading]) -> list[DieReading]:
    """Put each d00 right before its nearest d10 (by box centre) so the resolver reads the pairs
    in order. Pairing is greedy in reading order (each d00 takes the nearest d10 still free).
    After the pairs: the unpaired d10s, then the other dice, each in reading order."""
    ordered = reading_order(dice)
    tens = [d for d in ordered if d.type is DieType.d00]
    ones = [d for d in ordered if d.type is DieType.d10]
    rest = [d for d in ordered if d.type not in (DieType.d00, DieType.d10)]
    out: list[DieReading] = []
    for t in tens:
        if not ones:
            out.append(t)
            continue
        tc = _centre(t)
        j = min(range(len(ones)), key=lambda i: math.dist(tc, _centre(ones[i])))
        out += [t, ones.pop(j)]
    return out + ones + rest


def describe(die: DieReading, dice: Sequence[DieReading], width: float | None = None) -> str:
    """'the d20 at left' — where a die sits, for a re-roll request."""
    where = ""
    if die.box is not None:
        xs = [_centre(d)[0] for d in dice if d.box is not None]
        lo, hi = min(xs), max(xs)
        x = _centre(die)[0]
        if len(xs) > 1 and hi > lo:
            f = (x - lo) / (hi - lo)
            where = " at left" if f < 0.34 else " at right" if f > 0.66 else " in the middle"
    colour = f"{die.colour} " if die.colour else ""
    return f"the {colour}{die.type.value}{where}"


def uncertain_reason(dice: Sequence[DieReading]) -> str | None:
    for d in dice:
        if d.cocked:
            return f"{describe(d, dice)} is cocked — re-roll it"
    for d in dice:
        if d.uncertain:
            return f"{describe(d, dice)} could not be read with confidence — check it or re-roll"
    return None


@dataclass(frozen=True)
class FollowUp:
    """What the next throw may continue: `kind` of follow-up, the roll it joins (`id`), that roll's
    options, its original dice and the follow-up dice thrown so far (`extra`)."""

    kind: Literal["luck", "reroll", "explode", "pool", "extend", "contest"]
    id: str
    options: dict[str, Any]
    dice: list[DieReading]
    extra: list[DieReading]
    carry: int = 0  # explode: the sum of the earlier DRs; extend: the successes so far
    remaining: int | None = None  # pool: the d8s left in the pool


class RollSession:
    """Assemble rolls for one system; remembers the previous roll for follow-ups."""

    def __init__(self, system: str, options: Mapping[str, Any] | None = None, *, resolver: Resolver | None = None,
                 source: str = "camera", base_colour: str | None = None) -> None:
        self.resolver = resolver or default_resolver
        self.source = source
        self.base_colour = base_colour.strip().lower() if base_colour else None
        self.configure(system, options)

    def configure(self, system: str, options: Mapping[str, Any] | None = None) -> None:
        self.system = system
        self.options: dict[str, Any] = dict(options or {})
        self.last: Roll | None = None
        self._follow: FollowUp | None = None

    def _resolve(self, dice: Sequence[DieReading], options: Mapping[str, Any]) -> tuple[dict | None, str | None]:
        try:
            adj = self.resolver(self.system, dice, options)
        except DicecamError as e:
            return None, str(e)
        return (adj.model_dump(mode="json") if hasattr(adj, "model_dump") else dict(adj)), None

    def _arrange(self, dice: list[DieReading]) -> tuple[list[DieReading], str | None]:
        """Put a role named by colour where the resolver expects it (Emergence reads its base first)."""
        if self.system != "emergence" or not self.base_colour:
            return dice, None
        base = next((d for d in dice if d.colour == self.base_colour), None)
        if base is None:
            return dice, f"no {self.base_colour} base die read — roll it with the others or correct the roll"
        return [base] + [d for d in dice if d is not base], None

    def _make(self, dice, options, *, frame_id, follows=None, ts=None) -> Roll:
        dice, reason = self._arrange(list(dice))
        reason = reason or uncertain_reason(dice)
        adjudication = None
        if reason is None:
            adjudication, reason = self._resolve(dice, options)
        return Roll(id=str(uuid.uuid4()), ts=ts or datetime.now(timezone.utc), source=self.source,
                    status="uncertain" if reason else "settled", reason=reason, frame_id=frame_id,
                    system=self.system, options=dict(options), dice=list(dice), adjudication=adjudication,
                    follows=follows)

    def add(self, readings: Sequence[DieReading], *, frame_id: int | None = None, ts: datetime | None = None) -> Roll | None:
        """One settled throw → one Roll (None for an empty table)."""
        if not readings:
            return None
        dice = pair_percentile(readings) if any(d.type is DieType.d00 for d in readings) else reading_order(readings)
        follow = self._follow
        roll = None
        if follow is not None and self.last is not None:
            roll = self._follow_up(follow, dice, frame_id, ts)
        if roll is not None and roll.status == "uncertain":
            # A follow-up throw with a cocked or doubtful die is thrown again: the chain stays open,
            # so the re-throw still joins the roll it belongs to (a carry or a shrunken pool kept).
            self.last = roll
            return roll
        if roll is None:
            roll = self._make(dice, self.options, frame_id=frame_id, ts=ts)
        self.last = roll
        self._follow = self._next_follow(roll)
        return roll

    # -- follow-ups -------------------------------------------------------------------------------
    def _follow_up(self, follow: FollowUp, dice, frame_id, ts) -> Roll | None:
        if follow.kind == "luck" and len(dice) == 1:
            opts = {**follow.options, "luck": f"{dice[0].type.value}:{dice[0].value}"}
            return self._make_with(follow.dice, [], list(dice), opts, frame_id, ts, follow.id)
        if follow.kind == "reroll" and len(dice) == 1 and dice[0].type is DieType.d10:
            opts = {**follow.options, "rerolls": list(follow.options.get("rerolls", [])) + [dice[0].value]}
            return self._make_with(follow.dice, follow.extra, list(dice), opts, frame_id, ts, follow.id)
        if follow.kind == "explode" and len(dice) == 2:
            opts = {**self.options, "carry": follow.carry}
            return self._make(dice, opts, frame_id=frame_id, ts=ts, follows=follow.id)
        if follow.kind == "pool":
            opts = {**self.options, "mode": "resource", "pool_size": follow.remaining}
            return self._make(dice, opts, frame_id=frame_id, ts=ts, follows=follow.id)
        if follow.kind == "extend":
            opts = {**self.options, "prior_successes": follow.carry}
            return self._make(dice, opts, frame_id=frame_id, ts=ts, follows=follow.id)
        if follow.kind == "contest":
            before = list(follow.options.get("thrown", []))
            last = Counter(d.value for d in follow.extra)
            now = Counter(d.value for d in dice)
            if all(d.value == 6 for d in follow.extra) and len(dice) > len(follow.extra) and not last - now:
                # The last participant left their sixes on the table and added dice: an explosion, theirs.
                opts = {**self.options, "thrown": before}
            else:
                opts = {**self.options, "thrown": before + ["+".join(str(d.value) for d in follow.extra)]}
            return self._make(dice, opts, frame_id=frame_id, ts=ts, follows=follow.id)
        return None

    def _make_with(self, original, earlier, new, opts, frame_id, ts, follows) -> Roll:
        """Re-adjudicate the original dice with a follow-up option; the follow-up dice (`earlier`
        ones and the `new` throw) travel in the option, not as dice, and the new one is
        uncertain-checked too. The Roll lists every die: original, earlier follow-ups, new."""
        reason = uncertain_reason(new)
        roll = self._make(original, opts, frame_id=frame_id, ts=ts, follows=follows)
        if reason:
            roll = roll.model_copy(update={"status": "uncertain", "reason": reason, "adjudication": None})
        return roll.model_copy(update={"dice": list(original) + list(earlier) + list(new)})

    def _next_follow(self, roll: Roll) -> FollowUp | None:
        adj = roll.adjudication
        if roll.status != "settled" or not adj:
            return None
        original = self._original_dice(roll)

        def follow(kind, **kw) -> FollowUp:
            fields = dict(id=roll.follows or roll.id, options=roll.options, dice=original,
                          extra=list(roll.dice[len(original):]))
            return FollowUp(kind=kind, **{**fields, **kw})

        if self.system == "contingency" and "luck" not in roll.options:
            return follow("luck")
        if self.system == "emergence" and adj.get("outcome") == "reroll":  # a Wyrd base not yet re-rolled to a face
            return follow("reroll")
        if self.system == "futile-kingdoms" and adj.get("may_explode"):
            return follow("explode", id=roll.id, carry=int(roll.options.get("carry", 0)) + int(adj.get("dr", 0)))
        if self.system == "contingency-action" and self.options.get("mode") == "resource" and not adj.get("depleted"):
            return follow("pool", id=roll.id, remaining=adj.get("remaining"))
        if self.system == "house-games" and self.options.get("extended"):
            return follow("extend", id=roll.id, carry=int(adj.get("total_successes", 0)))
        if self.system == "futile-kingdoms-contest" and not adj.get("decided"):
            return follow("contest", id=roll.follows or roll.id, extra=list(roll.dice))
        return None

    def _original_dice(self, roll: Roll) -> list[DieReading]:
        n = len(roll.dice) - (len(roll.options.get("rerolls", [])) if self.system == "emergence" else 0)
        if self.system == "contingency" and "luck" in roll.options:
            n -= 1
        return list(roll.dice[:n])
