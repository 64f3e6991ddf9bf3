"""Base of every system's options, turning a user's options dict into them, and the command-line
flags each options model declares.

A system's flags are generated from its options model: each field is a flag named after it, its help
is the field's title (and description), its type the field's. `Flag` metadata on a field changes what
the generic reading cannot know: another name (`--prior` for `prior_successes`), a repeatable flag, a
conversion (`--modifier 0:+2` into the modifiers list), a file to read, or no flag at all.
"""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping, TypeVar, Union

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.fields import FieldInfo

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


# -- command-line flags -------------------------------------------------------------------------------

FlagKind = Literal["switch", "int", "text", "choice", "list-int", "list-text"]


@dataclass(frozen=True)
class Flag:
    """Field metadata (`Annotated[int, Flag(...)]`) for what the field's type alone does not say."""

    name: str | None = None  # the flag's name without dashes, when not the field's
    metavar: str | None = None
    kind: FlagKind | None = None  # when not the field type's (a number that may also be given as a word)
    repeat: bool = False  # given once per value; the values reach `convert` as a list
    convert: Callable[[Any], dict[str, Any]] | None = None  # the flag's value -> option values
    reads_file: bool = False  # the value is a path: the caller reads it and converts its text
    hidden: bool = False  # no flag: the option is set by another flag, a follow-up or --options


@dataclass(frozen=True)
class CliFlag:
    """One option's command-line flag, as generated from its field."""

    name: str  # without dashes, underscores for dashes: the argparse dest
    field: str
    kind: FlagKind
    help: str
    metavar: str | None = None
    choices: tuple[str, ...] = ()
    repeat: bool = False
    reads_file: bool = False
    _convert: Callable[[Any], dict[str, Any]] | None = None

    @property
    def option(self) -> str:
        return "--" + self.name.replace("_", "-")

    def values(self, given: Any) -> dict[str, Any]:
        """The option values the flag's (already type-checked) value stands for."""
        if self._convert is not None:
            return self._convert(given)
        if self.repeat:
            return {self.field: list(given)}
        if self.kind in ("list-int", "list-text"):
            items = [x.strip() for x in given.split(",") if x.strip()]
            if self.kind == "list-int":
                items = [_whole(x, self.option) for x in items]
            return {self.field: items}
        return {self.field: given}


def _whole(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise RulesError(f"{what} takes whole numbers, not {text!r}") from None


def summed(field: str, flag: str) -> Callable[[list[str]], dict[str, Any]]:
    """A repeatable flag whose values add up: `--modifier +2 --modifier -1` is a modifier of +1."""
    return lambda given: {field: sum(_whole(x.strip(), flag) for x in given)}


def _kind(annotation: Any) -> tuple[FlagKind, tuple[str, ...]]:
    """A field's flag kind from its type: bool, int, str or a Literal of words, or a list of int or str
    (given comma-separated). None in a union is the unset default, not a kind."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (Union, types.UnionType) and len(args) == 1:
        annotation = args[0]
    origin = typing.get_origin(annotation)
    if annotation is bool:
        return "switch", ()
    if annotation is int:
        return "int", ()
    if annotation is str:
        return "text", ()
    if origin is Literal:
        return "choice", tuple(str(a) for a in typing.get_args(annotation))
    if origin is list and typing.get_args(annotation)[0] in (int, str):
        return ("list-int" if typing.get_args(annotation)[0] is int else "list-text"), ()
    raise TypeError(f"no command-line flag for an option of type {annotation!r}: mark it Flag(hidden=True) "
                    "or give it a Flag(convert=...)")


def _help(info: FieldInfo) -> str:
    text = info.title or ""
    if info.description:
        text += f" — {info.description}"
    default = info.get_default(call_default_factory=True)
    if default not in (None, False, [], ""):
        text += f" (default {default})"
    return text.replace("%", "%%")  # argparse formats help with %


def cli_flags(options: type[SystemOptions]) -> list[CliFlag]:
    """The command-line flags of a system's options, in field order."""
    out = []
    for field, info in options.model_fields.items():
        meta = next((m for m in info.metadata if isinstance(m, Flag)), Flag())
        if meta.hidden:
            continue
        if meta.kind is not None or meta.repeat or meta.reads_file:
            kind, choices = meta.kind or "text", ()
        else:
            kind, choices = _kind(info.annotation)
        out.append(CliFlag(name=meta.name or field, field=field, kind=kind, help=_help(info), metavar=meta.metavar,
                           choices=choices, repeat=meta.repeat, reads_file=meta.reads_file, _convert=meta.convert))
    return out
