"""Request guards below the routes: the Host header, and changes another web site's page sends.

HostGuard answers only to the names this server was bound to. Without it DNS rebinding reaches a
loopback server: a page at evil.example re-points its name at 127.0.0.1 and its requests arrive
with `Host: evil.example`, same-origin in the browser's eyes. An IP literal cannot be re-pointed,
so it is only the names that need a list.

CrossSiteGuard refuses a change (POST, PUT, PATCH, DELETE) that the browser itself marks as sent by
another site's page (`Sec-Fetch-Site: cross-site` or `same-site`) unless it carries the table's
token, as the write endpoints refuse a foreign `Origin` header (api.require_token).
"""

from __future__ import annotations

import ipaddress
import json
import secrets
from typing import Iterable
from urllib.parse import parse_qsl

from .settings import ServerSettings, is_loopback

WILDCARD = {"0.0.0.0", "::", "[::]"}


def host_name(header: str) -> str:
    """The name part of a Host header, lower-case: 'Example:8000' -> 'example', '[::1]:80' -> '::1'."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].split("]", 1)[0]
    if header.count(":") > 1:  # a bare IPv6 address, as some clients send it
        return header
    return header.rsplit(":", 1)[0] if ":" in header else header


def _ip(name: str) -> ipaddress._BaseAddress | None:
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


class HostPolicy:
    """Which Host headers reach the app: loopback names on loopback, the bound address, the allowed names."""

    def __init__(self, bound: str, allowed: Iterable[str] = ()):
        self.bound = host_name(bound)
        self.loopback = is_loopback(self.bound)
        self.wildcard = bound.lower() in WILDCARD
        self.allowed = {a.strip().lower().rstrip(".") for a in allowed if a.strip()}

    @classmethod
    def of(cls, settings: ServerSettings) -> "HostPolicy":
        return cls(settings.host, settings.allowed_hosts)

    def accepts(self, header: str | None) -> bool:
        if not header:
            return False  # HTTP/1.1 requires one; a client without it is not a browser page anyway
        name = host_name(header).rstrip(".")
        if name in self.allowed or name == self.bound:
            return True
        if self.loopback:
            return is_loopback(name)
        if self.wildcard:
            # Any address of this machine may be in the URL (LAN IP, 127.0.0.1); names must be listed.
            return _ip(name) is not None or is_loopback(name)
        return False

    def refusal(self, header: str | None) -> str:
        shown = (header or "")[:100]
        if not header:
            return "this server needs a Host header"
        return (f"this server does not answer to the host {shown!r}; "
                f"start it with --allowed-host {host_name(shown) or 'NAME'} to reach it by that name")


class HostGuard:
    """Pure ASGI middleware, so pages, the API, the MJPEG stream, SSE and WebSocket are all covered."""

    def __init__(self, app, policy: HostPolicy):
        self.app, self.policy = app, policy

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        header = None
        for k, v in scope.get("headers", ()):
            if k == b"host":
                header = v.decode("latin-1")
                break
        if self.policy.accepts(header):
            return await self.app(scope, receive, send)
        reason = self.policy.refusal(header)
        if scope["type"] == "websocket":
            # Closing before accepting makes the server answer the handshake with 403.
            await send({"type": "websocket.close", "code": 1008, "reason": reason[:120]})
            return
        body = json.dumps({"detail": reason}).encode()
        await send({"type": "http.response.start", "status": 400,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


# Methods that change the table; GET and HEAD only read, and a WebSocket handshake is a GET.
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# What the browser says about the page that sent a request: "same-origin" is this server's own page
# and "none" a user typing the URL or a bookmark; any other site, even a sibling port or subdomain
# (same-site), is no page of this server's.
FOREIGN_FETCH_SITES = frozenset({"cross-site", "same-site"})


def carries_token(settings: ServerSettings, authorization: str, query_token: str) -> bool:
    """The request carries the table's token, as `Authorization: Bearer TOKEN` or `?token=TOKEN`
    (the same two ways api.require_token accepts); never true on a server without a token."""
    given = authorization[7:].strip() if authorization.lower().startswith("bearer ") else query_token
    return settings.token_required and secrets.compare_digest(given.encode(), settings.token.encode())


class CrossSiteGuard:
    """Pure ASGI middleware: a change from another site's page, by its `Sec-Fetch-Site`, needs the token.

    A browser sends no `Origin` on some requests that still carry a change (older browsers on a
    form POST, some privacy settings strip it), but every current browser sends `Sec-Fetch-Site`
    and no page can forge it. A request without the header (curl, the CLI, old browsers) is left
    to the Origin and token checks of the routes, as before."""

    def __init__(self, app, settings: ServerSettings):
        self.app, self.settings = app, settings

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method", "GET").upper() not in STATE_CHANGING:
            return await self.app(scope, receive, send)
        site, authorization = None, ""
        for k, v in scope.get("headers", ()):
            if k == b"sec-fetch-site":
                site = v.decode("latin-1").strip().lower()
            elif k == b"authorization":
                authorization = v.decode("latin-1")
        if site not in FOREIGN_FETCH_SITES:
            return await self.app(scope, receive, send)
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        if carries_token(self.settings, authorization, query.get("token", "")):
            return await self.app(scope, receive, send)
        # Another web site open in the same browser must not change this table's rolls (CSRF).
        body = json.dumps({"detail": f"cross-site change refused (Sec-Fetch-Site: {site})"}).encode()
        await send({"type": "http.response.start", "status": 403,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
