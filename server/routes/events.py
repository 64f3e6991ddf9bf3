"""/api/events (Server-Sent Events and WebSocket, a snapshot first) and /api/health: what a page watches."""

from __future__ import annotations

import asyncio

from fastapi import HTTPException, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from dicecam.vision.stream import CameraStatus

from ..contract import answers
from ..events import Broker, Event
from ..table import Table
from .deps import TableDep, api_router, foreign

router = api_router()


class Health(BaseModel):
    ok: bool = Field(title="The server answers")
    camera: CameraStatus
    rolls: int = Field(title="Rolls stored")
    notices: list[str] = Field(title="Start-up problems the page shows")
    clients: int = Field(title="Pages connected to the event stream")


def _sse(broker: Broker, event: Event) -> str:
    return f"id: {event.id}\nevent: {event.type}\ndata: {broker.json(event)}\n\n"


@router.get("/events", summary="Events as Server-Sent Events (snapshot first)", tags=["events"],
            response_class=StreamingResponse,
            responses={200: {"content": {"text/event-stream": {}}, "description": "Events"}, **answers(503)})
async def events_sse(request: Request):
    table: Table = request.app.state.table
    broker: Broker = request.app.state.broker
    try:
        client = broker.connect()
    except OverflowError as e:
        raise HTTPException(503, str(e)) from None

    async def stream():
        try:
            yield _sse(broker, table.snapshot())
            while True:
                try:
                    ev = await asyncio.wait_for(client.next(), 15)
                except asyncio.TimeoutError:
                    yield ": keep-alive\n\n"
                    continue
                if ev is None:
                    return
                yield _sse(broker, ev)
        finally:
            broker.disconnect(client)

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


@router.websocket("/events/ws")
async def events_ws(websocket: WebSocket):
    table: Table = websocket.app.state.table
    broker: Broker = websocket.app.state.broker
    if foreign(websocket.headers.get("origin"), websocket.headers.get("host")):
        # Browsers let any page open a WebSocket anywhere (no same-origin rule, unlike SSE): a page of
        # another site must not read the table's rolls through one.
        await websocket.close(code=1008, reason="cross-origin event stream refused")
        return
    await websocket.accept()
    try:
        client = broker.connect()
    except OverflowError as e:
        await websocket.close(code=1013, reason=str(e)[:120])
        return

    async def drain():
        # Read (and ignore) whatever the page sends, so a closed socket is noticed at once.
        while True:
            await websocket.receive_text()

    reader = asyncio.create_task(drain())
    try:
        await websocket.send_text(table.snapshot().model_dump_json())
        while True:
            getter = asyncio.create_task(client.next())
            done, _ = await asyncio.wait({getter, reader}, return_when=asyncio.FIRST_COMPLETED)
            if reader in done:
                getter.cancel()
                return
            ev = getter.result()
            if ev is None:
                if broker.closing:
                    await websocket.close(code=1001, reason="server shutting down")
                else:
                    await websocket.close(code=1013, reason="too slow: reconnect for a fresh snapshot")
                return
            await websocket.send_text(broker.json(ev))
    except (WebSocketDisconnect, RuntimeError):
        return
    finally:
        reader.cancel()
        broker.disconnect(client)


@router.get("/health", response_model=Health, summary="Server, camera and rules status", tags=["config"])
def health(table: TableDep, request: Request) -> Health:
    return Health(ok=True, camera=table.camera, rolls=table.store.count(), notices=table.notices,
                  clients=request.app.state.broker.client_count)
