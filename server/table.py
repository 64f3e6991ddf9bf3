"""The server's state and the roll flow: camera or manual readings -> verdict -> store -> events.

One `Table` per app. It owns the current config (system, options, pool), the camera status,
a small cache of recent roll frames (for corrections) and the glue between the pipeline,
the rules, the store and the broker. Routes stay thin and call into it.

Two copies of a roll's frame, for two uses: the store keeps the boxed, downscaled picture with the
roll (the proof a player asks for, `server/frames.py`); the memory cache keeps the clean full-size
frame for a correction's training example and the dice memory, which must not learn drawn boxes.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from datetime import datetime, timezone
from typing import Any, Callable, Protocol, Sequence

import cv2
import numpy as np

from dicecam.mechanics.dice import DieReading, parse_type
from dicecam.mechanics.errors import DicecamError, RulesError
from dicecam.mechanics.roll import Roll, RollSource
from dicecam.vision.assembly import RollSession
from dicecam.vision.stream import CameraStatus, StreamEvent

from .events import Broker, Event, Snapshot, TableConfig, make_event
from .frames import proof_frame
from .rulebook import Rules
from .settings import ServerSettings
from .store import Frame, RollStore, save_correction
from .video import annotate, jpeg

log = logging.getLogger("dicecam.server")


class LivePipeline(Protocol):
    """What the server needs from vision.pipeline.Pipeline (tests pass a fake). The table makes the
    RollSession the camera feeds and attaches it; its roll events carry the frame each roll was read from."""

    status: str
    demo: bool  # the frames are the bundled demo clip's: its rolls are not the table's

    def start(self) -> None: ...
    def stop(self) -> None: ...
    def subscribe(self, callback: Callable[[StreamEvent], None]) -> None: ...
    def configure(self, system: str, options: dict) -> None: ...
    def attach(self, session: RollSession) -> None: ...
    def latest_frame(self) -> tuple[int, np.ndarray, list[DieReading]] | None: ...  # the live view


class DiceReader(Protocol):
    def __call__(self, frame: np.ndarray) -> list[DieReading]: ...


def now() -> datetime:
    return datetime.now(timezone.utc)


class Table:
    def __init__(
        self,
        settings: ServerSettings,
        store: RollStore,
        rules: Rules,
        broker: Broker,
        pipeline: LivePipeline | None = None,
        reader: DiceReader | None = None,
        notices: Sequence[str] = (),
    ):
        self.settings, self.store, self.rules, self.broker = settings, store, rules, broker
        self.pipeline, self.reader = pipeline, reader
        self.notices = list(notices)
        # A cap lowered since the last start applies now, not only once the next picture is stored.
        store.keep_frames(settings.frames_kept)
        # On a real camera the demo clip's rolls are not this table's history: they go (see RollStore).
        if pipeline is not None and not pipeline.demo:
            dropped = store.drop_demo()
            if dropped:
                log.info("a real camera: %d demo rolls cleared from the history", dropped)
        self.camera = (CameraStatus(status="none", message="No live camera: enter rolls by hand or upload a photo.")
                       if pipeline is None else CameraStatus(status=pipeline.status))
        self._frames: OrderedDict[str, tuple[bytes, int, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._jpeg_lock = threading.Lock()  # encoding holds it: kept apart from the state lock
        self._live: tuple[int, bytes] | None = None
        # The table's dice memory (server/memory.py), set by the app; corrections teach it.
        self.memory = None
        self.system = settings.system
        self.options: dict[str, Any] = dict(settings.options)
        self.pool: list[str] = []
        try:
            self.options = rules.check_options(self.system, self.options)
            self.pool = rules.default_pool(self.system, self.options)
        except DicecamError as e:
            self.notices.append(f"Starting configuration refused: {e}")
        # Rolls entered by hand, uploaded or corrected are built here when no camera session is shared.
        self._session = RollSession(self.system, self.options, resolver=rules.resolve, source="manual")
        # The session the camera feeds, made here so that rolls entered by hand join it (a luck die typed in
        # after a check the camera read); the demo clip's is its own, as its rolls are not the table's.
        self._camera: RollSession | None = None
        if pipeline is not None:
            self._camera = RollSession(self.system, self.options, resolver=rules.resolve,
                                       source="demo" if pipeline.demo else "camera")
            pipeline.attach(self._camera)

    # -- config ----------------------------------------------------------------
    def config(self) -> TableConfig:
        return TableConfig(system=self.system, options=self.options, pool=self.pool, systems=self.settings.systems,
                           token_required=self.settings.token_required)

    def configure(self, system: str, options: dict[str, Any], pool: list[str] | None) -> TableConfig:
        checked = self.rules.check_options(system, options)
        if pool is None or not pool:
            pool = self.rules.default_pool(system, checked)
        else:
            pool = [parse_type(p).value for p in pool]
        with self._lock:
            self.system, self.options, self.pool = system, checked, pool
            self._session.configure(system, checked)
            if self._camera is not None:
                self._camera.configure(system, checked)
        if self.pipeline is not None:
            try:
                self.pipeline.configure(system, checked)
            except Exception as e:  # the pipeline keeps its old config; say so
                log.warning("pipeline refused the new configuration: %s", e)
        cfg = self.config()
        self.broker.publish(make_event("config.changed", cfg))
        return cfg

    # -- snapshot ----------------------------------------------------------------
    def snapshot(self) -> Event:
        return make_event("snapshot", Snapshot(rolls=self.store.recent(self.settings.snapshot_rolls),
                                               config=self.config(), camera=self.camera, notices=self.notices))

    # -- rolls -------------------------------------------------------------------
    def session(self, system: str, options: dict[str, Any]) -> RollSession:
        """The session a roll of `system` with `options` joins: the camera's when the pipeline shares one,
        else the table's own — or, for a system or options other than the configured ones, a session of
        its own (a one-off roll follows nothing)."""
        # The demo clip's session is not the table's: a roll of the table's own never joins a demo roll.
        shared = None if self.pipeline is None or self.pipeline.demo else self._camera
        session = shared or self._session
        if session.system == system and session.options == options:
            return session
        return RollSession(system, options, resolver=self.rules.resolve, source="manual")

    def manual(self, system: str | None, options: dict[str, Any] | None, dice: list[DieReading],
               follows: str | None = None, source: RollSource = "manual", frame_id: int | None = None,
               frame: np.ndarray | None = None) -> Roll:
        """A roll entered by hand or read from an upload: built by the roll session like a camera roll, so
        it gets the same doubt checks and joins the roll it follows (a luck die, a Wyrd re-roll...).
        `frame` is the photo the dice were read from: stored with the roll as its picture."""
        system = system or self.system
        options = self.rules.check_options(system, self.options if options is None and system == self.system
                                           else (options or {}))
        if follows is not None:
            followed = self.store.get(follows)
            if followed is None:
                raise RulesError(f"no roll {follows!r} to follow")
            if followed.source == "demo":
                raise RulesError(f"roll {follows!r} is a roll of the demo clip: a roll of yours cannot follow it")
        if not dice:
            raise RulesError("no dice to adjudicate: enter at least one die")
        session = self.session(system, options)
        last = session.last
        if last is not None and last.source == "demo":
            # A throw of the table's own never joins a demo roll (a luck die typed in after a demo check).
            own = self._session
            session = own if (own.system, own.options) == (system, options) else \
                RollSession(system, options, resolver=self.rules.resolve, source="manual")
        roll = session.add(dice, frame_id=frame_id, ts=now(), source=source, strict=True)
        if follows is not None and roll.follows is None:
            roll = roll.model_copy(update={"follows": follows})
        self.store.add(roll, self._proof(frame, roll), self.settings.frames_kept)
        if frame is not None:
            self.remember_frame(roll.id, frame)
        self.broker.publish(make_event(f"roll.{roll.status}", roll))
        return roll

    def _proof(self, frame: np.ndarray | None, roll: Roll) -> Frame | None:
        """The picture stored with `roll`: its frame with the roll's dice boxed. A frame that cannot be
        encoded costs the picture, never the roll."""
        if frame is None or self.settings.frames_kept <= 0:
            return None
        try:
            return proof_frame(frame, roll.dice)
        except (ValueError, cv2.error) as e:
            log.warning("could not keep the picture of roll %s: %s", roll.id, e)
            return None

    def amend(self, roll_id: str, dice: list[DieReading], system: str | None, options: dict[str, Any] | None) -> Roll:
        original = self.store.get(roll_id)
        if original is None:
            raise KeyError(roll_id)
        system = system or original.system
        if options is None:
            # The original's options belong to its system; another system starts from its own defaults.
            options = original.options if system == original.system else {}
        options = self.rules.check_options(system, options)
        # A correction typed as bare "d6:5" keeps the box of the same-kind die in the same place, so the
        # training example still has it; a die of another kind (a phantom replaced by a missed die) gets none.
        if len(dice) == len(original.dice):
            dice = [_with_box(d, o) if d.box is None and d.type is o.type else d for d, o in zip(dice, original.dice)]
        if not dice:
            raise RulesError("no dice to adjudicate: enter at least one die")
        roll = self.session(system, options).amend(original, dice, system, options)
        # The training copy first: once the amendment can be seen in the store, its example is on disk.
        self._save_correction(roll, original)
        self.store.add(roll)
        self._teach_correction(roll, original)
        self.broker.publish(make_event("roll.amended", roll))
        return roll

    def _teach_correction(self, roll: Roll, original: Roll) -> None:
        if self.memory is None:
            return
        try:
            self.memory.correction(roll, original, self.roll_frame(original.id))
        except Exception as e:  # the amendment is stored; only the memory missed it
            log.warning("the dice memory could not learn from the correction: %s", e)

    def roll_frame(self, roll_id: str) -> np.ndarray | None:
        """The kept camera frame of a roll (a correction shares its original's), decoded."""
        seen = set()
        while roll_id and roll_id not in seen:
            seen.add(roll_id)
            frame = self._frames.get(roll_id)
            if frame is not None:
                return cv2.imdecode(np.frombuffer(frame[0], np.uint8), cv2.IMREAD_COLOR)
            roll = self.store.get(roll_id)
            roll_id = roll.amends if roll is not None else None
        return None

    def _save_correction(self, roll: Roll, original: Roll) -> None:
        frame = self._frames.get(original.id)
        jpeg, w, h = frame if frame else (None, None, None)
        try:
            save_correction(self.settings.corrections_dir, roll, jpeg, w, h, original)
        except OSError as e:  # the amendment is stored; only the training copy failed
            log.warning("could not save the correction example: %s", e)

    def remember_frame(self, roll_id: str, frame: np.ndarray) -> None:
        if self.settings.frame_cache <= 0:
            return
        try:
            data = jpeg(frame, 92)
        except ValueError:
            return
        self.remember_jpeg(roll_id, data, frame.shape[1], frame.shape[0])

    def remember_jpeg(self, roll_id: str, jpeg: bytes, width: int, height: int) -> None:
        with self._lock:
            self._frames[roll_id] = (jpeg, width, height)
            while len(self._frames) > max(self.settings.frame_cache, 1):
                self._frames.popitem(last=False)

    def live_jpeg(self) -> tuple[int, bytes] | None:
        """(frame id, JPEG) of the newest camera frame with its dice boxed, encoded once per frame
        however many pages watch the video."""
        latest = self.pipeline.latest_frame() if self.pipeline is not None else None
        if latest is None:
            return None
        fid, frame, dice = latest
        with self._jpeg_lock:
            if self._live is None or self._live[0] != fid:
                self._live = (fid, jpeg(annotate(frame, dice)))
            return self._live

    # -- the pipeline's events ----------------------------------------------------
    def on_pipeline_event(self, event: StreamEvent) -> None:
        """Called on the pipeline's thread."""
        try:
            if event.type in ("roll.settled", "roll.uncertain"):
                roll, frame = event.data, event.frame
                try:
                    self.store.add(roll, self._proof(frame, roll), self.settings.frames_kept)
                except KeyError:
                    return  # the same roll twice: already stored and announced
                if frame is not None:
                    self.remember_frame(roll.id, frame)
            elif event.type == "camera.status":
                self.camera = event.data
            self.broker.publish(event)
        except Exception:
            log.exception("could not handle a pipeline event")

    def set_camera(self, status: str, message: str | None = None, source: str | None = None) -> None:
        self.camera = CameraStatus(status=status, message=message or None, source=source)
        self.broker.publish(make_event("camera.status", self.camera))


def _with_box(new: DieReading, old: DieReading) -> DieReading:
    fields = new.model_dump()
    fields["box"] = old.box
    if fields.get("colour") is None:
        fields["colour"] = old.colour
    return DieReading(**fields)
