"""Turn voted readings into Roll objects: order, percentile pairing, uncertainty, follow-ups.

`RollSession` is the one place a Roll is built, whatever the dice came from (the camera, an
uploaded photo, a roll entered by hand, a correction): feed it the dice of each throw, get a Roll
back, with the same uncertainty checks for every source. It remembers just enough of the previous
roll to join a follow-up throw to it; which throws may follow and how they join is the system's
rule (mechanics/follow_up.py: a luck die, a Wyrd re-roll, an exploding DR, a shrinking resource
pool, a running total of successes, a contest's next participant), so nothing here names a system.
"""

from __future__ import annotations

import math
import threading
import uuid
from datetime import datetime, timezone
from typing import Any, Callable, Mapping, Sequence

from dicecam.mechanics import registry
from dicecam.mechanics.adjudication import Adjudication
from dicecam.mechanics.dice import DieReading, DieType, reading_order
from dicecam.mechanics.errors import DicecamError
from dicecam.mechanics.follow_up import FollowUp, Join
from dicecam.mechanics.roll import Roll, RollSource
from dicecam.mechanics.system import System

from .boxes import centre

Resolver = Callable[[str, Sequence[DieReading], Mapping[str, Any] | None], Adjudication]


def pair_percentile(dice: Sequence[DieReading]) -> list[DieReading]:
    """Put each d00 right before its nearest d10 (by box centre) so the resolver reads the pairs
    in order. Pairing is greedy in reading order (each d00 takes the nearest d10 still free).
    After the pairs: the unpaired d10s, then the other dice, each in reading order.

    When a d00 or d10 has no box (typed by hand, or a correction that changed a die's kind) there is no
    distance to measure: the dice pair in the order given, each d00 with the first free d10 after it
    (else the first free one)."""
    ordered = reading_order(dice)
    rest = [d for d in ordered if d.type not in (DieType.d00, DieType.d10)]
    percentile = [d for d in dice if d.type in (DieType.d00, DieType.d10)]
    if any(d.box is None for d in percentile):
        return _pair_as_given(percentile) + rest
    tens = [d for d in ordered if d.type is DieType.d00]
    ones = [d for d in ordered if d.type is DieType.d10]
    out: list[DieReading] = []
    for t in tens:
        if not ones:
            out.append(t)
            continue
        tc = centre(t.box)
        j = min(range(len(ones)), key=lambda i: math.dist(tc, centre(ones[i].box)))
        out += [t, ones.pop(j)]
    return out + ones + rest


def _pair_as_given(dice: list[DieReading]) -> list[DieReading]:
    free = [i for i, d in enumerate(dice) if d.type is DieType.d10]
    out: list[DieReading] = []
    for i, t in enumerate(dice):
        if t.type is not DieType.d00:
            continue
        out.append(t)
        if free:
            j = next((k for k in free if k > i), free[0])
            free.remove(j)
            out.append(dice[j])
    return out + [dice[k] for k in free]


def describe(die: DieReading, dice: Sequence[DieReading], width: float | None = None) -> str:
    """'the d20 at left' — where a die sits, for a re-roll request."""
    where = ""
    if die.box is not None:
        xs = [centre(d.box)[0] for d in dice if d.box is not None]
        lo, hi = min(xs), max(xs)
        x = centre(die.box)[0]
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
            why = f" ({d.doubt})" if d.doubt else ""
            return f"{describe(d, dice)} could not be read with confidence{why} — check it or re-roll"
    return None


def _ordered(dice: Sequence[DieReading]) -> list[DieReading]:
    """The order the resolvers read: percentile pairs first when a d00 is there, else reading order."""
    return pair_percentile(dice) if any(d.type is DieType.d00 for d in dice) else reading_order(dice)


class RollSession:
    """Assemble rolls for one system; remembers the previous roll for follow-ups.

    Thread-safe: the camera's thread and the server's requests may feed the same session, so a
    luck die typed in by hand joins the check the camera read."""

    def __init__(self, system: str, options: Mapping[str, Any] | None = None, *, resolver: Resolver | None = None,
                 source: RollSource = "camera", base_colour: str | None = None) -> None:
        self.resolver = resolver or registry.resolve
        self.source = source
        self.base_colour = base_colour.strip().lower() if base_colour else None
        self._lock = threading.RLock()
        self.configure(system, options)

    def configure(self, system: str, options: Mapping[str, Any] | None = None) -> None:
        with self._lock:
            self.system = system
            self.options: dict[str, Any] = dict(options or {})
            self.rules: System | None = registry.SYSTEMS.get(system)  # None: an unknown name, refused at resolve
            self.last: Roll | None = None
            self._follow: FollowUp | None = None

    def add(self, readings: Sequence[DieReading], *, frame_id: int | None = None, ts: datetime | None = None,
            source: RollSource | None = None, strict: bool = False) -> Roll | None:
        """One settled throw → one Roll (None for an empty table). `strict` (dice entered by hand)
        raises the resolver's error instead of making an uncertain roll of it."""
        if not readings:
            return None
        with self._lock:
            dice = _ordered(readings)
            build = _Build(self, source or self.source, frame_id, ts, strict)
            roll = None
            if self._follow is not None and self.last is not None:
                roll = self._follow_up(self._follow, dice, build)
            if roll is not None and roll.status == "uncertain":
                # A follow-up throw with a cocked or doubtful die is thrown again: the chain stays open,
                # so the re-throw still joins the roll it belongs to (a carry or a shrunken pool kept).
                self.last = roll
                return roll
            if roll is None:
                roll = build.roll(dice, self.options)
            self.last = roll
            self._follow = self._next_follow(roll)
            return roll

    def amend(self, original: Roll, dice: Sequence[DieReading], system: str, options: Mapping[str, Any]) -> Roll:
        """A correction of `original`: its dice and verdict as they should have been (strict, as typed
        by hand). When it corrects the session's last roll, follow-ups continue from the correction."""
        with self._lock:
            session = self if system == self.system else RollSession(system, options, resolver=self.resolver)
            build = _Build(session, original.source, original.frame_id, None, True)
            roll = build.roll(_ordered(dice), options, follows=original.follows, amends=original.id)
            if self.last is not None and self.last.id == original.id and session is self:
                self.last = roll
                self._follow = self._next_follow(roll)
            return roll

    # -- follow-ups -------------------------------------------------------------------------------
    def _follow_up(self, follow: FollowUp, dice: list[DieReading], build: _Build) -> Roll | None:
        join: Join | None = self.rules.join(follow, dice, self.options) if self.rules is not None else None
        if join is None:
            return None
        if not join.again:
            return build.roll(dice, join.options, follows=follow.joins)
        # The joined roll's own dice are adjudicated again; the new throw travels in the options, is
        # checked for doubt too, and is listed after the dice that joined before it.
        roll = build.roll(follow.dice, join.options, follows=follow.joins)
        reason = uncertain_reason(dice)
        if reason:
            roll = roll.model_copy(update={"status": "uncertain", "reason": reason, "adjudication": None})
        return roll.model_copy(update={"dice": list(follow.dice) + list(follow.extra) + list(dice)})

    def _next_follow(self, roll: Roll) -> FollowUp | None:
        if roll.status != "settled" or roll.adjudication is None or self.rules is None:
            return None
        return self.rules.follow_up(roll, self.options)


class _Build:
    """Builds the Rolls of one throw: its source, frame, time and strictness."""

    def __init__(self, session: RollSession, source: RollSource, frame_id: int | None, ts: datetime | None,
                 strict: bool) -> None:
        self.session, self.source, self.frame_id, self.ts, self.strict = session, source, frame_id, ts, strict

    def roll(self, dice: Sequence[DieReading], options: Mapping[str, Any], *, follows: str | None = None,
             amends: str | None = None) -> Roll:
        s = self.session
        dice, reason = (s.rules.arrange(list(dice), s.base_colour) if s.rules is not None else (list(dice), None))
        reason = reason or uncertain_reason(dice)
        adjudication = None
        if reason is None:
            try:
                adjudication = s.resolver(s.system, dice, options)
            except DicecamError as e:
                if self.strict:
                    raise
                reason = str(e)
        return Roll(id=str(uuid.uuid4()), ts=self.ts or datetime.now(timezone.utc), source=self.source,
                    status="uncertain" if reason else "settled", reason=reason, frame_id=self.frame_id,
                    system=s.system, options=dict(options), dice=list(dice), adjudication=adjudication,
                    follows=follows, amends=amends)
