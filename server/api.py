"""REST and event routes under /api. Thin: validation here, the roll flow in table.Table."""

from __future__ import annotations

import asyncio
import secrets
import time
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, File, HTTPException, Query, Request, UploadFile, WebSocket, WebSocketDisconnect
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dicecam.mechanics.dice import ImageRead
from dicecam.mechanics import fairness
from dicecam.mechanics.errors import DicecamError, first_problem
from dicecam.mechanics.odds import Odds
from dicecam.mechanics.roll import Roll
from dicecam.vision.images import decode_image
from dicecam.vision.stream import CameraStatus

from .contract import CSVResponse, Die, JPEGResponse, JSONRoute, answers
from .events import Broker, Event, TableConfig
from .rulebook import SystemInfo
from .store import ExportedRoll
from .table import Table


# Every route may answer 400 (the Host guard) and 422 (FastAPI's validation, in our ValidationProblem shape).
router = APIRouter(prefix="/api", route_class=JSONRoute, responses=answers(400, 422))
WRITE_ANSWERS = answers(401, 403)

MAX_DICE = 100


# -- request and response models -------------------------------------------------
class ResolveRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    system: str | None = Field(default=None, max_length=64, title="System (default: the configured one)")
    options: dict[str, Any] | None = Field(default=None, title="System options (default: the configured ones)")
    dice: list[Die] = Field(min_length=1, max_length=MAX_DICE, title="Dice as read, e.g. \"d6:5\" or objects")
    follows: str | None = Field(default=None, max_length=64, title="Id of the roll this continues")


class AmendRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    dice: list[Die] = Field(min_length=1, max_length=MAX_DICE, title="The corrected dice, all of them")
    system: str | None = Field(default=None, max_length=64, title="System (default: the original roll's)")
    options: dict[str, Any] | None = Field(default=None, title="Options (default: the original roll's when the system "
                                           "is unchanged, else the new system's defaults)")


class ConfigRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    system: str = Field(max_length=64, title="System name")
    options: dict[str, Any] = Field(default_factory=dict, title="System options")
    pool: list[str] | None = Field(default=None, max_length=MAX_DICE, title="Dice pool for the odds (default: the system's)")


class OddsRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    system: str = Field(max_length=64, title="System name")
    pool: list[str] | None = Field(default=None, max_length=MAX_DICE, title="Dice kinds, e.g. [\"d6\", \"d6\"]")
    options: dict[str, Any] = Field(default_factory=dict, title="System options")


class RollWithAmendments(Roll):
    amendments: list[Roll] = Field(default_factory=list, title="Corrections of this roll, oldest first")


class HistoryPage(BaseModel):
    items: list[Roll] = Field(title="Rolls, newest first")
    total: int = Field(title="Rolls stored")
    offset: int
    limit: int


class ReadResult(BaseModel):
    read: ImageRead = Field(title="The dice read from the image")
    roll: Roll | None = Field(default=None, title="The stored roll, when it could be adjudicated")
    error: str | None = Field(default=None, title="Why no roll was stored")


class DieNameRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    die: str = Field(min_length=3, max_length=40, title="The die as TYPE:COLOUR, e.g. d20:red (d20: when no colour is read)")
    name: str | None = Field(default=None, max_length=40, title="Its name; empty or null forgets the name")


class DieNames(BaseModel):
    names: dict[str, str] = Field(title="Names by TYPE:COLOUR key")


class Health(BaseModel):
    ok: bool = Field(title="The server answers")
    camera: CameraStatus
    rolls: int = Field(title="Rolls stored")
    notices: list[str] = Field(title="Start-up problems the page shows")
    clients: int = Field(title="Pages connected to the event stream")


# -- dependencies --------------------------------------------------------------
def get_table(request: Request) -> Table:
    return request.app.state.table


def foreign(origin: str | None, host: str | None) -> bool:
    """A browser request from a page of another site. "null" is foreign too: a sandboxed iframe or a
    file:// page sends it, and their form uploads need no CORS preflight."""
    return origin is not None and urlsplit(origin).netloc != (host or "")


def require_token(request: Request) -> None:
    """Write and control endpoints: same-origin or carrying the token, and the token when the server has one."""
    settings = request.app.state.table.settings
    auth = request.headers.get("authorization", "")
    given = auth[7:].strip() if auth.lower().startswith("bearer ") else request.query_params.get("token", "")
    has_token = settings.token_required and secrets.compare_digest(given.encode(), settings.token.encode())
    origin = request.headers.get("origin")
    if foreign(origin, request.headers.get("host")) and not has_token:
        # Another web site open in the same browser must not change this table's rolls (CSRF).
        raise HTTPException(403, f"cross-origin change refused (from {origin[:100]})")
    if settings.token_required and not has_token:
        raise HTTPException(
            status_code=401,
            detail="this server needs its token for changes: send 'Authorization: Bearer TOKEN' or add ?token=TOKEN",
            headers={"WWW-Authenticate": "Bearer"},
        )


def json_answers(*codes: int) -> dict[int | str, dict[str, Any]]:
    """`answers` for a route whose success is not JSON (a JPEG): FastAPI documents a `model` answer in the
    route's own media type, so its refusals would read as image/jpeg; they are sent as JSON."""
    out: dict[int | str, dict[str, Any]] = {}
    for code, answer in answers(*codes).items():
        name = answer["model"].__name__
        out[code] = {"description": answer["description"],
                     "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{name}"}}}}
    return out


TableDep = Annotated[Table, Depends(get_table)]
Write = [Depends(require_token)]


# -- rolls ---------------------------------------------------------------------
@router.get("/rolls", response_model=HistoryPage, summary="Roll history, newest first", tags=["rolls"])
def history(table: TableDep, offset: int = Query(0, ge=0, le=10_000_000), limit: int = Query(50, ge=1, le=10_000)):
    """One page of the stored rolls, amendments included (they name the roll they amend)."""
    limit = min(limit, table.settings.page_max)
    page = table.store.page(offset, limit)
    return HistoryPage(items=page.items, total=page.total, offset=offset, limit=limit)


@router.get("/rolls/{roll_id}", response_model=RollWithAmendments, summary="One roll and its amendments", tags=["rolls"],
            responses=answers(404))
def one_roll(roll_id: str, table: TableDep):
    roll = table.store.get(roll_id)
    if roll is None:
        raise HTTPException(404, f"no roll {roll_id!r}")
    return RollWithAmendments(**roll.model_dump(), amendments=table.store.amendments(roll_id))


@router.post("/rolls", response_model=Roll, status_code=201, dependencies=Write, summary="Enter a roll by hand",
             tags=["rolls"], responses={**WRITE_ANSWERS, **answers(413)})
def manual_roll(body: ResolveRequest, table: TableDep):
    """Adjudicate dice typed in at the table; stored with source "manual" and announced as roll.settled."""
    return table.manual(body.system, body.options, body.dice, follows=body.follows)


@router.post("/rolls/{roll_id}/amend", response_model=Roll, status_code=201, dependencies=Write,
             summary="Correct a misread roll", tags=["rolls"], responses={**WRITE_ANSWERS, **answers(404, 413)})
def amend_roll(roll_id: str, body: AmendRequest, table: TableDep):
    """Re-adjudicate with corrected dice. The original stays; the correction is a new roll with `amends`
    set, announced as roll.amended, and saved with its frame as a training example."""
    try:
        return table.amend(roll_id, body.dice, body.system, body.options)
    except KeyError:
        raise HTTPException(404, f"no roll {roll_id!r} to amend") from None


def frame_path(roll_id: str) -> str:
    return f"/api/rolls/{roll_id}/frame.jpg"


@router.get("/rolls/{roll_id}/frame.jpg", summary="The picture a roll was read from, dice boxed", tags=["rolls"],
            response_class=JPEGResponse,
            responses={200: {"content": {"image/jpeg": {"schema": {"type": "string", "format": "binary"}}},
                             "description": "JPEG, longest side at most 960 px, each die boxed and labelled as read"},
                       **json_answers(400, 404, 422)})
def roll_frame(roll_id: str, table: TableDep):
    """The camera frame or uploaded photo the roll's dice were read from, kept in the roll store as proof.
    A correction shows the picture of the roll it corrects (its boxes say what was first read). Rolls typed
    by hand have none, and only the newest `frames_kept` pictures are kept."""
    roll = table.store.get(roll_id)
    if roll is None:
        raise HTTPException(404, f"no roll {roll_id!r}")
    owner = table.store.frame_owner(roll)
    frame = table.store.frame(owner) if owner is not None else None
    if frame is None:
        raise HTTPException(404, _no_frame(roll, table.settings.frames_kept))
    # A roll's picture never changes: the browser may keep it.
    return Response(frame.jpeg, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=86400"})


def _no_frame(roll: Roll, kept: int) -> str:
    if roll.source == "manual":
        return "this roll was typed by hand: it has no picture"
    if kept <= 0:
        return "this server keeps no pictures (frames_kept is 0)"
    return f"no picture is kept for this roll (the store keeps the newest {kept})"


@router.get("/export.csv", summary="Every roll as CSV (demo rolls left out)", tags=["rolls"], response_class=CSVResponse,
            responses={200: {"content": {"text/csv": {"schema": {"type": "string"}}}, "description": "One roll a row"}})
def export_csv(table: TableDep):
    """Oldest first, one roll a row. The table's record: rolls of the bundled demo clip are left out."""
    return StreamingResponse(table.store.export_csv(), media_type="text/csv",
                             headers={"Content-Disposition": 'attachment; filename="dicecam-rolls.csv"'})


@router.get("/export.json", summary="Every roll as JSON (demo rolls left out)", tags=["rolls"], response_model=list[ExportedRoll])
def export_json(table: TableDep):
    """Oldest first; each roll's `frame` is the path of its picture, or null (typed by hand, or no longer kept).
    The table's record: rolls of the bundled demo clip are left out."""
    return StreamingResponse(table.store.export_json(frame_path), media_type="application/json",
                             headers={"Content-Disposition": 'attachment; filename="dicecam-rolls.json"'})


# -- dice -------------------------------------------------------------------------
@router.get("/fairness", response_model=fairness.FairnessReport, summary="Is each die fair? From the roll history",
            tags=["dice"])
def fairness_report(
    table: TableDep,
    die: str | None = Query(None, max_length=64, description="Only this die: its name, TYPE:COLOUR or label (red d20)"),
    alpha: float = Query(0.01, gt=0, lt=0.5, description="False-alarm rate: a fair die is flagged this often"),
    power: float = Query(0.8, gt=0, lt=1, description="How often a die loaded by `ratio` should be flagged"),
    ratio: float = Query(2.0, ge=0, le=20, description="The loading to plan for: one face this many times as often"),
):
    """Per physical die (kind + colour, or the name given to it): counts per face, a chi-square test against a
    fair die with its verdict in plain words, and the rolls such a test needs. Corrections count with their
    corrected value; uncertain readings are left out and counted. Demo rolls (source "demo") are never counted."""
    try:
        settings = fairness.FairnessSettings(alpha=alpha, power=power, ratio=ratio)
    except ValidationError as e:
        raise HTTPException(400, first_problem(e)[1]) from None
    return fairness.report(table.store.iter_all(demo=False), table.store.die_names(), settings, die)


@router.get("/dice/names", response_model=DieNames, summary="The names given to physical dice", tags=["dice"])
def die_names(table: TableDep):
    return DieNames(names=table.store.die_names())


@router.put("/dice/names", response_model=DieNames, dependencies=Write, summary="Name a physical die", tags=["dice"])
def name_die(body: DieNameRequest, table: TableDep):
    """A die is its kind and body colour; two colours of one kind given the same name count as one die
    (a colour the camera reads two ways). A name belongs to one kind of die."""
    kind, colour = fairness.parse_key(body.die)
    key = fairness.key_of(kind, colour)
    name = " ".join((body.name or "").split())
    names = table.store.die_names()
    for other, given in names.items():
        if not name or given.lower() != name.lower():
            continue
        if not other.startswith(kind.value + ":"):
            raise HTTPException(400, f"{given!r} already names a {other.partition(':')[0]}; a name belongs to one kind of die")
        name = given  # one spelling, so the two colours group as one die
    return DieNames(names=table.store.name_die(key, name or None))


# -- rules -----------------------------------------------------------------------
@router.get("/systems", response_model=list[SystemInfo], summary="The rule systems and their options' JSON schemas",
            tags=["rules"])
def systems(table: TableDep) -> list[SystemInfo]:
    allowed = table.settings.systems
    return [s for s in table.rules.systems() if not allowed or s.name in allowed]


@router.get("/config", response_model=TableConfig, summary="The configured system, options and pool", tags=["config"])
def get_config(table: TableDep) -> TableConfig:
    return table.config()


@router.put("/config", response_model=TableConfig, dependencies=Write, summary="Choose the system and its options", tags=["config"],
            responses={**WRITE_ANSWERS, **answers(413)})
def put_config(body: ConfigRequest, table: TableDep) -> TableConfig:
    """Validated against the system's options; the live pipeline adjudicates the next roll with it."""
    allowed = table.settings.systems
    if allowed and body.system not in allowed:
        raise DicecamError(f"system {body.system!r} is not offered here (offered: {', '.join(allowed)})")
    return table.configure(body.system, body.options, body.pool)


@router.get("/odds", response_model=Odds, summary="Odds of the configured roll", tags=["rules"])
def odds_configured(table: TableDep) -> Odds:
    return table.rules.odds(table.system, table.pool, table.options)


@router.post("/odds", response_model=Odds, summary="Odds of any roll", tags=["rules"], responses=answers(413))
def odds(body: OddsRequest, table: TableDep) -> Odds:
    options = table.rules.check_options(body.system, body.options)
    pool = body.pool or table.rules.default_pool(body.system, options)
    return table.rules.odds(body.system, pool, options)


# -- images and video ----------------------------------------------------------------
@router.post("/read", response_model=ReadResult, dependencies=Write, summary="Read the dice in an uploaded photo",
             tags=["vision"], responses={**WRITE_ANSWERS, **answers(413, 415, 503)})
async def read_upload(
    table: TableDep,
    image: UploadFile = File(..., description="PNG, JPEG, BMP or WebP photo of the dice"),
    store: bool = Query(True, description="Adjudicate with the configured system and store the roll"),
):
    """Capped in bytes and pixels; a stored roll keeps the photo, dice boxed, as its picture
    (`/api/rolls/{id}/frame.jpg`)."""
    s = table.settings
    data = await image.read(s.max_upload_bytes + 1)
    if table.reader is None:
        raise HTTPException(503, "no dice reader is loaded on this server: " + "; ".join(table.notices or ["unknown"]))
    # The same loader as `dicecam read`: caps checked from the header before any pixel is decoded.
    frame = await asyncio.to_thread(decode_image, data, max_bytes=s.max_upload_bytes, max_pixels=s.max_upload_pixels)
    return await asyncio.to_thread(_read_and_store, table, frame, image.filename or "upload", store)


def _read_and_store(table: Table, frame, name: str, store: bool) -> ReadResult:
    dice = table.reader(frame)
    read = ImageRead(image=name[:255], width=frame.shape[1], height=frame.shape[0], dice=dice)
    if not store or not dice:
        return ReadResult(read=read, error=None if dice else "no dice found in the image")
    try:
        roll = table.manual(None, None, dice, source="upload", frame=frame)
    except DicecamError as e:
        return ReadResult(read=read, error=str(e))
    return ReadResult(read=read, roll=roll)


@router.get("/frame.jpg", summary="The newest camera frame, dice boxed", tags=["vision"], response_class=JPEGResponse,
            responses={200: {"content": {"image/jpeg": {"schema": {"type": "string", "format": "binary"}}},
                             "description": "JPEG"}, **json_answers(400, 422, 503)})
async def frame_jpg(table: TableDep):
    if table.pipeline is None:
        raise HTTPException(503, "no live camera on this server")
    got = await asyncio.to_thread(table.live_jpeg)
    if got is None:
        raise HTTPException(503, "the camera has not delivered a frame yet")
    return Response(got[1], media_type="image/jpeg", headers={"Cache-Control": "no-store", "X-Frame-Id": str(got[0])})


@router.get("/video.mjpg", summary="Live video, dice boxed (MJPEG)", tags=["vision"], response_class=StreamingResponse,
            responses={200: {"content": {"multipart/x-mixed-replace": {}}, "description": "JPEG parts"}, **answers(503)})
async def video(table: TableDep, frames: int | None = Query(None, ge=1, le=1_000_000, description="Stop after N frames")):
    if table.pipeline is None:
        raise HTTPException(503, "no live camera on this server")
    period = 1.0 / table.settings.video_fps

    async def parts():
        # Each part ends with the next boundary: browsers show a part only once they see the boundary
        # after it, so a still camera would otherwise never show its frame.
        # A still frame is sent again each second: some browsers paint a part only when the next arrives.
        sent, last, last_at, part = 0, None, 0.0, b""
        yield b"--frame\r\n"
        broker: Broker = table.broker
        while (frames is None or sent < frames) and not broker.closing:
            latest = table.pipeline.latest_frame()
            now = time.monotonic()
            if latest is not None and (latest[0] != last or now - last_at >= 1.0):
                if latest[0] != last or not part:
                    got = await asyncio.to_thread(table.live_jpeg)
                    if got is None:
                        await asyncio.sleep(period)
                        continue
                    last = got[0]
                    part = (b"Content-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n" % len(got[1])
                            + got[1] + b"\r\n--frame\r\n")
                yield part
                sent, last_at = sent + 1, now
            await asyncio.sleep(period)

    return StreamingResponse(parts(), media_type="multipart/x-mixed-replace; boundary=frame",
                             headers={"Cache-Control": "no-store"})


# -- events ---------------------------------------------------------------------
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
