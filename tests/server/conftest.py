"""Fakes for the server tests: rules, a live pipeline with a test hook, a reader; and a live server."""

from __future__ import annotations

import itertools
from contextlib import contextmanager
import threading
import uuid
from datetime import datetime, timezone
from enum import StrEnum
from fractions import Fraction
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dicecam.mechanics.adjudication import Adjudication, RolledDie
from dicecam.mechanics.dice import DieReading, DieType
from dicecam.mechanics.errors import RulesError, UnknownSystemError
from dicecam.mechanics.odds import Odds
from dicecam.mechanics.roll import Roll
from dicecam.server.app import create_app
from dicecam.server.browser import BrowserError
from dicecam.server.events import make_event
from dicecam.server.loopback import CHROMIUM_ARGS, LiveServer, find_chromium, free_port  # noqa: F401 (tests import them from here)
from dicecam.server.rulebook import SystemInfo
from dicecam.server.settings import ServerSettings
from dicecam.server.store import RollStore


class Mode(StrEnum):
    high = "high"
    low = "low"


class SumOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    target: int = Field(default=7, ge=1, le=100, title="Target", description="Total needed to succeed")
    keep: int = Field(default=3, ge=1, le=10, title="Dice kept")
    mode: Mode = Field(default=Mode.high, title="Keep highest or lowest")
    bonus: bool = Field(default=False, title="Add one")


class FakeRules:
    """A 'sum' system: keep the best `keep` dice, total them, beat the target. All max: critical; all 1: disaster."""

    calls: list

    def __init__(self):
        self.calls = []

    def check_options(self, system, options):
        if system != "sum":
            raise UnknownSystemError(f"unknown system {system!r} (known: sum)")
        try:
            return SumOptions.model_validate(dict(options)).model_dump(mode="json")
        except ValidationError as e:
            raise RulesError(f"bad option: {e.errors()[0]['msg']}") from None

    def resolve(self, system, dice, options):
        o = SumOptions.model_validate(self.check_options(system, options))
        self.calls.append((system, list(dice), o))
        if any(d.type is DieType.d00 for d in dice):
            raise RulesError("sum cannot use a d00")
        order = sorted(range(len(dice)), key=lambda i: dice[i].value, reverse=o.mode is Mode.high)
        kept = set(order[: o.keep])
        rolled = [RolledDie(**d.model_dump(), role="sum", is_dropped=i not in kept,
                            why=None if i in kept else f"not among the {o.mode.value}est {o.keep}") for i, d in enumerate(dice)]
        total = sum(dice[i].value for i in kept) + (1 if o.bonus else 0)
        if all(d.value == d.type.faces[-1] for d in dice):
            outcome = "critical"
        elif all(d.value == d.type.faces[0] for d in dice):
            outcome = "disaster"
        else:
            outcome = "success" if total >= o.target else "failure"
        return Adjudication(system="sum", outcome=outcome, dice=rolled,
                            explanation=[f"Kept {len(kept)} dice totalling {total}.", f"Target {o.target}: {outcome}."],
                            summary=f"{outcome.capitalize()}: {total} against {o.target}.",
                            options=o.model_dump(mode="json"))

    def default_pool(self, system, options):
        self.check_options(system, options)
        return ["d6", "d6"]

    def odds(self, system, pool, options):
        o = SumOptions.model_validate(self.check_options(system, options))
        kinds = [DieType(p) for p in pool]
        if len(kinds) > 4:
            raise RulesError("pool too large for the fake")
        counts: dict[str, int] = {}
        n = 0
        for faces in itertools.product(*(k.faces for k in kinds)):
            dice = [DieReading(type=k, value=v) for k, v in zip(kinds, faces)]
            out = self.resolve("sum", dice, o.model_dump()).outcome
            counts[out] = counts.get(out, 0) + 1
            n += 1
        self.calls.clear()
        return Odds(system="sum", pool=list(pool), options=o.model_dump(mode="json"),
                    outcomes=[{"outcome": k, "probability": v / n, "fraction": str(Fraction(v, n))} for k, v in counts.items()],
                    summary=f"{len(counts)} outcomes over {n} throws.")

    def systems(self):
        return [SystemInfo(name="sum", title="Sum against a target", schema=SumOptions.model_json_schema())]


FRAME_DICE = [
    DieReading(type="d6", value=5, box=(100, 100, 180, 180), confidence=0.97, colour="red"),
    DieReading(type="d6", value=2, box=(300, 110, 380, 190), confidence=0.93, colour="white"),
]


def sample_frame() -> np.ndarray:
    """The camera frame of FRAME_DICE: a red and a white square where their boxes are."""
    frame = np.full((480, 640, 3), 40, np.uint8)
    frame[100:180, 100:180] = (40, 40, 200)
    frame[110:190, 300:380] = (230, 230, 230)
    return frame


class FakePipeline:
    """Stands in for vision.pipeline.Pipeline; `emit()` is the test hook (runs on its own thread)."""

    demo = False

    def __init__(self):
        self.status = "running"
        self.session = None
        self.callbacks = []
        self.started = self.stopped = False
        self.configured = []
        self.frame_id = 0
        self.frame = sample_frame()
        self.dice = list(FRAME_DICE)

    def start(self):
        self.started = True

    def stop(self):
        self.stopped = True

    def subscribe(self, cb):
        self.callbacks.append(cb)

    def configure(self, system, options):
        self.configured.append((system, options))

    def attach(self, session):
        self.session = session

    def latest_frame(self):
        return self.frame_id, self.frame, self.dice

    def emit(self, dice=None, status="settled", system="sum", options=None, rules=None, wait=True) -> Roll:
        dice = list(dice or self.dice)
        self.dice = dice  # before the id, so a reader of latest_frame never pairs the new id with old dice
        self.frame_id += 1
        rules = rules or FakeRules()
        adj = rules.resolve(system, dice, options or {}) if status == "settled" else None
        roll = Roll(id=str(uuid.uuid4()), ts=datetime.now(timezone.utc), source="camera", status=status,
                    reason=None if adj else "a die is cocked", frame_id=self.frame_id, system=system,
                    options=options or {}, dice=dice, adjudication=adj)
        ev = make_event(f"roll.{status}", roll, frame=self.frame)
        t = threading.Thread(target=lambda: [cb(ev) for cb in self.callbacks])
        t.start()
        if wait:
            t.join()
        return roll

    def camera(self, status, message):
        ev = make_event("camera.status", {"status": status, "message": message})
        for cb in self.callbacks:
            cb(ev)


class FakeReader:
    def __init__(self, dice=None):
        self.dice = list(dice if dice is not None else FRAME_DICE)
        self.frames = []

    def __call__(self, frame):
        self.frames.append(frame.shape)
        return list(self.dice)


def make_settings(tmp_path: Path, **kw) -> ServerSettings:
    kw.setdefault("allowed_hosts", ["testserver"])  # the name Starlette's TestClient sends as Host
    return ServerSettings(data_dir=tmp_path / "data", system="sum", **kw)


@pytest.fixture
def settings(tmp_path):
    return make_settings(tmp_path)


@contextmanager
def served_table(tmp_path: Path, fill: Callable[[RollStore], None] | None = None, **app_kw) -> Iterator[LiveServer]:
    """A real server for the browser tests: a fresh roll store (filled by `fill`), the fake camera, reader
    and rules. The server carries its store, pipeline and app for the test to reach into."""
    s = make_settings(tmp_path)
    store = RollStore(s.db_path)
    if fill is not None:
        fill(store)
    pipeline = FakePipeline()
    app = create_app(s, store, pipeline=pipeline, reader=FakeReader(), rules=FakeRules(), **app_kw)
    with LiveServer(app) as srv:
        srv.store, srv.pipeline, srv.app = store, pipeline, app
        yield srv
    store.close()


@pytest.fixture
def fake_pipeline():
    return FakePipeline()


@pytest.fixture
def app_parts(tmp_path, fake_pipeline):
    """(app, store, pipeline, rules, reader) with fakes, store in tmp_path."""
    s = make_settings(tmp_path)
    store = RollStore(s.db_path)
    rules, reader = FakeRules(), FakeReader()
    app = create_app(s, store, pipeline=fake_pipeline, reader=reader, rules=rules)
    yield app, store, fake_pipeline, rules, reader
    store.close()


@pytest.fixture
def client(app_parts):
    from fastapi.testclient import TestClient

    with TestClient(app_parts[0]) as c:
        yield c


AXE = Path(__file__).resolve().parents[2] / ".cache" / "npm" / "node_modules" / "axe-core" / "axe.min.js"
SCREENS = Path(__file__).resolve().parents[2] / "work" / "screens"


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (Python) is not installed")
    try:
        chromium = find_chromium()
    except BrowserError as e:
        pytest.fail(str(e), pytrace=False)
    if chromium is None:
        pytest.skip("no Chromium: `bash tests/run.sh` installs one, or set DICECAM_CHROMIUM to a Chromium binary")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh page; a script error on it fails the test; confirm() dialogs are accepted."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 1100})
    pg = ctx.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("dialog", lambda d: d.accept())
    pg.errors = errors
    yield pg
    ctx.close()
    assert not errors, errors


@pytest.fixture(scope="session")
def axe():
    """axe-core's script; a test that scans with it is skipped before any of it runs when it is missing."""
    if not AXE.is_file():
        pytest.skip(f"axe-core is not installed at {AXE} (npm install --prefix .cache/npm axe-core@4)")
    return AXE


def serious_violations(page, axe) -> list[dict]:
    """axe-core's serious and critical findings on the page as it is now."""
    page.add_script_tag(path=str(axe))
    result = page.evaluate(
        """async () => { const r = await axe.run(document);
            return {passes: r.passes.length, violations: r.violations.map(v => ({
            id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + ' :: ' + (n.failureSummary || ''))}))}; }"""
    )
    assert result["passes"] > 10  # the scan really ran over the page
    return [v for v in result["violations"] if v["impact"] in ("serious", "critical")]


def shot(page, name, **kw):
    """A screenshot under work/screens, to look at."""
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENS / name), **kw)

