"""The flags several commands share: each system's option flags (generated from its options model, so a new
system's options reach every command without an edit here) and the dice memory's folder.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from dicecam.mechanics import registry
from dicecam.mechanics.errors import LimitError, RulesError, parse_int
from dicecam.mechanics.options import CliFlag

MAX_TABLE_BYTES = 1_000_000


def _flags() -> dict[str, list[tuple[str, CliFlag]]]:
    """Every system's flags by flag name: (system, flag) for each system that has it."""
    by_name: dict[str, list[tuple[str, CliFlag]]] = {}
    for name, system in registry.SYSTEMS.items():
        for flag in system.flags():
            by_name.setdefault(flag.name, []).append((name, flag))
    return by_name


def add_option_flags(p: argparse.ArgumentParser, *, odds: bool) -> None:
    """Each system's option flags, generated from its options model, in a group per system. A flag two
    systems share (--modifier, --pool) is declared once, with each system's meaning in its help."""
    groups: dict[str, Any] = {}
    for name, uses in _flags().items():
        kinds = {(f.kind, f.repeat) for _, f in uses}
        if len(kinds) > 1:  # a programming error in an options model, caught by the CLI's own tests
            raise TypeError(f"--{name} means different kinds of value in {', '.join(s for s, _ in uses)}")
        system, flag = uses[0]
        helps = {f.help for _, f in uses}
        text = flag.help if len(helps) == 1 else "; ".join(f"{s}: {f.help}" for s, f in uses)
        g = groups.get(system) or groups.setdefault(system, p.add_argument_group(system))
        kw: dict[str, Any] = {"dest": name, "help": text}
        if flag.kind == "switch":
            kw.update(action="store_true", default=None)
        else:
            kw.update(metavar=flag.metavar or ("N" if flag.kind == "int" else name.split("_")[-1].upper()))
            if flag.repeat:
                kw["action"] = "append"
            if flag.kind == "int":
                kw["type"] = int
            if flag.choices:
                kw["choices"], kw["metavar"] = flag.choices, None
        g.add_argument(flag.option, **kw)
    if odds:
        g = p.add_argument_group("odds")
        dice_of = ", ".join(f"{s.pool_die.value} for {n}" for n, s in registry.SYSTEMS.items() if s.pool_die)
        g.add_argument("--dice", type=int, metavar="N", help=f"a pool of N of the system's dice ({dice_of})")
        for n, s in registry.SYSTEMS.items():
            for role, die in s.added_dice.items():
                g.add_argument(f"--{role}", type=int, default=0, metavar="N", help=f"{n}: add N {die.value} {role} dice")
    p.add_argument("--options", metavar="JSON", help="options as a JSON object (merged under the flags)")
    p.add_argument("--json", action="store_true", help="print one JSON object per result")


def options_from_args(system: str, args: argparse.Namespace) -> dict[str, Any]:
    """The system's options dict from the flags given (a flag of another system is an error)."""
    own = {f.name: f for f in registry.get(system).flags()}
    given = [name for name in _flags() if getattr(args, name, None) is not None]
    wrong = [name for name in given if name not in own]
    if wrong:
        raise RulesError(f"--{wrong[0].replace('_', '-')} does not apply to {system}")
    opts: dict[str, Any] = {}
    if args.options:
        try:
            extra = json.loads(args.options, parse_int=parse_int)
        except json.JSONDecodeError as e:
            raise RulesError(f"--options is not JSON: {e.msg}") from None
        if not isinstance(extra, dict):
            raise RulesError("--options must be a JSON object")
        opts.update(extra)
    for name in given:
        flag, value = own[name], getattr(args, name)
        opts.update(flag.values(read_text_file(value) if flag.reads_file else value))
    return opts


def read_text_file(path: str) -> str:
    """A flag's file (a table), read whole: capped, UTF-8 with or without a byte-order mark."""
    with open(path, "rb") as f:
        data = f.read(MAX_TABLE_BYTES + 1)
    if len(data) > MAX_TABLE_BYTES:
        raise LimitError(f"table file {path} is over {MAX_TABLE_BYTES} bytes")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise RulesError(f"table file {path} is not UTF-8 text") from None


def add_memory_flag(p) -> None:
    p.add_argument("--memory", metavar="DIR",
                   help="the dice memory's folder (default: the data folder's memory/; 'none': the general reader alone)")


def add_camera_size_flag(p) -> None:
    p.add_argument("--camera-size", metavar="WxH",
                   help="what to ask a camera for: WIDTHxHEIGHT, or 'native' for what it sends unasked (default "
                   "1280x720; it answers with the nearest size it has). Bigger dice in the picture are read better")


def camera_size(args) -> dict:
    """open_source's `camera_size` from --camera-size: nothing when the flag is not given (open_source's default);
    a bad size is one clear line."""
    if getattr(args, "camera_size", None) is None:
        return {}
    from dicecam.vision.sources import parse_camera_size

    return {"camera_size": parse_camera_size(args.camera_size)}
