"""One rule system as the rest of dicecam sees it: names, options, verdict type, odds, follow-ups, roles.

Each system module builds its `System` next to its rules; the registry lists them. Everything the
camera session, the command line and the server need to know about a system is asked of this record,
so adding a system touches mechanics/ only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from pydantic import BaseModel

from .adjudication import Adjudication
from .dice import DieReading, DieType, parse_type
from .errors import LimitError
from .follow_up import After, FollowUp, Join, Joiner
from .odds import Odds, check_pool_size
from .options import CliFlag, SystemOptions, cli_flags, validate_options

# No system reads more dice than this in one roll; the systems' own caps are tighter.
MAX_RESOLVE_DICE = 100

# Arranges a throw's dice for the resolver by their roles (e.g. the base die named by its colour first):
# (dice, colour of the base die or None) -> (dice, or the reason the roll cannot be read).
Arranger = Callable[[list[DieReading], str | None], tuple[list[DieReading], str | None]]


def _as_read(dice: list[DieReading], base_colour: str | None) -> tuple[list[DieReading], str | None]:
    return dice, None


@dataclass(frozen=True)
class System:
    name: str
    title: str
    Options: type[SystemOptions]
    Adjudication: type[Adjudication]
    _resolve: Callable[[Sequence[DieReading], Any], Adjudication]
    _odds: Callable[[Sequence[DieType], Any], Odds]
    _default_pool: Callable[[Any], list[DieType]]
    _follow_up: After | None = None  # what may join a settled roll
    _join: Joiner | None = None  # how a throw joins it
    arrange: Arranger = _as_read
    pool_die: DieType | None = None  # the die of `odds --dice N`
    added_dice: Mapping[str, DieType] = field(default_factory=dict)  # odds flags adding dice of a role: --pressure N

    def options(self, options: Mapping[str, Any] | BaseModel | None = None) -> SystemOptions:
        return validate_options(self.Options, options)

    def resolve(self, dice: Sequence[DieReading], options: SystemOptions | Mapping[str, Any] | None = None) -> Adjudication:
        if len(dice) > MAX_RESOLVE_DICE:
            raise LimitError(f"{len(dice)} dice is over the cap of {MAX_RESOLVE_DICE} for one roll")
        return self._resolve(list(dice), self.options(options))

    def odds(self, pool: Sequence[DieType | str], options: SystemOptions | Mapping[str, Any] | None = None) -> Odds:
        check_pool_size(len(pool))
        kinds = [k if isinstance(k, DieType) else parse_type(str(k)) for k in pool]
        return self._odds(kinds, self.options(options))

    def default_pool(self, options: SystemOptions | Mapping[str, Any] | None = None) -> list[DieType]:
        return self._default_pool(self.options(options))

    def follow_up(self, roll: Any, options: Mapping[str, Any]) -> FollowUp | None:
        """What the next throw may continue after `roll` settled (None: the next throw is a new roll)."""
        return self._follow_up(roll, options) if self._follow_up is not None else None

    def join(self, follow: FollowUp, dice: Sequence[DieReading], options: Mapping[str, Any]) -> Join | None:
        """How `dice` join the roll `follow` continues (None: they are a new roll)."""
        return self._join(follow, dice, options) if self._join is not None else None

    def flags(self) -> list[CliFlag]:
        return cli_flags(self.Options)
