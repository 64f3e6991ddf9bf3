"""/api/systems, /api/config and /api/odds: the rule systems, what the table plays, and the odds."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dicecam.mechanics.errors import DicecamError
from dicecam.mechanics.odds import Odds

from ..contract import answers
from ..events import TableConfig
from ..rulebook import SystemInfo
from .deps import MAX_DICE, WRITE_ANSWERS, TableDep, Write, api_router

router = api_router()


class ConfigRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    system: str = Field(max_length=64, title="System name")
    options: dict[str, Any] = Field(default_factory=dict, title="System options")
    pool: list[str] | None = Field(default=None, max_length=MAX_DICE, title="Dice pool for the odds (default: the system's)")


class OddsRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    system: str = Field(max_length=64, title="System name")
    pool: list[str] | None = Field(default=None, max_length=MAX_DICE, title="Dice kinds, e.g. [\"d6\", \"d6\"]")
    options: dict[str, Any] = Field(default_factory=dict, title="System options")


@router.get("/systems", response_model=list[SystemInfo], summary="The rule systems and their options' JSON schemas",
            tags=["rules"])
def systems(table: TableDep) -> list[SystemInfo]:
    allowed = table.settings.systems
    return [s for s in table.rules.systems() if not allowed or s.name in allowed]


@router.get("/config", response_model=TableConfig, summary="The configured system, options and pool", tags=["config"])
def get_config(table: TableDep) -> TableConfig:
    return table.config()


@router.put("/config", response_model=TableConfig, dependencies=Write, summary="Choose the system and its options", tags=["config"],
            responses={**WRITE_ANSWERS, **answers(413)})
def put_config(body: ConfigRequest, table: TableDep) -> TableConfig:
    """Validated against the system's options; the live pipeline adjudicates the next roll with it."""
    allowed = table.settings.systems
    if allowed and body.system not in allowed:
        raise DicecamError(f"system {body.system!r} is not offered here (offered: {', '.join(allowed)})")
    return table.configure(body.system, body.options, body.pool)


@router.get("/odds", response_model=Odds, summary="Odds of the configured roll", tags=["rules"])
def odds_configured(table: TableDep) -> Odds:
    return table.rules.odds(table.system, table.pool, table.options)


@router.post("/odds", response_model=Odds, summary="Odds of any roll", tags=["rules"], responses=answers(413))
def odds(body: OddsRequest, table: TableDep) -> Odds:
    options = table.rules.check_options(body.system, body.options)
    pool = body.pool or table.rules.default_pool(body.system, options)
    return table.rules.odds(body.system, pool, options)
