"""The rules engine's public API: every system by its CLI/API name, resolve, odds, options schema.

The server, the live pipeline and the CLI all call these; a system module stays pure and typed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from pydantic import BaseModel

from . import contingency, contingency_action, emergence, futile_contest, futile_kingdoms, house_games, percentile
from .adjudication import Adjudication
from .dice import DieReading, DieType, parse_type
from .errors import LimitError, UnknownSystemError

# No system reads more dice than this in one roll; the systems' own caps are tighter.
MAX_RESOLVE_DICE = 100
from .odds import Odds, OutcomeOdds, check_pool_size
from .options import SystemOptions, validate_options

__all__ = ["SYSTEMS", "System", "Odds", "OutcomeOdds", "resolve", "odds", "options_schema", "get", "parse_options"]


@dataclass(frozen=True)
class System:
    name: str
    title: str
    Options: type[SystemOptions]
    _resolve: Callable[[Sequence[DieReading], Any], Adjudication]
    _odds: Callable[[Sequence[DieType], Any], Odds]
    _default_pool: Callable[[Any], list[DieType]]
    needs_rows: bool = False  # table: options must carry parsed rows

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


SYSTEMS: dict[str, System] = {
    s.name: s
    for s in (
        System(contingency.NAME, contingency.TITLE, contingency.ContingencyOptions, contingency.resolve,
               contingency.odds, contingency.default_pool),
        System(contingency_action.NAME, contingency_action.TITLE, contingency_action.ActionOptions,
               contingency_action.resolve, contingency_action.odds, contingency_action.default_pool),
        System(house_games.NAME, house_games.TITLE, house_games.HouseOptions, house_games.resolve,
               house_games.odds, house_games.default_pool),
        System(emergence.NAME, emergence.TITLE, emergence.EmergenceOptions, emergence.resolve, emergence.odds,
               emergence.default_pool),
        System(futile_kingdoms.NAME, futile_kingdoms.TITLE, futile_kingdoms.FutileOptions, futile_kingdoms.resolve,
               futile_kingdoms.odds, futile_kingdoms.default_pool),
        System(futile_contest.NAME, futile_contest.TITLE, futile_contest.ContestOptions, futile_contest.resolve,
               futile_contest.odds, futile_contest.default_pool),
        System("percentile", "Percentile roll (d00 + d10)", percentile.PercentileOptions,
               percentile.resolve_percentile, percentile.odds_percentile, percentile.default_pool),
        System("chance", "Percentage chance", percentile.ChanceOptions, percentile.resolve_chance,
               percentile.odds_chance, percentile.default_pool),
        System("table", "Random table look-up", percentile.TableOptions, percentile.resolve_table,
               percentile.odds_table, percentile.default_table_pool, needs_rows=True),
    )
}


def get(system: str) -> System:
    try:
        return SYSTEMS[system]
    except KeyError:
        raise UnknownSystemError(f"unknown system {system!r} (known: {', '.join(SYSTEMS)})") from None


def parse_options(system: str, options: Mapping[str, Any] | None = None) -> SystemOptions:
    return get(system).options(options)


def resolve(system: str, dice: Sequence[DieReading], options: Mapping[str, Any] | None = None) -> Adjudication:
    """Adjudicate real dice; a bad options dict raises RulesError with a one-line reason."""
    return get(system).resolve(dice, options)


def odds(system: str, pool: Sequence[DieType | str], options: Mapping[str, Any] | None = None) -> Odds:
    """Exact distribution of outcomes for a pool before it is rolled (empty pool: the default one)."""
    s = get(system)
    opts = s.options(options)
    if not pool:
        pool = s.default_pool(opts)
    return s.odds(pool, opts)


def options_schema(system: str) -> dict:
    return get(system).Options.model_json_schema()
