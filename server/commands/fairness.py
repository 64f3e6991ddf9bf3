"""`dicecam fairness`: is each physical die fair, from the roll history `dicecam serve` keeps.

register() imports nothing heavy; the handler opens the store and imports scipy when it runs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dicecam.mechanics.errors import DicecamError, first_problem


def register(subparsers) -> None:
    """Add `fairness`; see server/cli.py for the contract."""
    p = subparsers.add_parser(
        "fairness", help="is each die fair? counts per face and a chi-square test from the roll history",
        description="Per physical die (kind + colour, or the name given on the Dice page): counts per face, a "
        "chi-square test against a fair die in plain words, and how many rolls the test needs. Corrected "
        "readings count with their corrected value; uncertain readings are left out and counted; rolls of the "
        "bundled demo clip are never counted.")
    p.add_argument("--die", metavar="NAME", help="only this die: its name, TYPE:COLOUR (d20:red) or label ('red d20')")
    p.add_argument("--data", metavar="DIR", help="the folder `dicecam serve --data` uses (default ~/.local/share/dicecam)")
    p.add_argument("--alpha", type=float, default=0.01, help="false-alarm rate: a fair die is flagged this often (default 0.01)")
    p.add_argument("--power", type=float, default=0.8, help="how often a loaded die should be flagged (default 0.8)")
    p.add_argument("--ratio", type=float, default=2.0,
                   help="the loading to plan for: one face RATIO times as often as it should (default 2)")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import sqlite3

    from pydantic import ValidationError

    from dicecam.mechanics import fairness
    from dicecam.server.settings import ServerSettings, default_data_dir
    from dicecam.server.store import RollStore, StoreError

    try:
        settings = fairness.FairnessSettings(alpha=args.alpha, power=args.power, ratio=args.ratio)
    except ValidationError as e:
        where, msg = first_problem(e)
        raise DicecamError(f"--{where}: {msg}") from None
    data = Path(args.data) if args.data else default_data_dir()
    db = ServerSettings(data_dir=data).db_path
    if not db.is_file():
        # Opening would create an empty history; say where we looked instead.
        raise DicecamError(f"no roll history at {db} (roll under `dicecam serve`, or give --data DIR)")
    try:
        store = RollStore(db)
    except (StoreError, sqlite3.DatabaseError) as e:
        raise DicecamError(f"cannot read the roll history {db}: {e}") from None
    try:
        result = fairness.report(store.iter_all(demo=False), store.die_names(), settings, args.die)
    finally:
        store.close()
    if args.json:
        print(json.dumps(result.model_dump(mode="json"), ensure_ascii=False))
        return 0
    print(result.summary)
    for die in result.dice:
        print()
        print(f"{die.name} ({', '.join(die.keys)}): {die.verdict}")
        extra = [f"{die.corrected} corrected"] if die.corrected else []
        extra += [f"{die.uncertain} uncertain left out"] if die.uncertain else []
        print(f"  {die.rolls} rolls" + (f" ({', '.join(extra)})" if extra else ""))
        top = max((f.count for f in die.faces), default=0) or 1
        for f in die.faces:
            face = fairness.face_text(die.type, f.face)
            bar = "#" * round(30 * f.count / top)
            print(f"  {face:>3} {f.count:5d}  {bar}")
        print(f"  expected {die.faces[0].expected:.1f} per face" + (f"; chi-square {die.chi_square:.2f}, "
              f"{die.df} degrees of freedom, p = {die.p_value:.4f}" if die.p_value is not None else ""))
        print(f"  {die.plan.sentence}")
    return 0
