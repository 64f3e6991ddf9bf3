"""Many overlay clients at once (the benchmark's client half, short): every event reaches every client."""

from __future__ import annotations

import asyncio

from conftest import LiveServer
from dicecam.server.benchmarks.events import _clients, _make_app


def test_fifty_clients_lose_no_event(tmp_path):
    app, store = _make_app(tmp_path)
    with LiveServer(app) as srv:
        got = asyncio.run(_clients(srv.url, app.state.broker, clients=50, seconds=1.0, rate_hz=25.0))
    store.close()
    assert got["events_sent"] >= 10
    assert got["lost"] == 0 and got["events_received_min"] == got["events_sent"]
    assert got["dropped_clients"] == 0
