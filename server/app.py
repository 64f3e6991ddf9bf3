"""The web app factory: `create_app(settings, store, pipeline=None, reader=None)`.

Collaborators are injected so tests pass fakes: a pipeline (vision.pipeline.Pipeline in
production, see table.LivePipeline), a reader callable for uploads, and the rules.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Sequence

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from dicecam.mechanics.errors import DicecamError, LimitError, first_problem

from .api import router
from .api_memory import router as memory_router
from .events import Broker
from .hosts import CrossSiteGuard, HostGuard, HostPolicy
from .memory import TableMemory
from .rulebook import Rules, load_rules
from .settings import ServerSettings
from .store import RollStore
from .table import DiceReader, LivePipeline, Table

log = logging.getLogger("dicecam.server")

STATIC = Path(str(resources.files("dicecam.server") / "static"))
PAGES = {"/": "index.html", "/dice": "dice.html", "/overlay": "overlay.html", "/reader": "reader.html", "/docs": "api.html"}

DESCRIPTION = """Reads physical dice through a webcam and adjudicates the roll.

Events (`/api/events` as Server-Sent Events, `/api/events/ws` as WebSocket) start with a
`snapshot` (recent rolls, config, camera status), then carry `roll.settled`, `roll.amended`,
`roll.uncertain`, `camera.status` and `config.changed` in the envelope
`{"v": 1, "type", "id", "ts", "data"}`. When the server has a token, write endpoints need
`Authorization: Bearer TOKEN` (or `?token=TOKEN`); reading is always open. A change sent by a web page
of another origin (`Origin: null` included), or one the browser marks `Sec-Fetch-Site: cross-site` or
`same-site`, is refused unless it carries the token, and the server answers only to its own host
names (`dicecam serve --allowed-host NAME` adds one). Every refusal is
`{"detail": "one line"}`; a 422 adds `errors`, each with `loc` and `msg`.
"""


def _first_validation_message(exc: RequestValidationError) -> str:
    if not exc.errors():
        return "invalid request"
    err = exc.errors()[0]
    if err.get("type") == "json_invalid":
        # FastAPI puts the character position where a field name would go.
        pos = err.get("loc", ("body", None))[-1]
        at = f" at character {pos + 1}" if isinstance(pos, int) else ""
        return f"the request body is not valid JSON: {(err.get('ctx') or {}).get('error', 'cannot parse it')}{at}"
    loc, msg = first_problem(exc, skip=("body",))
    return f"{loc}: {msg}" if loc else f"request body: {msg}"


def create_app(
    settings: ServerSettings,
    store: RollStore | None = None,
    pipeline: LivePipeline | None = None,
    reader: DiceReader | None = None,
    rules: Rules | None = None,
    notices: Sequence[str] = (),
    listeners: Sequence = (),
) -> FastAPI:
    store = store if store is not None else RollStore(settings.db_path)
    rules = rules if rules is not None else load_rules()
    notices = list(notices)
    if hasattr(rules, "reason"):
        notices.append(f"Rules engine unavailable: {rules.reason}")
    broker = Broker(settings.client_queue, settings.max_clients)
    for fn in listeners:
        broker.add_listener(fn)
    table = Table(settings, store, rules, broker, pipeline, reader, notices)
    # The reader (shared with the live pipeline) reads with the table's dice memory from here on.
    table.memory = TableMemory.open(settings, reader)
    if table.memory.memory is None and settings.use_memory and reader is not None and (
            settings.memory_dir is not None or (settings.memory_folder / "memory.npz").is_file()):
        table.notices.append(f"Reading without the dice memory in {settings.memory_folder}: {table.memory.reason}")

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        broker.bind(asyncio.get_running_loop())
        if pipeline is not None:
            try:
                await asyncio.to_thread(pipeline.start)
            except Exception as e:  # the server still serves manual entry and history
                log.error("the live pipeline did not start: %s", e)
                table.notices.append(f"The camera pipeline did not start: {e}")
                table.set_camera("error", f"The camera pipeline did not start: {e}")
        try:
            yield
        finally:
            if pipeline is not None:
                try:
                    await asyncio.to_thread(pipeline.stop)
                except Exception:
                    log.exception("pipeline stop failed")

    # No Swagger UI or ReDoc: they load from a CDN; /docs is a small local page reading /openapi.json.
    app = FastAPI(title="dicecam", version="0.1.0", description=DESCRIPTION, lifespan=lifespan, docs_url=None,
                  redoc_url=None,
                  openapi_tags=[{"name": "rolls", "description": "History, manual entry, corrections, export"},
                                {"name": "rules", "description": "Systems, options and odds"},
                                {"name": "dice", "description": "Each physical die: its name, and is it fair?"},
                                {"name": "config", "description": "What the table is playing"},
                                {"name": "vision", "description": "Live video and uploaded photos"},
                                {"name": "events", "description": "Live events with a snapshot first"},
                                {"name": "memory", "description": "The table's own dice: teach, list, forget, carry"}])
    app.state.table = table
    app.state.broker = broker
    app.state.settings = settings
    app.state.memory = table.memory

    if pipeline is not None:
        pipeline.subscribe(table.on_pipeline_event)

    @app.exception_handler(DicecamError)
    async def _bad_input(request: Request, exc: DicecamError):
        status = getattr(exc, "status", 413 if isinstance(exc, LimitError) else 400)
        return JSONResponse({"detail": str(exc)}, status_code=status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        return JSONResponse({"detail": _first_validation_message(exc),
                             "errors": [{"loc": list(e.get("loc", ())), "msg": e.get("msg")} for e in exc.errors()[:20]]},
                            status_code=422)

    app.include_router(router)
    app.include_router(memory_router)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException):
        # A path served by several routes (GET and POST /api/rolls) must list all their methods in Allow,
        # not only those of the first route Starlette tried.
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            methods = set()
            for route in app.router.routes:
                regex, route_methods = getattr(route, "path_regex", None), getattr(route, "methods", None)
                if regex is not None and route_methods and regex.match(request.url.path):
                    methods |= set(route_methods)
            headers["Allow"] = ", ".join(sorted(methods))
        return JSONResponse({"detail": str(exc.detail)}, status_code=exc.status_code, headers=headers)

    def page(name: str):
        async def serve_page():
            return FileResponse(STATIC / name, media_type="text/html", headers={"Cache-Control": "no-cache"})
        return serve_page

    for path, name in PAGES.items():
        app.add_api_route(path, page(name), methods=["GET"], include_in_schema=False)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    # The last added runs first: a wrong Host is refused before anything else is looked at.
    app.add_middleware(CrossSiteGuard, settings=settings)
    app.add_middleware(HostGuard, policy=HostPolicy.of(settings))
    return app
