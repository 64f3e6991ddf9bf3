"""Benchmarks for the pages: event-to-overlay-painted latency and many overlay clients with no lost event.

All traffic stays on 127.0.0.1; counts and durations are bounded. Figures are reported, never asserted.
`python -m dicecam.server.benchmarks.events [--quick]` prints one JSON object per line. Playwright (the test
extra) is imported where a benchmark drives Chromium; without it that part is skipped.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import websockets

from dicecam.mechanics.dice import DieReading
from dicecam.vision.assembly import RollSession

from ..app import create_app
from ..events import Event, make_event
from ..loopback import CHROMIUM_ARGS, LiveServer, find_chromium
from ..settings import ServerSettings
from ..store import RollStore


def _roll_event(i: int) -> Event:
    dice = [DieReading(type="d6", value=1 + i % 6), DieReading(type="d8", value=1 + (i * 3) % 8),
            DieReading(type="d10", value=(i * 7) % 10)]
    roll = RollSession("contingency", {"target": 1 + i % 12}).add(dice)  # a new session: each roll stands alone
    return make_event(f"roll.{roll.status}", roll)


def _make_app(tmp: Path):
    settings = ServerSettings(data_dir=tmp, max_clients=1000, client_queue=1024)
    store = RollStore(settings.db_path)
    return create_app(settings, store), store


def _latency(url: str, broker, n: int) -> dict[str, Any]:
    """Publish n events one at a time; the overlay records when the frame after its DOM update ran."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {"name": "overlay_paint_latency", "skipped": "playwright is not installed"}
    exe = find_chromium()
    if exe is None:
        return {"name": "overlay_paint_latency", "skipped": "no Chromium found"}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1920, "height": 1080})
        page.goto(url + "/overlay?hold=0")
        page.wait_for_function("window.__dicecamSeen > 0", timeout=15000)
        for i in range(n):
            broker.publish(_roll_event(i))
            page.wait_for_function(f"window.__dicecamPaints.length >= {i + 1}", timeout=10000)
            time.sleep(0.05)  # one event at a time: the figure is latency, not throughput
        paints = page.evaluate("window.__dicecamPaints")
        browser.close()
    ms = sorted(p["painted"] - p["sent"] for p in paints)
    return {"name": "overlay_paint_latency", "events": len(ms), "median_ms": round(statistics.median(ms), 1),
            "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 1), "max_ms": round(ms[-1], 1), "target_ms": 100,
            "note": "publish (server clock) to requestAnimationFrame after the DOM update (browser clock), loopback"}


async def _clients(url: str, broker, clients: int, seconds: float, rate_hz: float) -> dict[str, Any]:
    ws_url = url.replace("http://", "ws://") + "/api/events/ws"
    received = [0] * clients
    snapshots = [0] * clients
    conns = [await websockets.connect(ws_url, max_size=2**22) for _ in range(clients)]

    async def reader(i, ws):
        try:
            async for msg in ws:
                t = json.loads(msg)["type"]
                if t == "snapshot":
                    snapshots[i] += 1
                elif t == "roll.settled":
                    received[i] += 1
        except websockets.ConnectionClosed:
            pass

    tasks = [asyncio.create_task(reader(i, ws)) for i, ws in enumerate(conns)]
    while sum(snapshots) < clients:
        await asyncio.sleep(0.01)
    loop = asyncio.get_running_loop()
    sent = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ev = _roll_event(sent)
        await loop.run_in_executor(None, broker.publish, ev)  # from another thread, as the pipeline does
        sent += 1
        await asyncio.sleep(1 / rate_hz)
    deadline = time.monotonic() + 5
    while min(received) < sent and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    for ws in conns:
        await ws.close()
    for t in tasks:
        t.cancel()
    lost = sum(sent - r for r in received)
    return {"name": "overlay_clients", "clients": clients, "seconds": seconds, "events_sent": sent,
            "events_received_min": min(received), "lost": lost, "dropped_clients": broker.dropped_clients}


def _with_pages(url: str, broker, python_clients: int, pages: int, seconds: float, rate_hz: float) -> dict[str, Any]:
    """Python WebSocket clients plus a few real overlay pages, all counting the same events."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pages = 0
    exe = find_chromium()
    if exe is None:
        pages = 0
    if pages == 0:
        return asyncio.run(_clients(url, broker, python_clients, seconds, rate_hz))
    out: dict[str, Any] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
        opened = []
        for i in range(pages):
            page = browser.new_page(viewport={"width": 1920, "height": 1080})
            # every third page on Server-Sent Events, the rest on WebSocket
            page.goto(url + "/overlay?hold=0" + ("&transport=sse" if i % 3 == 2 else ""))
            page.wait_for_function("window.__dicecamSeen > 0", timeout=15000)
            opened.append(page)
        worker = threading.Thread(target=lambda: out.update(asyncio.run(
            _clients(url, broker, python_clients, seconds, rate_hz))))
        worker.start()
        while worker.is_alive():  # keep the pages' event loops turning while the clients run
            opened[0].wait_for_timeout(200)
        worker.join()
        seen = []
        for page in opened:
            end = time.monotonic() + 5
            while page.evaluate("window.__dicecamSeen - 1") < out["events_sent"] and time.monotonic() < end:
                page.wait_for_timeout(50)
            seen.append(page.evaluate("window.__dicecamSeen - 1"))
        browser.close()
    out.update(clients=python_clients + pages, browser_pages=pages,
               browser_received_min=min(seen), lost=out["lost"] + sum(out["events_sent"] - n for n in seen))
    return out


def bench_overlay(quick: bool = False) -> list[dict]:
    """Event-to-overlay-painted latency, and 50 event clients (47 Python, 3 overlay pages) for a bounded
    time, counting lost events."""
    n_events = 20 if quick else 100
    seconds = 5.0 if quick else 60.0
    results: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="dicecam-bench-") as tmp:
        app, store = _make_app(Path(tmp))
        broker = app.state.broker
        with LiveServer(app) as srv:
            results.append(_latency(srv.url, broker, n_events))
            results.append(_with_pages(srv.url, broker, 47, 3, seconds, rate_hz=10.0))
        store.close()
    return results


if __name__ == "__main__":
    import sys

    for row in bench_overlay(quick="--quick" in sys.argv):
        print(json.dumps(row))
