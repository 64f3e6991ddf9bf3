"""Throws that continue a settled roll: what each system lets join it, and how.

After a roll settles, its system says whether the next throw may continue it (a `FollowUp`): a
Contingency check waits for its luck die, a Wyrd base for its re-roll, a ±5 deviation for the DR it
explodes into. When the next throw comes, the system says how it joins (a `Join`): either the roll's
own dice are adjudicated again with the throw folded into an option (`again`: a luck die, a re-roll),
or the throw is adjudicated on its own with options carried over (a DR sum, a shrinking pool, a
running total of successes, the dice of the contest so far).
Pure: the session (vision/assembly.py) keeps the state and builds the rolls, whatever the source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from .dice import DieReading

if TYPE_CHECKING:  # roll.py imports every system through the registry
    from .roll import Roll


@dataclass(frozen=True)
class FollowUp:
    """What the next throw may continue: the roll it joins (`joins`), that roll's options, its own dice
    and the follow-up dice thrown so far (`extra`), plus what the rule carries forward."""

    kind: str  # luck, reroll, explode, pool, extend, contest: a word for people and logs
    joins: str
    options: dict[str, Any]
    dice: list[DieReading]
    extra: list[DieReading] = field(default_factory=list)
    carry: int = 0  # explode: the sum of the earlier DRs; extend: the successes so far
    remaining: int | None = None  # pool: the dice left in the pool

    @classmethod
    def of(cls, roll: Roll, kind: str, *, own: int | None = None, joins: str | None = None, **carried: Any) -> FollowUp:
        """A follow-up of `roll`, whose first `own` dice are its own (the rest joined it earlier)."""
        own = len(roll.dice) if own is None else own
        return cls(kind=kind, joins=joins or roll.id, options=dict(roll.options), dice=list(roll.dice[:own]),
                   extra=list(roll.dice[own:]), **carried)


@dataclass(frozen=True)
class Join:
    """How a throw joins: the options to adjudicate with; `again` re-adjudicates the joined roll's own
    dice (the new dice travel in the options and are listed after them), else the throw's dice are
    adjudicated themselves and the roll `follows` the one it joins."""

    options: dict[str, Any]
    again: bool = False


# A system's follow-up rule: after(settled roll, configured options) and join(follow-up, dice, configured options).
After = Callable[["Roll", Mapping[str, Any]], FollowUp | None]
Joiner = Callable[[FollowUp, Sequence[DieReading], Mapping[str, Any]], Join | None]
