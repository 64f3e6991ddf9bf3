"""CLI commands `dicecam resolve` and `dicecam odds` (the rules engine), and the odds benchmark.

register() imports nothing heavy; the handlers import the rules engine when they run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any, Iterable

from dicecam.mechanics.errors import DiceError, LimitError, RulesError, first_problem, parse_int

MAX_TABLE_BYTES = 1_000_000
MAX_STDIN_LINES = 10_000

# Which flags each system accepts; anything else given is a mistake the user should hear about.
SYSTEM_FLAGS = {
    "contingency": {"target", "advantage", "disadvantage", "modifier", "luck", "choose_to_fail", "tie_order", "with_luck"},
    "contingency-action": {"zero_dice", "pool"},
    "house-games": {"difficulty", "modifier", "no_ability", "secondary", "combat", "failed_attempts", "pool",
                    "opponent_dice", "opponent_difficulty", "prior", "attribute", "ability", "opponent_colour",
                    "extended", "split"},
    "emergence": {"direction", "rerolls"},
    "futile-kingdoms": {"modifier", "red_colour", "white_colour", "carry"},
    "futile-kingdoms-contest": {"scores", "names", "thrown", "explode"},
    "percentile": {"tens_colour"},
    "chance": {"tens_colour", "percent"},
    "table": {"tens_colour", "table"},
}
ALL_FLAGS = sorted(set().union(*SYSTEM_FLAGS.values()))


def add_option_flags(p: argparse.ArgumentParser, *, odds: bool) -> None:
    g = p.add_argument_group("contingency")
    g.add_argument("--target", metavar="N|WORD", help="target difficulty, a number or the seed's word: Tricky, 'very difficult'... (default 5)")
    g.add_argument("--advantage", type=int, help="units of advantage")
    g.add_argument("--disadvantage", type=int, help="units of disadvantage")
    g.add_argument("--modifier", action="append", metavar="M",
                   help="contingency: INDEX:+N face modifier (repeatable); house-games, futile-kingdoms: +N")
    g.add_argument("--luck", metavar="TYPE:VALUE", help="the luck die, e.g. d6:4")
    g.add_argument("--choose-to-fail", action="store_true", default=None, help="the player chooses to fail")
    g.add_argument("--tie-order", choices=("asc", "desc"), help="equal faces sort by die size (default asc)")
    g.add_argument("--with-luck", action="store_true", default=None, help="odds: spend a luck die")
    g = p.add_argument_group("contingency-action")
    g.add_argument("--zero-dice", action="store_true", default=None, help="two d8, take the lower, no critical")
    g.add_argument("--pool", type=int, metavar="N",
                   help="contingency-action: a resource pool roll of N d8; house-games: the pool before dice lost to difficulty")
    if odds:
        g.add_argument("--pressure", type=int, default=0, metavar="N", help="add N d6 pressure dice to the pool")
    g = p.add_argument_group("house-games")
    g.add_argument("--attribute", type=int, metavar="N", help="the attribute's dots: the pool is attribute + ability")
    g.add_argument("--ability", type=int, metavar="N", help="the ability's ranks (0: none, difficulty +1)")
    g.add_argument("--difficulty", type=int, help="base difficulty before modifiers (default 6)")
    g.add_argument("--no-ability", action="store_true", default=None, help="no ranks in the ability (+1)")
    g.add_argument("--secondary", action="store_true", default=None, help="secondary ability (-1 combat, -2 out)")
    g.add_argument("--combat", action="store_true", default=None, help="a combat roll")
    g.add_argument("--failed-attempts", type=int, metavar="N", help="earlier failed attempts (+1 each)")
    g.add_argument("--opponent-dice", type=int, metavar="N", help="contested: the last N dice are the defender's")
    g.add_argument("--opponent-difficulty", type=int, metavar="N", help="contested: the defender's difficulty")
    g.add_argument("--opponent-colour", metavar="C", help="contested: the defender's dice are this colour")
    g.add_argument("--prior", type=int, metavar="N", help="extended/teamwork: net successes so far")
    g.add_argument("--extended", action="store_true", default=None,
                   help="extended/teamwork: stdin rolls (and the camera's throws) add up")
    g.add_argument("--split", metavar="A,B", help="split: the pools of the actions taken at once, e.g. 7,6")
    if odds:
        g.add_argument("--dice", type=int, metavar="N", help="a pool of N of the system's dice (d10 for house-games)")
    g = p.add_argument_group("emergence")
    g.add_argument("--direction", choices=("+", "-"), help="+ takes the highest, - the lowest")
    g.add_argument("--rerolls", metavar="A,B", help="re-rolls of a Wyrd base, in order, e.g. 0,3")
    g = p.add_argument_group("futile-kingdoms")
    g.add_argument("--red-colour", metavar="C", help="colour of the red die (default red)")
    g.add_argument("--white-colour", metavar="C", help="colour of the white die (default white)")
    g.add_argument("--carry", type=int, metavar="N", help="sum of the earlier DRs this roll explodes from")
    g = p.add_argument_group("futile-kingdoms-contest")
    g.add_argument("--scores", metavar="A,B", help="each participant's score in throwing order, e.g. 3,2")
    g.add_argument("--names", metavar="A,B", help="their names in the same order, e.g. Ann,Bob")
    g.add_argument("--thrown", action="append", metavar="FACES",
                   help="an earlier participant's d6 faces, e.g. 4 or 6+5 (repeatable, in order)")
    g.add_argument("--explode", action="store_true", default=None, help="odds: every 6 is exploded")
    g = p.add_argument_group("percentile, chance, table")
    g.add_argument("--tens-colour", metavar="C", help="colour of the d10 read as tens (two plain d10s)")
    g.add_argument("--percent", type=int, metavar="X", help="chance: X %% happens on a roll of 100 - X or more")
    g.add_argument("--table", metavar="FILE", help="table: a table file whose first column header is a die")
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


def _int(text: str, what: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise RulesError(f"{what} must be a whole number, not {text!r}") from None


def options_from_args(system: str, args: argparse.Namespace) -> dict[str, Any]:
    """The system's options dict from the flags given (a flag for another system is an error)."""
    allowed = SYSTEM_FLAGS[system]
    given = [f for f in ALL_FLAGS if getattr(args, f, None) is not None]
    wrong = [f for f in given if f not in allowed]
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
    simple = {"target", "advantage", "disadvantage", "luck", "choose_to_fail", "tie_order", "with_luck", "zero_dice",
              "difficulty", "no_ability", "secondary", "combat", "failed_attempts", "opponent_dice",
              "opponent_difficulty", "attribute", "ability", "opponent_colour", "extended", "explode", "direction", "red_colour", "white_colour", "carry", "tens_colour", "percent"}
    for f in given:
        if f in simple:
            opts[f] = getattr(args, f)
    if args.modifier is not None:
        if system == "contingency":
            mods = [0, 0, 0]
            for m in args.modifier:
                idx, sep, n = m.partition(":")
                if not sep:
                    raise RulesError(f"--modifier {m!r}: write INDEX:+N, e.g. 0:+2")
                i = _int(idx, "a modifier index")
                if not 0 <= i <= 2:
                    raise RulesError(f"--modifier index {i} is not 0, 1 or 2")
                mods[i] += _int(n, "a modifier")
            opts["modifiers"] = mods
        else:
            opts["modifier"] = sum(_int(m, "--modifier") for m in args.modifier)
    if args.pool is not None:
        if system == "contingency-action":
            opts["mode"], opts["pool_size"] = "resource", args.pool
        else:
            opts["pool"] = args.pool
    if args.prior is not None:
        opts["prior_successes"] = args.prior
    if args.scores is not None:
        opts["scores"] = [_int(x, "a score") for x in args.scores.split(",") if x.strip()]
    if args.names is not None:
        opts["names"] = [x for x in args.names.split(",")]
    if args.thrown is not None:
        opts["thrown"] = list(args.thrown)
    if args.split is not None:
        opts["split"] = [_int(x, "a split pool") for x in args.split.split(",") if x.strip()]
    if args.rerolls is not None:
        opts["rerolls"] = [_int(x, "a re-roll") for x in args.rerolls.split(",") if x.strip()]
    if args.table is not None:
        opts.update(read_table_file(args.table))
    return opts


def read_table_file(path: str) -> dict[str, Any]:
    with open(path, "rb") as f:
        data = f.read(MAX_TABLE_BYTES + 1)
    if len(data) > MAX_TABLE_BYTES:
        raise LimitError(f"table file {path} is over {MAX_TABLE_BYTES} bytes")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise RulesError(f"table file {path} is not UTF-8 text") from None
    return parse_table_text(text)


def parse_table_text(text: str) -> dict[str, Any]:
    """A table: optional '# Title', then a header row whose first cell is a die (d6, d100, d%),
    then rows `value-or-range | result`. Cells split on '|', tabs or commas (the header decides)."""
    from dicecam.mechanics.percentile import TABLE_DICE, parse_range

    title = ""
    lines = [ln.rstrip() for ln in text.splitlines()]
    body: list[str] = []
    for ln in lines:
        s = ln.strip()
        if not s:
            continue
        if s.startswith("#") and not body:
            title = s.lstrip("#").strip()
            continue
        body.append(s)
    if not body:
        raise RulesError("the table file has no header row")
    head = body[0]
    sep = "|" if "|" in head else "\t" if "\t" in head else ","

    def cells(s: str) -> list[str]:
        if sep == "|":
            s = s.strip().strip("|")
        return [c.strip() for c in s.split(sep)]

    die = cells(head)[0].lower().replace("d%", "d100")
    if die.startswith("1d"):
        die = die[1:]
    if die not in TABLE_DICE:
        raise RulesError(f"the first column header must be a die ({', '.join(TABLE_DICE)}), not {cells(head)[0]!r}")
    rows = []
    for s in body[1:]:
        cs = cells(s)
        if all(set(c) <= set("-:= ") for c in cs):
            continue  # a markdown separator row
        if len(cs) < 2:
            raise RulesError(f"table row {s!r} needs a value and a result")
        lo, hi = parse_range(cs[0])
        rows.append({"low": lo, "high": hi, "text": " | ".join(c for c in cs[1:] if c)})
    return {"die": die, "title": title, "rows": rows}


def _readings_from_json(obj: Any, where: str):
    from pydantic import ValidationError

    from dicecam.mechanics.dice import DieReading, ImageRead

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
    from dicecam.mechanics import registry
    from dicecam.mechanics.dice import parse_dice

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
    from dicecam.mechanics.dice import parse_type

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


DICE_FLAG_TYPE = {"house-games": "d10", "emergence": "d10", "contingency-action": "d8"}


def run_odds(args: argparse.Namespace) -> int:
    from dicecam.mechanics import registry

    system = registry.get(args.system)
    opts = system.options(options_from_args(args.system, args))
    pool = expand_pool(args.pool_dice)
    if args.dice is not None:
        if args.system not in DICE_FLAG_TYPE:
            raise RulesError(f"--dice does not apply to {args.system}; list the die types instead")
        pool += [DICE_FLAG_TYPE[args.system]] * args.dice
    if args.pressure:
        if args.system != "contingency-action":
            raise RulesError(f"--pressure does not apply to {args.system}")
        if not pool:
            pool = [d.value for d in system.default_pool(opts)]
        pool += ["d6"] * args.pressure
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
    from dicecam.mechanics import registry

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
