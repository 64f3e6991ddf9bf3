"""The Host-header guard: answer only to the names this server was bound to.

Without it DNS rebinding reaches a loopback server: a page at evil.example re-points its name at
127.0.0.1 and its requests arrive with `Host: evil.example`, same-origin in the browser's eyes.
An IP literal cannot be re-pointed, so it is only the names that need a list.
"""

from __future__ import annotations

import ipaddress
import json
from typing import Iterable

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
