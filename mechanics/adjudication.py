"""What a resolver returns: the verdict, the numbers behind it, each die's fate, and words.

Every system subclasses `Adjudication` with its own typed numbers (contingency adds
`result`, `total`, `success`...), so `model_dump()` is the flat JSON object the CLI prints
with `--json` and the API and events carry.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .dice import DieReading


class RolledDie(DieReading):
    """A reading plus what the rules did with it (dddice/Pixels naming for the flags)."""

    role: str | None = Field(default=None, title="Role in the roll (action, pressure, base, tens, luck...)")
    is_dropped: bool = Field(default=False, title="Rolled but not counted (e.g. not the kept die)")
    is_ignored: bool = Field(default=False, title="Set aside by a rule (e.g. disrupted modifier)")
    why: str | None = Field(default=None, title="Why it was dropped or ignored")
    effective: int | None = Field(default=None, title="Value after face modifiers, when they differ")


class Adjudication(BaseModel):
    """Base of every system's verdict."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    system: str = Field(title="System name")
    outcome: str = Field(title="Outcome word, lower case (success, messy, botch...)")
    dice: list[RolledDie] = Field(default_factory=list, title="Every die, kept, dropped or ignored")
    explanation: list[str] = Field(default_factory=list, title="Plain-English steps")
    summary: str = Field(title="One sentence for a screen reader")
    options: dict[str, Any] = Field(default_factory=dict, title="The options it was resolved with")


class OtherAdjudication(Adjudication):
    """The verdict of a system this build does not register (rules supplied from outside the registry,
    a stored roll of a system since removed): the common fields, and whatever else it carried, kept."""

    model_config = ConfigDict(frozen=True, extra="allow")
