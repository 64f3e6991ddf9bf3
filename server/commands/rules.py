"""CLI commands `dicecam resolve` and `dicecam odds` (the rules engine).

The option flags are generated from each system's options model (`flags.py`), so a new system's options
reach the command line without an edit here.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Iterable

from pydantic import ValidationError

from dicecam.mechanics import registry
from dicecam.mechanics.dice import DieReading, ImageRead, parse_dice, parse_type
from dicecam.mechanics.errors import DiceError, LimitError, RulesError, first_problem, parse_int

from .flags import add_option_flags, options_from_args

MAX_STDIN_LINES = 10_000


def register(subparsers) -> None:
    """Add `resolve` and `odds`; see server/cli.py for the contract."""
    r = subparsers.add_parser("resolve", help="adjudicate a roll under a rule system",
                              description="Adjudicate dice given as TYPE:VALUE[:COLOUR], or read JSON lines on stdin.")
    r.add_argument("system", help="contingency, contingency-action, house-games, emergence, futile-kingdoms, "
                                  "futile-kingdoms-contest, percentile, chance, table")
    r.add_argument("dice", nargs="*", help="dice as TYPE:VALUE[:COLOUR], e.g. d6:3 d10:0 d6:5:red")
    add_option_flags(r, odds=False)
    r.set_defaults(handler=run_resolve)
    o = subparsers.add_parser("odds", help="exact odds of a roll before it happens",
                              description="Exact outcome distribution for a pool, e.g. `odds contingency d6 d8 d10 --target 5`.")
    o.add_argument("system")
    o.add_argument("pool_dice", nargs="*", metavar="POOL", help="die types, e.g. d6 d8 d10 or 3d8 (empty: the system's default pool)")
    add_option_flags(o, odds=True)
    o.set_defaults(handler=run_odds)


def _readings_from_json(obj: Any, where: str):
    try:
        if isinstance(obj, list):
            return [DieReading.model_validate(d) for d in obj]
        if isinstance(obj, dict) and "dice" in obj:
            return ImageRead.model_validate(obj).dice
    except ValidationError as e:
        loc, msg = first_problem(e)
        raise DiceError(f"{where}: bad die reading at {loc}: {msg}") from None
    raise DiceError(f"{where}: expected a read object with \"dice\" or a list of die readings")


def stdin_rolls(stream: Iterable[str]):
    """Each non-empty JSON line on stdin is one roll."""
    n = 0
    for i, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        n += 1
        if n > MAX_STDIN_LINES:
            raise LimitError(f"more than {MAX_STDIN_LINES} rolls on stdin")
        try:
            obj = json.loads(line, parse_int=parse_int)
        except json.JSONDecodeError as e:
            raise DiceError(f"stdin line {i} is not JSON: {e.msg}") from None
        yield _readings_from_json(obj, f"stdin line {i}")


def _print_adjudication(adj, as_json: bool) -> None:
    if as_json:
        print(json.dumps(adj.model_dump(mode="json"), ensure_ascii=False))
        return
    print(adj.summary)
    for i, step in enumerate(adj.explanation, start=1):
        print(f"  {i}. {step}")


def run_resolve(args: argparse.Namespace) -> int:
    system = registry.get(args.system)
    opts = system.options(options_from_args(args.system, args))
    if args.dice:
        rolls = [parse_dice(args.dice)]
    elif getattr(opts, "choose_to_fail", False):
        rolls = [[]]
    elif sys.stdin is None or sys.stdin.isatty():
        raise DiceError("no dice given: write them as TYPE:VALUE (e.g. d6:3) or pipe read JSON lines on stdin")
    else:
        rolls = stdin_rolls(sys.stdin)
    count = 0
    for dice in rolls:
        adj = system.resolve(dice, opts)
        _print_adjudication(adj, args.json)
        count += 1
        if getattr(opts, "extended", False):
            # Extended or teamwork rolls: each line's successes add to the running total.
            opts = opts.model_copy(update={"prior_successes": adj.total_successes})
    if count == 0:
        raise DiceError("no dice on stdin")
    return 0


def expand_pool(specs: list[str]) -> list[str]:
    """'3d8' → d8 d8 d8; 'd6' stays."""
    out: list[str] = []
    for s in specs:
        s = s.strip().lower()
        head, sep, tail = s.partition("d")
        if sep and head.isdigit():
            n = int(head)
            if n > 100:
                raise LimitError(f"{s}: over the cap of 100 dice")
            out += [parse_type("d" + tail).value] * n
        else:
            out.append(parse_type(s).value)
    return out


def run_odds(args: argparse.Namespace) -> int:
    system = registry.get(args.system)
    opts = system.options(options_from_args(args.system, args))
    pool = expand_pool(args.pool_dice)
    if args.dice is not None:
        if system.pool_die is None:
            raise RulesError(f"--dice does not apply to {args.system}; list the die types instead")
        pool += [system.pool_die.value] * args.dice
    for role, die in {r: d for s in registry.SYSTEMS.values() for r, d in s.added_dice.items()}.items():
        n = getattr(args, role, 0)
        if not n:
            continue
        if role not in system.added_dice:
            raise RulesError(f"--{role} does not apply to {args.system}")
        if not pool:
            pool = [d.value for d in system.default_pool(opts)]
        pool += [die.value] * n
    if getattr(opts, "mode", None) == "resource" and not pool:
        pool = ["d8"] * opts.pool_size
    if not pool:
        pool = [d.value for d in system.default_pool(opts)]
    result = system.odds(pool, opts)
    if args.json:
        print(json.dumps(result.model_dump(mode="json"), ensure_ascii=False))
        return 0
    print(result.summary)
    rows = [(o.outcome, o) for o in result.outcomes] + [(f"({o.outcome})", o) for o in result.events]
    width = max(len(label) for label, _ in rows)
    for label, o in rows:
        print(f"  {label:<{width}}  {o.probability * 100:7.3f}%  {o.fraction}")
    return 0
