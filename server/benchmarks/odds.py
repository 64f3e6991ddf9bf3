"""`dicecam bench --odds`: how long each system's exact odds take, for representative pools.

Figures are reported, never asserted.
"""

from __future__ import annotations

import time
from typing import Any

from dicecam.mechanics import registry

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
