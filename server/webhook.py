"""Optional outbound webhook: each roll POSTed as the generic JSON event or a Discord message.

Runs on its own thread with a bounded queue and a timeout; a failure is logged, never fatal,
and a full queue drops the newest post rather than slowing the table.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import urllib.error
import urllib.request
from typing import Any

from .events import ROLL_EVENTS, Event

log = logging.getLogger("dicecam.server.webhook")

OUTCOME_COLOURS = {"critical": 0x2E7D32, "success": 0x388E3C, "failure": 0xC62828, "disaster": 0x7B1FA2}


def discord_body(event: Event) -> dict[str, Any]:
    roll, adj = event.data, event.data.adjudication
    summary = (adj.summary if adj else None) or roll.reason or "A roll could not be read."
    dice = ", ".join(f"{d.type.value} {d.value}" for d in roll.dice)
    prefix = "Corrected: " if event.type == "roll.amended" else ""
    outcome = adj.outcome if adj else roll.status
    embed = {
        "title": f"{roll.system}: {outcome}",
        "description": "\n".join(adj.explanation if adj else [])[:4000],
        "fields": [{"name": "Dice", "value": dice or "none", "inline": False}],
        "timestamp": event.ts.isoformat(),
        "color": OUTCOME_COLOURS.get(adj.outcome.lower() if adj else "", 0x607D8B),
    }
    return {"content": (prefix + summary)[:2000], "embeds": [embed]}


class Webhook:
    def __init__(self, url: str, fmt: str = "json", timeout_s: float = 5.0, queue_size: int = 100):
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"webhook URL must start with http:// or https://, not {url!r}")
        self.url, self.fmt, self.timeout_s = url, fmt, timeout_s
        self._q: queue.Queue[Event | None] = queue.Queue(maxsize=queue_size)
        self.sent = 0
        self.failed = 0
        self._thread = threading.Thread(target=self._run, name="dicecam-webhook", daemon=True)
        self._thread.start()

    def __call__(self, event: Event) -> None:
        """Broker listener: queue roll events, never block."""
        if event.type not in ROLL_EVENTS:
            return
        try:
            self._q.put_nowait(event)
        except queue.Full:
            self.failed += 1
            log.warning("webhook queue full; a roll was not posted")

    def body(self, event: Event) -> bytes:
        payload = discord_body(event) if self.fmt == "discord" else event.model_dump(mode="json")
        return json.dumps(payload).encode()

    def _run(self) -> None:
        while True:
            event = self._q.get()
            if event is None:
                return
            req = urllib.request.Request(
                self.url, data=self.body(event), method="POST",
                headers={"Content-Type": "application/json", "User-Agent": "dicecam-webhook"},
            )
            try:
                with urllib.request.urlopen(req, timeout=self.timeout_s) as resp:
                    resp.read(1024)
                self.sent += 1
            except (urllib.error.URLError, OSError, ValueError) as e:
                self.failed += 1
                log.warning("webhook POST to %s failed: %s", self.url, e)

    def close(self, timeout: float = 2.0) -> None:
        try:
            self._q.put_nowait(None)
        except queue.Full:
            pass
        self._thread.join(timeout)
