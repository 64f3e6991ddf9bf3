"""The benchmarks, in one place: figures, never assertions (`dicecam bench`, `server/commands/bench.py`).

Each benchmark takes `quick` (fewer repeats) and returns JSON-ready rows. `BENCHES` lists them in the order
`dicecam bench` offers them; each imports what it measures, and checks the install extra it needs, only when
it runs, so `dicecam --help` stays light. The dice memory's benchmark on real photos (`teach.py`) takes a
folder of labelled photos instead; its benchmark on renders is `teach`.
"""

from __future__ import annotations

from typing import Callable, NamedTuple


class Bench(NamedTuple):
    what: str  # the flag's help
    run: Callable[[bool], list[dict]]


def _reader(quick: bool) -> list[dict]:
    from dicecam.vision.extras import require

    require("synth", "the reader benchmark (it renders its test frames)")
    from .reader import bench_memory, bench_reader

    return bench_reader(quick) + bench_memory(quick)


def _odds(quick: bool) -> list[dict]:
    from .odds import bench_odds

    return bench_odds(quick)


def _live(quick: bool) -> list[dict]:
    from .live import bench_live

    return bench_live(quick)


def _synth(quick: bool) -> list[dict]:
    from dicecam.vision.extras import require

    require("synth")
    from .synth import bench_synth

    return bench_synth(quick)


def _teach(quick: bool) -> list[dict]:
    from dicecam.vision.extras import require

    require("synth", "the teaching benchmark (it renders the dice it teaches)")
    from .teach import bench_teach_renders

    return bench_teach_renders(quick)


def _domes(quick: bool) -> list[dict]:
    from dicecam.vision.extras import require

    require("synth", "the dome benchmark (it renders its tables)")
    from .domes import bench_domes

    return bench_domes(quick)


def _tilt(quick: bool) -> list[dict]:
    from dicecam.vision.extras import require

    require("synth", "the tilt benchmark (it renders its tables)")
    from .tilt import bench_tilt

    return bench_tilt(quick)


def _overlay(quick: bool) -> list[dict]:
    from dicecam.vision.extras import require

    require("test", "the overlay benchmark (it drives Chromium)", modules=("playwright",))
    from .events import bench_overlay

    return bench_overlay(quick)


BENCHES = {
    "reader": Bench("detector + face reader ms per 640x480 frame", _reader),
    "odds": Bench("exact odds ms per query", _odds),
    "live": Bench("live pipeline fps, latency, idle CPU", _live),
    "synth": Bench("synthetic images per second", _synth),
    "overlay": Bench("event to overlay painted, many clients", _overlay),
    "teach": Bench("the dice memory on rendered dice: 3 rolls a face taught, the others read (before/after)", _teach),
    "domes": Bench("dice under a glass dome: the same rendered tables read with and without it", _domes),
    "tilt": Bench("the camera's tilt: the same rendered tables read from 0, 20, 40 and 60 degrees off vertical", _tilt),
}
