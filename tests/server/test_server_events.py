"""Events over WebSocket and SSE, the broker's fan-out, the webhook and server-side speech."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from conftest import FakePipeline, FakeRules, LiveServer, make_settings
from dicecam.mechanics.dice import DieReading
from dicecam.server.app import create_app
from dicecam.server.events import Broker, make_event
from dicecam.server.speech import Speaker, SpeechUnavailable, summary_text
from dicecam.server.store import RollStore
from dicecam.server.webhook import Webhook, discord_body


def test_websocket_snapshot_first_then_rolls(client, app_parts):
    pipeline = app_parts[2]
    before = client.post("/api/rolls", json={"dice": ["d6:3"]}).json()
    with client.websocket_connect("/api/events/ws") as ws:
        snap = ws.receive_json()
        assert snap["type"] == "snapshot" and snap["v"] == 1
        assert [r["id"] for r in snap["data"]["rolls"]] == [before["id"]]
        assert snap["data"]["config"]["system"] == "sum" and snap["data"]["camera"]["status"] == "running"
        roll = pipeline.emit()  # from the pipeline's own thread
        ev = ws.receive_json()
        assert ev["type"] == "roll.settled" and ev["data"]["id"] == roll.id
        amended = client.post(f"/api/rolls/{roll.id}/amend", json={"dice": ["d6:6", "d6:6"]}).json()
        ev = ws.receive_json()
        assert ev["type"] == "roll.amended" and ev["data"]["id"] == amended["id"] and ev["data"]["amends"] == roll.id
        pipeline.camera("stalled", "no frames for 5 s")
        ev = ws.receive_json()
        assert ev["type"] == "camera.status" and ev["data"]["message"] == "no frames for 5 s"
        client.put("/api/config", json={"system": "sum", "options": {"target": 9}})
        ev = ws.receive_json()
        assert ev["type"] == "config.changed" and ev["data"]["options"]["target"] == 9
    assert client.get("/api/health").json()["camera"]["status"] == "stalled"


def test_sse_over_real_server(tmp_path):
    """SSE needs a real socket to stream; httpx reads the first events then closes."""
    import httpx

    s = make_settings(tmp_path)
    store = RollStore(s.db_path)
    pipeline = FakePipeline()
    app = create_app(s, store, pipeline=pipeline, rules=FakeRules())
    with LiveServer(app) as srv:
        with httpx.Client(timeout=10) as c:
            with c.stream("GET", srv.url + "/api/events") as r:
                assert r.headers["content-type"].startswith("text/event-stream")
                lines = r.iter_lines()
                events = []

                def next_event():
                    fields = {}
                    for line in lines:
                        if not line:
                            if fields:
                                return fields
                            continue
                        k, _, v = line.partition(": ")
                        fields[k] = v

                events.append(next_event())
                assert events[0]["event"] == "snapshot"
                roll = pipeline.emit()
                ev = next_event()
                assert ev["event"] == "roll.settled" and json.loads(ev["data"])["data"]["id"] == roll.id
    assert pipeline.started and pipeline.stopped
    store.close()


def test_broker_drops_a_slow_client_without_blocking_others():
    async def scenario():
        broker = Broker(queue_size=4)
        broker.bind(asyncio.get_running_loop())
        slow, fast = broker.connect(), broker.connect()
        got = []

        async def reader():
            while len(got) < 10:
                got.append(await fast.next())

        task = asyncio.create_task(reader())
        for i in range(10):
            broker.publish(make_event("camera.status", {"status": "running", "skipped_frames": i}))
            await asyncio.sleep(0)  # the fast client keeps up; the slow one never reads
        await asyncio.wait_for(task, 5)
        assert [e.data.skipped_frames for e in got] == list(range(10))
        assert slow.dropped and broker.client_count == 1 and broker.dropped_clients == 1
        # the dropped client's reader is woken and told to stop
        items = []
        while not slow.queue.empty():
            items.append(slow.queue.get_nowait())
        assert items[-1] is None

    asyncio.run(scenario())


def test_broker_publish_from_other_threads_keeps_order():
    async def scenario():
        broker = Broker(queue_size=1000)
        broker.bind(asyncio.get_running_loop())
        c = broker.connect()
        t = threading.Thread(target=lambda: [broker.publish(make_event("camera.status", {"status": "running", "skipped_frames": i})) for i in range(200)])
        t.start()
        got = [await asyncio.wait_for(c.next(), 5) for _ in range(200)]
        t.join()
        assert [e.data.skipped_frames for e in got] == list(range(200))

    asyncio.run(scenario())


def test_every_page_is_sent_each_new_roll_not_the_first_again():
    """The JSON text of an event is made once for all pages; two rolls of the same type are still
    two different texts, each one the roll it announces."""
    broker = Broker()
    pages = [broker.connect(), broker.connect()]
    rolls = [FakePipeline().emit(dice=[DieReading.parse(f"d6:{v}")]) for v in (2, 5)]
    for r in rolls:
        broker.publish(make_event("roll.settled", r.model_dump(mode="json")))
    for page in pages:
        sent = [json.loads(broker.json(page.queue.get_nowait())) for _ in rolls]
        assert [e["data"]["id"] for e in sent] == [r.id for r in rolls]
        assert [e["data"]["dice"][0]["value"] for e in sent] == [2, 5]
        assert page.queue.empty()


def test_client_limit(tmp_path):
    broker = Broker(queue_size=4, max_clients=2)
    broker.connect(), broker.connect()
    with pytest.raises(OverflowError, match="limit 2"):
        broker.connect()


class _Hook(BaseHTTPRequestHandler):
    bodies: list = []

    def do_POST(self):
        n = int(self.headers["Content-Length"])
        type(self).bodies.append((self.path, self.headers["Content-Type"], json.loads(self.rfile.read(n))))
        self.send_response(204 if self.path != "/fail" else 500)
        self.end_headers()

    def log_message(self, *a):
        pass


@pytest.fixture
def hook_server():
    _Hook.bodies = []
    srv = HTTPServer(("127.0.0.1", 0), _Hook)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}", _Hook.bodies
    srv.shutdown()
    srv.server_close()


def _wait(pred, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return False


def test_webhook_posts_generic_and_discord(tmp_path, hook_server):
    url, bodies = hook_server
    generic, discord = Webhook(url + "/generic"), Webhook(url + "/discord", "discord")
    s = make_settings(tmp_path)
    app = create_app(s, RollStore(s.db_path), rules=FakeRules(), listeners=[generic, discord])
    from fastapi.testclient import TestClient

    with TestClient(app) as c:
        roll = c.post("/api/rolls", json={"dice": ["d6:6", "d6:6"]}).json()
        c.put("/api/config", json={"system": "sum"})  # not a roll: not posted
    assert _wait(lambda: len(bodies) == 2)
    by_path = {p: (ct, b) for p, ct, b in bodies}
    ct, body = by_path["/generic"]
    assert ct == "application/json" and body["type"] == "roll.settled" and body["data"]["id"] == roll["id"]
    _, body = by_path["/discord"]
    assert body["content"] == roll["adjudication"]["summary"]
    assert body["embeds"][0]["title"] == "sum: critical" and "d6 6, d6 6" in body["embeds"][0]["fields"][0]["value"]
    generic.close(), discord.close()


def test_webhook_failure_is_logged_not_fatal(hook_server, caplog):
    url, bodies = hook_server
    pipeline = FakePipeline()
    roll = pipeline.emit()
    ev = make_event("roll.settled", roll.model_dump(mode="json"))
    bad = Webhook(url + "/fail", timeout_s=2)
    dead = Webhook("http://127.0.0.1:9/nothing", timeout_s=1)  # discard port: refused
    bad(ev), dead(ev)
    assert _wait(lambda: bad.failed == 1 and dead.failed == 1)
    assert bad.sent == 0 and "failed" in caplog.text
    with pytest.raises(ValueError, match="http"):
        Webhook("ftp://example.invalid/")
    bad.close(), dead.close()


def test_an_uncertain_roll_reaches_the_webhook_and_the_speaker(hook_server):
    """A roll the camera could not trust is still a roll: the webhook posts it and speech says why,
    while a camera status is neither posted nor spoken."""
    url, bodies = hook_server
    hook = Webhook(url + "/generic")
    broker = Broker()
    broker.add_listener(hook)
    status = make_event("camera.status", {"status": "ok", "message": "watching"})
    roll = FakePipeline().emit(status="uncertain")
    uncertain = make_event("roll.uncertain", roll.model_dump(mode="json"))
    broker.publish(status)
    broker.publish(uncertain)
    assert _wait(lambda: len(bodies) >= 1)
    hook.close()
    assert [(b["type"], b["data"]["id"]) for _, _, b in bodies] == [("roll.uncertain", roll.id)]
    assert summary_text(uncertain) == "a die is cocked"
    assert summary_text(status) is None


def test_discord_body_for_uncertain_roll():
    roll = FakePipeline().emit(status="uncertain")
    body = discord_body(make_event("roll.uncertain", roll.model_dump(mode="json")))
    assert body["content"] == "a die is cocked" and body["embeds"][0]["title"] == "sum: uncertain"


def test_speech_text_and_espeak(tmp_path):
    roll = FakePipeline().emit()
    ev = make_event("roll.amended", roll.model_dump(mode="json"))
    assert summary_text(ev) == "Corrected. " + roll.adjudication.summary
    assert summary_text(make_event("camera.status", {"status": "running"})) is None
    with pytest.raises(SpeechUnavailable, match="apt-get install"):
        Speaker(command="no-such-speech-engine")
    try:
        wav = tmp_path / "out.wav"
        sp = Speaker(rate_wpm=200, extra_args=("-w", str(wav)))
    except SpeechUnavailable:
        pytest.skip("espeak-ng is not installed")
    assert sp.argv("-x hello")[-2:] == ["--", "-x hello"]
    sp(ev)
    assert _wait(lambda: sp.spoken == 1, 20)
    sp.close()
    assert wav.stat().st_size > 1000 and wav.read_bytes()[:4] == b"RIFF"


def test_shutdown_ends_open_streams(tmp_path):
    """Ctrl-C must not wait on pages that keep an event stream or the video open."""
    import httpx

    s = make_settings(tmp_path)
    store = RollStore(s.db_path)
    app = create_app(s, store, pipeline=FakePipeline(), rules=FakeRules())
    with LiveServer(app) as srv:
        with httpx.Client(timeout=10) as c, c.stream("GET", srv.url + "/api/events") as r:
            lines = r.iter_lines()
            assert next(lines).startswith("id: ")
            app.state.broker.close()
            rest = list(lines)  # ends instead of waiting for the next keep-alive
            assert not any(line.startswith("event: roll") for line in rest)
        with httpx.Client(timeout=10) as c, c.stream("GET", srv.url + "/api/video.mjpg") as r:
            assert r.status_code == 200
            assert b"".join(r.iter_bytes()) == b"--frame\r\n"  # closing: no frame loop at all
    store.close()
