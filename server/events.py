"""The events the server serves, and the broker that fans them out to every connected page without
letting a slow page hold up the rest.

The camera's events (a roll, the camera's status) and the envelope are `vision/stream.py`'s; the shapes
only the server makes live here: its configuration and the snapshot a page receives first.

The pipeline publishes from its own thread; the broker hops onto the server's asyncio loop
and puts the event on each client's bounded queue. A client whose queue is full is dropped
(its page reconnects and gets a fresh snapshot) so no client ever blocks another.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import Annotated, Any, Callable, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from dicecam.mechanics.roll import Roll
from dicecam.vision.stream import CameraEvent, CameraStatus, Envelope, RollEvent, make_event

__all__ = ["Broker", "Client", "Event", "Snapshot", "TableConfig", "make_event", "parse_event"]

log = logging.getLogger("dicecam.server.events")

# The events that carry a roll (speech and webhooks pass on only these).
ROLL_EVENTS = frozenset({"roll.settled", "roll.amended", "roll.uncertain"})

# Recent events' JSON kept per broker, so a burst sent to many pages is serialised once per event.
JSON_CACHE_SIZE = 512


class TableConfig(BaseModel):
    """The table's configured system, its options (as checked) and the pool the odds are shown for."""

    model_config = ConfigDict(extra="forbid")

    system: str = Field(title="System name")
    options: dict[str, Any] = Field(default_factory=dict, title="System options")
    pool: list[str] = Field(default_factory=list, title="Die types of the roll the odds are for")
    systems: list[str] = Field(default_factory=list, title="Systems offered on the page (empty: all)")
    token_required: bool = Field(default=False, title="Changes need the access token")


class Snapshot(BaseModel):
    """What a page receives first on connecting."""

    model_config = ConfigDict(extra="forbid")

    rolls: list[Roll] = Field(default_factory=list, title="Recent rolls, newest first")
    config: TableConfig
    camera: CameraStatus
    notices: list[str] = Field(default_factory=list, title="Start-up problems the page should show")


class ConfigEvent(Envelope):
    type: Literal["config.changed"]
    data: TableConfig


class SnapshotEvent(Envelope):
    type: Literal["snapshot"]
    data: Snapshot


# The envelope every page, WebSocket/SSE client and webhook receives.
Event = Annotated[Union[RollEvent, CameraEvent, ConfigEvent, SnapshotEvent], Field(discriminator="type")]
_EVENT = TypeAdapter(Event)
Listener = Callable[[Event], None]


def parse_event(obj: Any) -> Event:
    """An event from its JSON object (a client, a test, a stored line)."""
    return _EVENT.validate_python(obj)


class Client:
    """One connected page: a bounded queue and a flag set when it fell behind."""

    def __init__(self, maxsize: int):
        self.queue: asyncio.Queue[Event | None] = asyncio.Queue(maxsize=maxsize)
        self.dropped = False

    async def next(self) -> Event | None:
        """The next event, or None once the client has been dropped."""
        if self.dropped and self.queue.empty():
            return None
        ev = await self.queue.get()
        return ev


class Broker:
    def __init__(self, queue_size: int = 256, max_clients: int = 500):
        self.queue_size = queue_size
        self.max_clients = max_clients
        self._clients: set[Client] = set()
        self._listeners: list[Listener] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self.dropped_clients = 0
        self.closing = False
        self._json: OrderedDict[str, str] = OrderedDict()

    def close(self) -> None:
        """Server shutting down: end every stream now (safe from a signal handler or any thread)."""
        self.closing = True
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(self._end_all)
            except RuntimeError:
                pass

    def _end_all(self) -> None:
        for client in list(self._clients):
            client.dropped = True
            while True:
                try:
                    client.queue.put_nowait(None)
                    break
                except asyncio.QueueFull:
                    client.queue.get_nowait()
        self._clients.clear()

    def json(self, event: Event) -> str:
        """The event as JSON text, made once however many clients are sent it (an event is never changed
        after it is published; ids are unique). Called on the server's event loop only."""
        text = self._json.get(event.id)
        if text is None:
            text = self._json[event.id] = event.model_dump_json()
            if len(self._json) > JSON_CACHE_SIZE:
                self._json.popitem(last=False)
        return text

    # -- wiring ---------------------------------------------------------------
    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop

    def add_listener(self, fn: Listener) -> None:
        """A synchronous callback run for every event (webhook, speech); it must not block."""
        self._listeners.append(fn)

    @property
    def client_count(self) -> int:
        return len(self._clients)

    def connect(self) -> Client:
        if len(self._clients) >= self.max_clients:
            raise OverflowError(f"too many event clients (limit {self.max_clients})")
        client = Client(self.queue_size)
        self._clients.add(client)
        return client

    def disconnect(self, client: Client) -> None:
        self._clients.discard(client)

    # -- publishing -----------------------------------------------------------
    def publish(self, event: Event) -> None:
        """Safe from any thread. Before the loop is bound (no server yet) events still reach listeners."""
        loop = self._loop
        if loop is None or loop.is_closed():
            self._deliver(event)
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._deliver(event)
        else:
            try:
                loop.call_soon_threadsafe(self._deliver, event)
            except RuntimeError:  # loop closed between the check and the call
                pass

    def _deliver(self, event: Event) -> None:
        for client in list(self._clients):
            if client.dropped:
                continue
            try:
                client.queue.put_nowait(event)
            except asyncio.QueueFull:
                client.dropped = True
                self.dropped_clients += 1
                self._clients.discard(client)
                log.warning("dropped a slow event client (queue of %d full)", self.queue_size)
                # Wake its sender so it can close; it reads None and ends.
                try:
                    client.queue.get_nowait()
                    client.queue.put_nowait(None)
                except (asyncio.QueueEmpty, asyncio.QueueFull):
                    pass
        for fn in self._listeners:
            try:
                fn(event)
            except Exception:  # a listener's failure is logged, never fatal
                log.exception("event listener failed")
