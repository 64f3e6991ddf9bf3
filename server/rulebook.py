"""The rules engine as the server sees it: a small protocol, and the adapter to mechanics.registry.

Tests pass a fake with the same five methods (a made-up system whose verdicts are the common
`Adjudication` fields).
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol, Sequence

from pydantic import BaseModel, ConfigDict, Field

from dicecam.mechanics import registry
from dicecam.mechanics.adjudication import Adjudication
from dicecam.mechanics.dice import DieReading
from dicecam.mechanics.odds import Odds


class SystemInfo(BaseModel):
    """A rule system as the page offers it: its name, title and options' JSON schema."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    name: str = Field(title="System name")
    title: str = Field(title="What the page calls it")
    options_schema: dict[str, Any] = Field(alias="schema", title="JSON schema of its options")


class Rules(Protocol):
    def resolve(self, system: str, dice: Sequence[DieReading], options: Mapping[str, Any]) -> Adjudication: ...
    def odds(self, system: str, pool: Sequence[str], options: Mapping[str, Any]) -> Odds: ...
    def systems(self) -> list[SystemInfo]: ...
    def check_options(self, system: str, options: Mapping[str, Any]) -> dict[str, Any]: ...
    def default_pool(self, system: str, options: Mapping[str, Any]) -> list[str]: ...


class RegistryRules:
    """Adapter over dicecam.mechanics.registry (resolve, odds, SYSTEMS)."""

    def __init__(self) -> None:
        self._reg = registry
        self._systems: list[SystemInfo] | None = None

    def _system(self, name: str):
        return self._reg.get(name)

    def check_options(self, system: str, options: Mapping[str, Any]) -> dict[str, Any]:
        # System.options raises RulesError with a one-line reason for a bad option.
        return self._system(system).options(dict(options)).model_dump(mode="json")

    def resolve(self, system, dice, options):
        return self._reg.resolve(system, list(dice), dict(options))

    def odds(self, system, pool, options):
        return self._reg.odds(system, list(pool), dict(options))

    def default_pool(self, system, options):
        return [str(getattr(t, "value", t)) for t in self._system(system).default_pool(dict(options))]

    def systems(self):
        if self._systems is None:  # the schemas never change while the server runs, and cost ~8 ms to build
            self._systems = [SystemInfo(name=name, title=sys_.title, schema=sys_.Options.model_json_schema())
                             for name, sys_ in self._reg.SYSTEMS.items()]
        return self._systems


def load_rules() -> Rules:
    return RegistryRules()
