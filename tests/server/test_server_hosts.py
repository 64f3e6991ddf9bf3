"""Two ways in from a web page the player happens to open: an `Origin: null` upload and DNS rebinding.

Each test drives the app as a real server does (uvicorn over a socket where the raw Host header matters)."""

from __future__ import annotations

import cv2
import httpx
import pytest

from conftest import FakePipeline, FakeReader, FakeRules, LiveServer, make_settings, sample_frame
from dicecam.server.app import create_app
from dicecam.server.hosts import HostPolicy, host_name
from dicecam.server.store import RollStore

ROLL = {"dice": ["d6:3", "d6:5"]}


@pytest.fixture
def served(tmp_path):
    """A real loopback server with the settings `dicecam serve` makes (no test host names allowed)."""
    s = make_settings(tmp_path, allowed_hosts=[])
    store = RollStore(s.db_path)
    app = create_app(s, store, pipeline=FakePipeline(), reader=FakeReader(), rules=FakeRules())
    with LiveServer(app) as srv:
        yield srv, store
    store.close()


def test_null_origin_is_foreign_for_uploads_and_rolls(served):
    """A sandboxed iframe or a file:// page sends `Origin: null`; its form upload needs no CORS preflight."""
    srv, store = served
    ok, png = cv2.imencode(".png", sample_frame())
    with httpx.Client(base_url=srv.url, timeout=10) as c:
        r = c.post("/api/read", files={"image": ("f.png", png.tobytes(), "image/png")}, headers={"Origin": "null"})
        assert r.status_code == 403 and "cross-origin" in r.json()["detail"]
        r = c.post("/api/rolls", json=ROLL, headers={"Origin": "null"})
        assert r.status_code == 403
        assert store.count() == 0
        same = c.post("/api/rolls", json=ROLL, headers={"Origin": srv.url})  # the server's own page
        assert same.status_code == 201 and store.count() == 1


def test_rebound_name_reaches_nothing(served):
    """DNS rebinding: evil.example now points at 127.0.0.1, so the browser sends its own name as Host."""
    srv, store = served
    evil = {"Host": f"evil.example:{srv.port}", "Origin": f"http://evil.example:{srv.port}"}
    with httpx.Client(base_url=srv.url, timeout=10) as c:
        r = c.post("/api/rolls", json={"dice": ["d6:3", "d8:7", "d10:0"]}, headers=evil)
        assert r.status_code == 400 and "--allowed-host evil.example" in r.json()["detail"]
        for path in ("/", "/overlay", "/reader", "/api/rolls", "/api/config", "/api/export.csv",
                     "/static/js/common.js", "/api/frame.jpg", "/openapi.json"):
            assert c.get(path, headers=evil).status_code == 400, path
        with c.stream("GET", "/api/events", headers=evil) as sse:
            assert sse.status_code == 400
        with c.stream("GET", "/api/video.mjpg?frames=1", headers=evil) as mjpg:
            assert mjpg.status_code == 400
        # the loopback names the browser may use all work
        for host in ("127.0.0.1", "localhost", "[::1]", "127.0.0.2"):
            assert c.get("/api/config", headers={"Host": f"{host}:{srv.port}"}).status_code == 200, host
    assert store.count() == 0


def _handshake(port: int, host: str, origin: str | None = None) -> str:
    """The status line a WebSocket upgrade with this Host header gets (raw, so the Host is exactly ours)."""
    import base64
    import os
    import socket

    key = base64.b64encode(os.urandom(16)).decode()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall((f"GET /api/events/ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
                      f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                      + (f"Origin: {origin}\r\n" if origin else "") + "\r\n").encode())
        return sock.recv(4096).decode("latin-1").split("\r\n", 1)[0]


def test_rebound_name_gets_no_websocket(served):
    srv, _ = served
    assert " 403 " in _handshake(srv.port, f"evil.example:{srv.port}")
    assert " 101 " in _handshake(srv.port, f"localhost:{srv.port}")


def test_a_page_of_another_site_reads_no_events_through_a_websocket(served):
    """Browsers apply no same-origin rule to WebSockets, so the server checks the Origin itself."""
    srv, _ = served
    host = f"127.0.0.1:{srv.port}"
    assert " 403 " in _handshake(srv.port, host, origin="http://evil.example")
    assert " 403 " in _handshake(srv.port, host, origin="null")
    assert " 101 " in _handshake(srv.port, host, origin=f"http://{host}")  # the server's own pages
    assert " 101 " in _handshake(srv.port, host)  # a program, not a browser page


def test_a_change_from_another_origin_passes_only_with_the_token(tmp_path):
    """Off loopback a tool on another origin (a stream deck page) may write when it carries the token."""
    s = make_settings(tmp_path, host="0.0.0.0", token="s3cret-token", allowed_hosts=[])
    store = RollStore(s.db_path)
    with LiveServer(create_app(s, store, rules=FakeRules())) as srv, httpx.Client(base_url=srv.url, timeout=10) as c:
        for origin in ("null", "http://deck.example"):
            assert c.post("/api/rolls", json=ROLL, headers={"Origin": origin}).status_code == 403
            assert c.post("/api/rolls?token=wrong-token", json=ROLL, headers={"Origin": origin}).status_code == 403
            ok = c.post("/api/rolls", json=ROLL, headers={"Origin": origin, "Authorization": "Bearer s3cret-token"})
            assert ok.status_code == 201
    assert store.count() == 2
    store.close()


@pytest.mark.parametrize(
    "bound, allowed, header, ok",
    [
        ("127.0.0.1", [], "127.0.0.1:8000", True),
        ("127.0.0.1", [], "localhost", True),
        ("127.0.0.1", [], "LOCALHOST:8000", True),
        ("127.0.0.1", [], "[::1]:8000", True),
        ("127.0.0.1", [], "evil.example:8000", False),
        ("127.0.0.1", [], "192.168.1.5:8000", False),  # not an address a loopback server is reached by
        ("127.0.0.1", [], "", False),
        ("127.0.0.1", [], None, False),
        ("127.0.0.1", ["dice.lan"], "dice.lan:8000", True),
        ("0.0.0.0", [], "192.168.1.5:8000", True),  # any address of this machine
        ("0.0.0.0", [], "[fe80::1]:8000", True),
        ("0.0.0.0", [], "localhost:8000", True),
        ("0.0.0.0", [], "evil.example:8000", False),  # names must be listed
        ("0.0.0.0", ["table.local"], "table.local.:8000", True),
        ("192.168.1.5", [], "192.168.1.5:8000", True),
        ("192.168.1.5", [], "10.0.0.1:8000", False),
        ("192.168.1.5", [], "evil.example", False),
        ("::", [], "[::1]:8000", True),
    ],
)
def test_host_policy(bound, allowed, header, ok):
    assert HostPolicy(bound, allowed).accepts(header) is ok


def test_host_name_parsing():
    assert host_name("Example.COM:8000") == "example.com"
    assert host_name("[::1]:80") == "::1"
    assert host_name("::1") == "::1"
    assert host_name("plain") == "plain"
