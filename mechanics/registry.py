"""The rules engine's public API: every system by its CLI/API name, resolve, odds, options schema,
and the verdict type of any system (`AnyAdjudication`, a union discriminated on `system`).

The server, the live pipeline and the CLI all call these; each system module builds its own `System`
record (system.py), so adding a system is a module and one line in SYSTEMS below.
"""

from __future__ import annotations

from typing import Annotated, Any, Mapping, Sequence, Union

from pydantic import BeforeValidator, Discriminator, Tag

from . import contingency, contingency_action, emergence, futile_contest, futile_kingdoms, house_games, percentile
from .adjudication import Adjudication, OtherAdjudication
from .dice import DieReading, DieType
from .errors import UnknownSystemError
from .odds import Odds, OutcomeOdds
from .system import MAX_RESOLVE_DICE, System

__all__ = ["SYSTEMS", "System", "Odds", "OutcomeOdds", "AnyAdjudication", "MAX_RESOLVE_DICE", "resolve", "odds",
           "options_schema", "get"]

SYSTEMS: dict[str, System] = {
    s.name: s
    for s in (contingency.SYSTEM, contingency_action.SYSTEM, house_games.SYSTEM, emergence.SYSTEM,
              futile_kingdoms.SYSTEM, futile_contest.SYSTEM, percentile.PERCENTILE, percentile.CHANCE, percentile.TABLE)
}



def _system_of(verdict: Any) -> str:
    name = verdict.get("system") if isinstance(verdict, dict) else getattr(verdict, "system", None)
    return name if name in SYSTEMS else "other"


def _unregistered_as_fields(verdict: Any) -> Any:
    # A verdict object of an unregistered system becomes its fields, for OtherAdjudication to take.
    if isinstance(verdict, Adjudication) and _system_of(verdict) == "other":
        return verdict.model_dump()
    return verdict


# Any system's verdict, told apart by its `system` name: what a Roll, an event and the API carry.
AnyAdjudication = Annotated[
    Union[tuple(Annotated[s.Adjudication, Tag(s.name)] for s in SYSTEMS.values())
          + (Annotated[OtherAdjudication, Tag("other")],)],
    Discriminator(_system_of),
    BeforeValidator(_unregistered_as_fields),
]


def get(system: str) -> System:
    try:
        return SYSTEMS[system]
    except KeyError:
        raise UnknownSystemError(f"unknown system {system!r} (known: {', '.join(SYSTEMS)})") from None


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
