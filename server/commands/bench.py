"""CLI command `dicecam bench`: runs the benchmarks of `server/benchmarks/`, one JSON line per figure.

A benchmark whose install extra is missing is named and skipped; the others still run.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from dicecam.mechanics.errors import MissingExtra

from ..benchmarks import BENCHES


def register(subparsers) -> None:
    """Add `bench`; see server/cli.py for the contract."""
    b = subparsers.add_parser("bench", help="benchmarks: reader ms/frame (default), odds, live, synth, overlay")
    for name, bench in BENCHES.items():
        b.add_argument(f"--{name}", action="store_true", help=bench.what)
    b.add_argument("--teach-real", metavar="DIR", type=Path,
                   help="the dice memory on real sets: teach 3 photos per face, read other runs (before/after)")
    b.add_argument("--all", action="store_true", help="every benchmark")
    b.add_argument("--quick", action="store_true", help="fewer repeats")
    b.set_defaults(handler=_bench)


def _bench(args) -> int:
    from dicecam.vision.extras import as_missing_extra

    from ..benchmarks.host import host_row

    print(json.dumps(host_row()), flush=True)  # the figures below are this machine's
    chosen = [n for n in BENCHES if args.all or getattr(args, n)]
    if args.teach_real is not None:
        from ..benchmarks.teach import bench_teach_real

        for row in bench_teach_real(args.teach_real):
            print(json.dumps(row), flush=True)
        if not chosen:
            return 0
    chosen = chosen or ["reader"]
    skipped = []
    for name in chosen:
        try:
            rows = BENCHES[name].run(args.quick)
        except MissingExtra as e:
            missing = e
        except ModuleNotFoundError as e:
            missing = as_missing_extra(e)
            if missing is None:
                raise
        else:
            for row in rows:
                print(json.dumps(row), flush=True)
            continue
        skipped.append(name)
        print(json.dumps({"bench": name, "skipped": str(missing)}), flush=True)
        print(f"dicecam bench: skipped {name}: {missing}", file=sys.stderr, flush=True)
    return 2 if len(skipped) == len(chosen) else 0
