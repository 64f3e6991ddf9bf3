"""CLI commands `dicecam resolve` and `dicecam odds` (the rules engine), and the odds benchmark.

The option flags are generated from each system's options model (mechanics/options.py), so a new
system's options reach the command line without an edit here.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Iterable

from pydantic import ValidationError

from dicecam.mechanics import registry
from dicecam.mechanics.dice import DieReading, ImageRead, parse_dice, parse_type
from dicecam.mechanics.errors import DiceError, LimitError, RulesError, first_problem, parse_int
from dicecam.mechanics.options import CliFlag

MAX_TABLE_BYTES = 1_000_000
MAX_STDIN_LINES = 10_000

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


# Representative queries for `dicecam bench --odds`: every system, pools up to 10 dice.
BENCH_QUERIES: list[tuple[str, str, list[str], dict[str, Any]]] = [
    ("contingency d6 d8 d10 vs 5", "contingency", ["d6", "d8", "d10"], {"target": 5}),
    ("contingency d12 d12 d12 advantage + luck", "contingency", ["d12", "d12", "d12"], {"target": 9, "advantage": 1, "with_luck": True}),
    ("contingency-action 3d8 + 2d6", "contingency-action", ["d8"] * 3 + ["d6"] * 2, {}),
    ("contingency-action 6d8 + 4d6", "contingency-action", ["d8"] * 6 + ["d6"] * 4, {}),
    ("contingency-action 10d8", "contingency-action", ["d8"] * 10, {}),
    ("contingency-action resource 10d8", "contingency-action", ["d8"] * 10, {"mode": "resource"}),
    ("house-games 10d10 at 7", "house-games", ["d10"] * 10, {"difficulty": 7}),
    ("house-games contested 6 vs 4 dice at 6", "house-games", ["d10"] * 10, {"difficulty": 6, "opponent_dice": 4}),
    ("emergence 10d10 (base + 9 modifiers)", "emergence", ["d10"] * 10, {"direction": "+"}),
    ("futile-kingdoms DR", "futile-kingdoms", ["d6", "d6"], {"modifier": 1}),
    ("futile-kingdoms contest, 3 throws, sixes exploded", "futile-kingdoms-contest", ["d6"],
     {"scores": [3, 2, 1], "explode": True}),
    ("percentile", "percentile", ["d00", "d10"], {}),
    ("chance 10%", "chance", ["d00", "d10"], {"percent": 10}),
    ("table d100, 20 rows", "table", ["d00", "d10"],
     {"die": "d100", "rows": [{"low": i * 5 + 1, "high": i * 5 + 5, "text": f"row {i + 1}"} for i in range(20)]}),
]


def bench_odds(quick: bool = False) -> list[dict]:
    """Time each representative odds query: median and p95 in ms over several repeats.

    Nothing in the rules engine caches odds, so every repeat is a fresh computation (cold).
    """
    repeats = 5 if quick else 30
    rows = []
    for name, system, pool, options in BENCH_QUERIES:
        registry.odds(system, pool, options)  # import and first-use costs out of the figures
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            registry.odds(system, pool, options)
            times.append((time.perf_counter() - t0) * 1000)
        times.sort()
        p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
        rows.append({"name": name, "median_ms": round(times[len(times) // 2], 3), "p95_ms": round(p95, 3), "repeats": repeats})
    return rows
