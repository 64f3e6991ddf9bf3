"""`dicecam bench`: every part's benchmarks in one command; figures, never assertions.

The dispatcher imports this module for every command: each benchmark is imported when it runs,
so the renderer, the reader's runtime and Chromium stay off the start-up path of other commands.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from dicecam.mechanics.errors import MissingExtra
from dicecam.vision.extras import as_missing_extra, require

from .cli_rules import bench_odds


def register(subparsers) -> None:
    """Add `bench`; see server/cli.py for the contract."""
    b = subparsers.add_parser("bench", help="benchmarks: reader ms/frame (default), odds, live, synth, overlay")
    for name, what in (("reader", "detector + face reader ms per 640x480 frame"), ("odds", "exact odds ms per query"),
                       ("live", "live pipeline fps, latency, idle CPU"), ("synth", "synthetic images per second"),
                       ("overlay", "event to overlay painted, many clients")):
        b.add_argument(f"--{name}", action="store_true", help=what)
    b.add_argument("--teach-real", metavar="DIR", type=Path,
                   help="the dice memory on real sets: teach 3 photos per face, read the others (before/after)")
    b.add_argument("--all", action="store_true", help="every benchmark")
    b.add_argument("--quick", action="store_true", help="fewer repeats")
    b.set_defaults(handler=_bench)


def _bench(args) -> int:
    chosen = [n for n in ("reader", "odds", "live", "synth", "overlay") if args.all or getattr(args, n)]
    if args.teach_real is not None:
        from dicecam.vision.bench_teach import bench_teach_real

        for row in bench_teach_real(args.teach_real):
            print(json.dumps(row), flush=True)
        if not chosen:
            return 0
    chosen = chosen or ["reader"]
    skipped = []
    for name in chosen:
        # A benchmark whose extra is missing is named and skipped; the others still run.
        try:
            rows = _BENCHES[name](args.quick)
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


def _bench_reader(quick):
    require("synth", "the reader benchmark (it renders its test frames)")
    from .bench_reader import bench_memory, bench_reader

    return bench_reader(quick) + bench_memory(quick)


def _bench_odds(quick):
    return bench_odds(quick)


def _bench_live(quick):
    from .bench_live import bench_live

    return bench_live(quick)


def _bench_synth(quick):
    require("synth")
    from dicecam.datasets.bench import bench_synth

    return bench_synth(quick)


def _bench_overlay(quick):
    require("test", "the overlay benchmark (it drives Chromium)", modules=("playwright",))
    from .bench import bench_overlay

    return bench_overlay(quick)


_BENCHES = {"reader": _bench_reader, "odds": _bench_odds, "live": _bench_live, "synth": _bench_synth,
            "overlay": _bench_overlay}
