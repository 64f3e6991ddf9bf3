"""The web app factory: `create_app(settings, store, pipeline=None, reader=None)`.

Collaborators are injected so tests pass fakes: a pipeline (vision.pipeline.Pipeline in
production, see table.LivePipeline), a reader callable for uploads, and the rules.
"""

from __future__ import annotations

import asyncio
import html
import json
import logging
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Sequence

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from dicecam.mechanics import fairness
from dicecam.mechanics.errors import DicecamError, LimitError, first_problem

from .events import Broker
from .hosts import CrossSiteGuard, HostGuard, HostPolicy
from .memory import TableMemory
from .routes import ROUTERS
from .rulebook import Rules, load_rules
from .settings import ServerSettings
from .store import RollStore
from .table import DiceReader, LivePipeline, Table

log = logging.getLogger("dicecam.server")

STATIC = Path(str(resources.files("dicecam.server") / "static"))
PAGES = {"/": "index.html", "/dice": "dice.html", "/overlay": "overlay.html", "/reader": "reader.html", "/docs": "api.html"}
# What the table, reader and Dice pages say before their event stream opens: the state below is current.
LINK_TEXT = {"index.html": "Up to date", "reader.html": "Up to date with the table."}

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


def _script_json(obj) -> str:
    """JSON safe inside <script>: no '</script>', '<!--' or '&' can end or change it."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") \
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _fill(page: str, element_start: str, inner: str) -> str:
    """The element that starts with `element_start` (up to its first '>'), with `inner` as its content."""
    at = page.find(element_start)
    if at < 0:
        return page
    open_end = page.index(">", at) + 1
    close = page.index("</", open_end)
    return page[:open_end] + inner + page[close:]


def _camera_text(cam) -> str:
    return cam.message or f"Camera: {cam.status}"


def _banner(notices: list[str], cam) -> list[str]:
    """The table page's banner as table.js's showBanner draws it."""
    msgs = list(notices)
    if (cam.status == "demo" or cam.source == "demo") and not any("demo" in m.lower() for m in msgs):
        msgs.insert(0, cam.message or "No camera found: showing the demo clip.")
    if cam.status in ("error", "lost", "retrying"):
        msgs.insert(0, cam.message or "The camera failed.")
    return list(dict.fromkeys(msgs))


def initial_state(table: Table, name: str) -> dict:
    """What a page paints before its scripts have fetched anything: the snapshot its event stream starts
    with, and for the table page the systems and the odds, for the Dice page the fairness report."""
    state: dict = {}
    if name in ("index.html", "reader.html"):
        state["snapshot"] = table.snapshot().model_dump(mode="json")
    if name == "index.html":
        allowed = table.settings.systems
        try:
            state["systems"] = [s.model_dump(mode="json", by_alias=True) for s in table.rules.systems()
                                if not allowed or s.name in allowed]
        except Exception as e:  # the page asks /api/systems itself
            log.warning("no systems for the page: %s", e)
        try:
            state["odds"] = table.rules.odds(table.system, table.pool, table.options).model_dump(mode="json")
        except Exception:  # the page asks /api/odds, which says why
            state["odds"] = None
    if name == "dice.html":
        try:
            state["fairness"] = fairness.report(table.store.iter_all(demo=False), table.store.die_names(),
                                                fairness.FairnessSettings()).model_dump(mode="json")
        except Exception as e:  # the page asks /api/fairness, which says why
            log.warning("no fairness report for the page: %s", e)
    return state


def render_page(table: Table, name: str) -> str:
    """The page with its state painted in: the JSON its script starts from (#initial-state), and the
    parts a first paint shows filled in the HTML itself (the System list, the camera, the link)."""
    page = (STATIC / name).read_text(encoding="utf-8")
    if name not in ("index.html", "reader.html", "dice.html"):
        return page
    state = initial_state(table, name)
    esc = html.escape
    if name in LINK_TEXT:
        page = _fill(page, '<p id="link"', esc(LINK_TEXT[name]))
    if name == "index.html":
        snap = state["snapshot"]["data"]
        cam = table.camera
        page = _fill(page, '<figcaption id="camera-status"', esc(_camera_text(cam)))
        options = "".join(f'<option value="{esc(s["name"])}"{" selected" if s["name"] == table.system else ""}>'
                          f'{esc(s.get("title") or s["name"])}</option>' for s in state.get("systems", []))
        page = _fill(page, '<select id="system"', options)
        banner = _banner(snap.get("notices", []), cam)
        if banner:
            page = page.replace('<div id="banner" class="banner" hidden>',
                                '<div id="banner" class="banner">' + "".join(f"<p>{esc(m)}</p>" for m in banner), 1)
    if name == "dice.html" and state.get("fairness"):
        r = state["fairness"]
        page = _fill(page, '<p id="link"', esc(f"{r['rolls_seen']} rolls in the history, {r['readings']} readings counted"))
        page = _fill(page, '<p id="summary"', esc(r["summary"]))
    blob = f'<script type="application/json" id="initial-state">{_script_json(state)}</script>\n'
    return page.replace("</head>", blob + "</head>", 1)


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
    broker = Broker(settings.client_queue, settings.max_clients)
    for fn in listeners:
        broker.add_listener(fn)
    table = Table(settings, store, rules, broker, pipeline, reader, list(notices))
    # The reader (shared with the live pipeline) reads with the table's dice memory from here on.
    table.memory = TableMemory.open(settings, reader)
    if table.memory.memory is None and settings.use_memory and reader is not None and (
            settings.memory_dir is not None or (settings.memory_folder / "memory.npz").is_file()):
        table.notices.append(f"Reading without the dice memory in {settings.memory_folder}: {table.memory.reason}")

    # No Swagger UI or ReDoc: they load from a CDN; /docs is a small local page reading /openapi.json.
    app = FastAPI(title="dicecam", version="0.1.0", description=DESCRIPTION, lifespan=_lifespan(table, broker),
                  docs_url=None, redoc_url=None, openapi_tags=OPENAPI_TAGS)
    app.state.table = table
    app.state.broker = broker
    app.state.settings = settings
    app.state.memory = table.memory

    if pipeline is not None:
        pipeline.subscribe(table.on_pipeline_event)
    _answer_errors(app)
    for router in ROUTERS:
        app.include_router(router)
    _serve_pages(app, table)
    # The last added runs first: a wrong Host is refused before anything else is looked at.
    app.add_middleware(CrossSiteGuard, settings=settings)
    app.add_middleware(HostGuard, policy=HostPolicy.of(settings))
    return app


OPENAPI_TAGS = [{"name": "rolls", "description": "History, manual entry, corrections, export"},
                {"name": "rules", "description": "Systems, options and odds"},
                {"name": "dice", "description": "Each physical die: its name, and is it fair?"},
                {"name": "config", "description": "What the table is playing"},
                {"name": "vision", "description": "Live video and uploaded photos"},
                {"name": "events", "description": "Live events with a snapshot first"},
                {"name": "memory", "description": "The table's own dice: teach, list, forget, carry"}]


def _lifespan(table: Table, broker: Broker):
    """The app's start and stop: the broker bound to the server's loop, the live pipeline started and stopped.
    A pipeline that does not start leaves the server serving manual entry and history, saying why."""
    pipeline = table.pipeline

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

    return lifespan


def _answer_errors(app: FastAPI) -> None:
    """Every refusal as one line, `{"detail": ...}` (a 422 adds `errors`), in the shapes the API document names."""

    @app.exception_handler(DicecamError)
    async def _bad_input(request: Request, exc: DicecamError):
        status = getattr(exc, "status", 413 if isinstance(exc, LimitError) else 400)
        return JSONResponse({"detail": str(exc)}, status_code=status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        return JSONResponse({"detail": _first_validation_message(exc),
                             "errors": [{"loc": list(e.get("loc", ())), "msg": e.get("msg")} for e in exc.errors()[:20]]},
                            status_code=422)

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


def _serve_pages(app: FastAPI, table: Table) -> None:
    """The pages, each rendered with the table's state, and their static files."""

    def page(name: str):
        def serve_page():  # a worker thread: the state is read from the store
            return HTMLResponse(render_page(table, name), headers={"Cache-Control": "no-cache"})
        return serve_page

    for path, name in PAGES.items():
        app.add_api_route(path, page(name), methods=["GET"], include_in_schema=False)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
