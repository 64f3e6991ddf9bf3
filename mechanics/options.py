"""Base of every system's options, and turning a user's options dict into them."""

from __future__ import annotations

from typing import Any, Mapping, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from .errors import RulesError, first_problem

O = TypeVar("O", bound="SystemOptions")


class SystemOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def validate_options(cls: type[O], options: Mapping[str, Any] | BaseModel | None) -> O:
    if isinstance(options, cls):
        return options
    if isinstance(options, BaseModel):
        options = options.model_dump()
    try:
        return cls.model_validate(dict(options or {}))
    except ValidationError as e:
        where, msg = first_problem(e)
        if e.errors()[0].get("type") == "extra_forbidden":
            msg = f"no such option (options: {', '.join(cls.model_fields)})"
        raise RulesError(f"bad option {where}: {msg}" if where else f"bad options: {msg}") from None
