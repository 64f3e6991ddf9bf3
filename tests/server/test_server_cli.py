"""`dicecam serve`: argument checks, token generation off loopback, and a real start with no camera."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from conftest import free_port
from dicecam.server.commands import serve as cli_serve
from dicecam.server.cli import build_parser


def parse(*argv):
    return build_parser().parse_args(["serve", *argv])


def test_token_generated_and_printed_off_loopback(tmp_path):
    said = []
    s = cli_serve.settings_from_args(parse("--host", "0.0.0.0", "--data", str(tmp_path)), said.append)
    assert s.token and len(s.token) >= 24 and s.token in said[0]
    s = cli_serve.settings_from_args(parse("--host", "0.0.0.0", "--token", "my-long-token"), said.append)
    assert s.token == "my-long-token" and len(said) == 1  # a given token is not printed again
    s = cli_serve.settings_from_args(parse("--system", "house-games", "emergence", "--option", "difficulty=7"))
    assert s.system == "house-games" and s.systems == ["house-games", "emergence"] and s.options == {"difficulty": 7}
    assert cli_serve.settings_from_args(parse()).token is None


def test_the_number_of_roll_pictures_kept_is_a_serve_flag():
    assert cli_serve.settings_from_args(parse("--frames-kept", "20")).frames_kept == 20
    assert cli_serve.settings_from_args(parse()).frames_kept == 500


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--frames-kept", "-1"], "frames_kept"),
        (["--port", "70000"], "port"),
        (["--option", "oops"], "KEY=VALUE"),
        (["--token", "short"], "token"),
        (["--system", "no-such-system"], "unknown system"),
        (["--webhook", "ftp://x"], "http"),
        (["--camera-size", "1280by720"], "WIDTHxHEIGHT"),
        (["--camera-size", "64x48"], "each side from 160"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(tmp_path, argv, words):
    r = subprocess.run([sys.executable, "-m", "dicecam.server.cli", "serve", "--data", str(tmp_path), *argv],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert words.lower() in lines[-1].lower() and "Traceback" not in r.stderr


def test_serve_starts_without_a_camera(tmp_path):
    """The README's run command on a machine with no camera: the server comes up and says what it fell back to."""
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "dicecam.server.cli", "serve", "--port", str(port),
                             "--data", str(tmp_path / "data"), "--source", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        health = None
        end = time.monotonic() + 60
        while time.monotonic() < end and proc.poll() is None:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2).json()
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        assert health is not None, proc.stderr.read() if proc.poll() is not None else "no answer"
        assert health["ok"]
        # either the camera fell back to the demo clip, or the server says why there is no live view
        cam = health["camera"]
        assert cam["status"] in ("demo", "running", "starting", "none", "error") or health["notices"]
        if cam["status"] == "none":
            assert health["notices"], "no camera and no reason given"
        r = httpx.post(f"http://127.0.0.1:{port}/api/rolls", json={"dice": ["d6:3", "d8:5", "d10:7"]}, timeout=10)
        assert r.status_code == 201, r.text  # manual entry works whatever the camera does
        assert httpx.get(f"http://127.0.0.1:{port}/", timeout=5).status_code == 200
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
    assert "dicecam serve: table http://127.0.0.1:" in err
    assert (tmp_path / "data" / "rolls.sqlite3").exists()


def test_port_in_use_is_one_line(tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "dicecam.server.cli", "serve", "--data", str(tmp_path),
                            "--port", str(port)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "choose another --port" in r.stderr.strip().splitlines()[-1]


def test_missing_camera_falls_back_to_the_demo_clip_and_reads_its_first_roll():
    """The README's promise, with the shipped reader and the real pipeline: `dicecam serve` on a machine
    without the camera shows the demo clip, and its first roll is read and adjudicated (in bounded time)."""
    import json
    import threading

    from dicecam.vision.pipeline import Pipeline
    from dicecam.vision.read import Reader
    from dicecam.vision.sources import demo_paths

    first = json.loads(demo_paths()[1].read_text())["rolls"][0]["truth"]["dice"]
    notices, said = [], []
    missing = "/dev/video97"
    pipeline, reader, note = cli_serve.build_live(missing, "contingency-action", {}, notices, said.append)
    assert isinstance(pipeline, Pipeline) and isinstance(reader, Reader)
    assert "demo clip" in note and missing in note and note in notices and note in said[0]
    assert pipeline.source.spec == "demo"
    rolls, got = [], threading.Event()

    def on_event(event):
        if event.type in ("roll.settled", "roll.uncertain"):
            rolls.append(event)
            got.set()

    pipeline.subscribe(on_event)
    pipeline.start()
    try:
        assert got.wait(120), f"no roll from the demo clip within 120 s (status {pipeline.status})"
    finally:
        pipeline.stop()
    roll = rolls[0].data.model_dump(mode="json")
    assert sorted((d["type"], d["value"]) for d in roll["dice"]) == sorted((d["type"], d["value"]) for d in first)
    assert roll["system"] == "contingency-action" and roll["status"] == "settled" and roll["adjudication"]["outcome"]


def test_banner_off_loopback_gives_the_working_table_url(tmp_path):
    """The printed table address carries the token, so the page it opens can change the table;
    the overlay and reader addresses carry none and work as they are."""
    from urllib.parse import parse_qs, urlsplit

    from fastapi.testclient import TestClient

    from conftest import FakeRules
    from dicecam.server.app import create_app
    from dicecam.server.store import RollStore

    said = []
    s = cli_serve.settings_from_args(parse("--host", "0.0.0.0", "--data", str(tmp_path)), said.append)
    lines = cli_serve.banner(s)
    table_url = lines[0].split("table ", 1)[1].split()[0]
    token = parse_qs(urlsplit(table_url).query)["token"][0]
    assert token == s.token
    assert "?token=" not in lines[1] and "/overlay" in lines[1] and "never the token" in lines[1]
    store = RollStore(s.db_path)
    with TestClient(create_app(s, store, rules=FakeRules()), base_url="http://127.0.0.1:8000") as c:
        assert c.post(f"/api/rolls?token={token}", json={"system": "sum", "dice": ["d6:4"]}).status_code == 201
        assert c.post("/api/rolls", json={"system": "sum", "dice": ["d6:4"]}).status_code == 401
        assert c.get("/overlay").status_code == 200
    store.close()
    local = cli_serve.banner(cli_serve.settings_from_args(parse("--data", str(tmp_path))))
    assert "token" not in " ".join(local) and "http://127.0.0.1:8000/" in local[0]


def test_allowed_host_option(tmp_path):
    s = cli_serve.settings_from_args(parse("--allowed-host", "dice.lan", "--allowed-host", "obs.lan",
                                           "--data", str(tmp_path)))
    assert s.allowed_hosts == ["dice.lan", "obs.lan"]


def test_the_camera_size_help_names_the_size_a_camera_is_asked_for():
    from dicecam.vision.sources import CAMERA_SIZE

    r = subprocess.run([sys.executable, "-m", "dicecam.server.cli", "serve", "--help"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and "default {}x{}".format(*CAMERA_SIZE) in " ".join(r.stdout.split())
