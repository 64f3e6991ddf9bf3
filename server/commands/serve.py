"""`dicecam serve`: the web view, overlay and reader, with the live pipeline in the background.

With no camera it starts on the demo clip and says so; with no reader (weights missing) or
no rules it still starts, manual entry and history working, and says why.

The dispatcher imports this module for every command: what only `serve` needs (pydantic, the app,
uvicorn, the reader, even socket and secrets) is imported when it runs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from urllib.parse import quote

from dicecam.mechanics.errors import DicecamError, first_problem, parse_int

from .flags import add_camera_size_flag, camera_size


def register(subparsers) -> None:
    """Add this module's subcommands; see server/cli.py for the contract."""
    p = subparsers.add_parser(
        "serve",
        help="serve the table view, the OBS overlay and the accessible reader",
        description="Serve the table view (/), the OBS overlay (/overlay) and the accessible reader (/reader), "
        "reading dice from the camera in the background. Without a camera it plays the demo clip.",
    )
    p.add_argument("--source", default="0", help="camera index, /dev/videoN, video file, stream URL or 'demo' (default 0)")
    p.add_argument("--system", nargs="+", action="extend", metavar="NAME",
                   help="system at start; more names limit the page's choice to those (default contingency)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="a system option at start, e.g. --option target=5 (repeatable)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1, this machine only)")
    p.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                   help="a host name the server may be reached by, e.g. dicecam.lan (repeatable; "
                   "loopback names and IP addresses need none)")
    add_camera_size_flag(p)
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--data", metavar="DIR", help="folder for the roll history and corrections (default ~/.local/share/dicecam)")
    p.add_argument("--token", help="token needed for changes; generated and printed when --host is not loopback")
    p.add_argument("--webhook", metavar="URL", help="POST each roll to this URL")
    p.add_argument("--webhook-format", choices=("json", "discord"), default="json", help="webhook body (default json)")
    p.add_argument("--memory", metavar="DIR",
                   help="the dice memory's folder (default: the data folder's memory/; 'none': the general reader alone)")
    p.add_argument("--frames-kept", type=int, default=None, metavar="N",
                   help="roll pictures kept in the history, the oldest dropped first (default 500; 0: none)")
    p.add_argument("--speak", action="store_true", help="speak each roll's summary through espeak-ng")
    p.set_defaults(handler=run)


def _options(pairs: list[str]) -> dict:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise DicecamError(f"bad --option {pair!r}: write KEY=VALUE, e.g. target=5")
        try:
            out[key.strip()] = json.loads(value, parse_int=parse_int)
        except ValueError:
            out[key.strip()] = value
    return out


def build_live(source_spec: str, system: str, options: dict, notices: list[str], say=print, camera: dict | None = None):
    """(pipeline, reader, camera note) — each None when it cannot be built, with the reason in notices. `camera`:
    open_source's keywords for a camera (`flags.camera_size`)."""
    try:
        from dicecam.vision.read import Reader

        reader = Reader.load()
    except Exception as e:  # weights missing, onnxruntime broken...
        notices.append(f"No dice reader: {e}. Manual entry still works.")
        say(f"dicecam serve: no dice reader ({e}); manual entry only")
        return None, None, None
    try:
        from dicecam.vision.pipeline import Pipeline
        from dicecam.vision.sources import is_camera, open_source, probe_camera
    except Exception as e:
        notices.append(f"No live pipeline: {e}. Manual entry and photo upload still work.")
        say(f"dicecam serve: no live pipeline ({e})")
        return None, reader, None
    note = None
    try:
        if is_camera(source_spec):
            probe_camera(source_spec)  # open_source opens lazily: probe now so a missing camera falls back
        source = open_source(source_spec, **(camera or {}))
    except Exception as e:
        if not is_camera(source_spec):
            notices.append(f"Cannot open {source_spec}: {e}")
            say(f"dicecam serve: cannot open {source_spec} ({e}); manual entry only")
            return None, reader, None
        note = f"No camera found at {source_spec} ({e}): showing the demo clip instead."
        say(f"dicecam serve: {note}")
        try:
            source = open_source("demo")
        except Exception as e2:
            notices.append(f"No camera and no demo clip: {e2}")
            say(f"dicecam serve: the demo clip is missing too ({e2}); manual entry only")
            return None, reader, None
        notices.append(note)
    if source_spec == "demo":
        note = "Showing the demo clip (started with --source demo)."
        notices.append(note)
    try:
        pipeline = Pipeline(source, reader.watching(), system, options)
    except Exception as e:
        notices.append(f"The live pipeline could not start: {e}")
        say(f"dicecam serve: the live pipeline could not start ({e})")
        return None, reader, None
    return pipeline, reader, note


def settings_from_args(args, say=print):
    """Validated settings; off loopback without --token a token is generated and printed."""
    import secrets
    import socket

    from pydantic import ValidationError

    from ..hosts import WILDCARD
    from ..settings import ServerSettings, is_loopback

    token = args.token
    if not is_loopback(args.host) and not token:
        token = secrets.token_urlsafe(24)
        say(f"dicecam serve: listening on {args.host}, so changes need a token: {token}")
    systems = list(args.system or [])
    allowed = list(args.allowed_host)
    if args.host in WILDCARD:
        # Listening everywhere: this machine's own name is a fair address for the phone or the OBS machine.
        name = socket.gethostname().lower()
        allowed += [name, f"{name}.local"] if name else []
    fields = dict(host=args.host, port=args.port, token=token, options=_options(args.option), allowed_hosts=allowed,
                  webhook_url=args.webhook, webhook_format=args.webhook_format, speak=args.speak)
    if systems:
        fields["system"] = systems[0]
        fields["systems"] = systems if len(systems) > 1 else []
    if args.data:
        fields["data_dir"] = Path(args.data).expanduser()
    if getattr(args, "frames_kept", None) is not None:
        fields["frames_kept"] = args.frames_kept
    memory = getattr(args, "memory", None)
    if memory is not None:
        if memory.strip().lower() == "none":
            fields["use_memory"] = False
        else:
            fields["memory_dir"] = Path(memory).expanduser()
    try:
        return ServerSettings(**fields)
    except ValidationError as e:
        where, msg = first_problem(e)
        raise DicecamError(f"{where + ': ' if where else ''}{msg}") from None


def banner(settings) -> list[str]:
    """The addresses to open: the table's with its token (a page without it cannot change anything),
    and the read-only overlay and reader, which are safe to share without it."""
    from ..hosts import WILDCARD

    shown = "127.0.0.1" if settings.host in WILDCARD else settings.host
    if ":" in shown:
        shown = f"[{shown}]"
    base = f"http://{shown}:{settings.port}"
    table = f"{base}/" + (f"?token={quote(settings.token)}" if settings.token_required else "")
    lines = [f"dicecam serve: table {table}  (history in {settings.data_dir})",
             f"  overlay {base}/overlay  reader {base}/reader"
             + ("  (read-only: share these, never the token)" if settings.token_required else "")]
    if settings.host in WILDCARD:
        names = f"; by name: {', '.join(settings.allowed_hosts)}" if settings.allowed_hosts else ""
        lines.append(f"  from another machine use this machine's address in place of 127.0.0.1{names}"
                     " (other names need --allowed-host NAME)")
    return lines


def _check_port(host: str, port: int) -> None:
    """Fail before loading the camera and models when the address is taken (uvicorn would fail later)."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as e:
        raise DicecamError(f"cannot listen on {host}: {e.strerror}") from None
    family, _, _, _, addr = infos[0]
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError as e:
            raise DicecamError(f"cannot listen on {host}:{port}: {e.strerror} (choose another --port)") from None


def run(args) -> int:
    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    settings = settings_from_args(args, say)
    camera = camera_size(args)

    from ..rulebook import load_rules

    rules = load_rules()
    for name in settings.systems or [settings.system]:
        rules.check_options(name, settings.options if name == settings.system else {})  # bad name or option: exit 2

    from ..store import RollStore, StoreError

    try:
        store = RollStore(settings.db_path)
    except (StoreError, OSError) as e:
        raise DicecamError(f"cannot use the roll store {settings.db_path}: {e}") from None

    listeners = []
    if settings.speak:
        from ..speech import Speaker

        listeners.append(Speaker())  # SpeechUnavailable is a DicecamError: one clear line
    if settings.webhook_url:
        from ..webhook import Webhook

        try:
            listeners.append(Webhook(settings.webhook_url, settings.webhook_format, settings.webhook_timeout_s))
        except ValueError as e:
            raise DicecamError(str(e)) from None

    _check_port(settings.host, settings.port)
    notices: list[str] = []
    pipeline, reader, note = build_live(args.source, settings.system, settings.options, notices, say, camera)

    import uvicorn

    from ..app import create_app

    app = create_app(settings, store, pipeline=pipeline, reader=reader, rules=rules, notices=notices,
                     listeners=listeners)
    if note:
        app.state.table.set_camera("demo", note, source="demo")
    for line in banner(settings):
        say(line)
    broker = app.state.broker

    class Server(uvicorn.Server):
        def handle_exit(self, sig, frame):
            # Open event streams and MJPEG viewers never end on their own: end them so Ctrl-C is quick.
            broker.close()
            super().handle_exit(sig, frame)

    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level="warning",
                            timeout_graceful_shutdown=5)
    Server(config).run()
    return 0
