"""The dice reader: detector (where, which kind) then face reader (value, colour, cocked) per crop.

`Reader(detector, faces, ...)` takes the two models as callables so tests can pass fakes;
`Reader.load()` opens the shipped ONNX files. Calling a reader on a BGR frame returns the
dice in reading order as `DieReading`s — the one reading type from camera to page.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Callable

import cv2
import numpy as np

from dicecam.mechanics.dice import DieReading
from dicecam.mechanics.errors import DicecamError

from .backends import default_backend, open_session
from .belief import Belief, Doubt, both_views, decide, plainly_pips, readings
from .camera import LOOKS, CameraSense, camera_preference, looks_agreeing
from .crops import CROP_MARGIN, CROP_SIZE, FACE_CLASSES, KIND_OF_FACE, KINDS, VALUE_OF_FACE, crop_batch
from .detections import Detections
from .diecheck import FILE as CHECK_FILE, DieCheck, boxes_inputs
from .memory import DiceMemory, Recall, model_fingerprint
from .numerals import FALLBACK, WHEEL_RECOGNISER, Look, NumeralReader, d4_axis, finder_looks
from .pips import show_no_pips
from .second import SecondOpinion, load_second
from .upface import MODEL_FILE, UpFaceFinder

Model = Callable[[np.ndarray], list[np.ndarray]]
COCKED_ABOVE = 0.5
# The kind head reads log(detector kind score + this), so a score of 0 stays finite.
KIND_HEAD_EPS = 1e-4
_D6 = KINDS.index("d6")
# A die the kind prior gives at least this chance of being a d4 has its d4 faces read along the finder's axis
# (vision/numerals.d4_axis): 54 more windows, so not for every die. Reached by 87 of 88 d4s and 11 of 397 other dice
# in lurig-types' training runs (every second photo; 8 of the 11 d8s), and by 116 of 126 d4s and 6 of 769 others in
# OpenGL renders (seed 4747, every second image).
D4_PRIOR = 0.05


def models_dir() -> Path:
    return Path(str(resources.files("dicecam.models")))


@dataclass(frozen=True)
class Letterbox:
    """How a frame maps into the detector's input: scale, then pad (left, top)."""

    scale: float
    pad: tuple[float, float]

    @classmethod
    def fit(cls, width: int, height: int, in_w: int, in_h: int) -> "Letterbox":
        s = min(in_w / width, in_h / height)
        return cls(s, ((in_w - round(width * s)) / 2, (in_h - round(height * s)) / 2))

    def apply(self, frame: np.ndarray, in_w: int, in_h: int) -> np.ndarray:
        h, w = frame.shape[:2]
        nw, nh = round(w * self.scale), round(h * self.scale)
        small = cv2.resize(frame, (nw, nh), interpolation=cv2.INTER_AREA if self.scale < 1 else cv2.INTER_LINEAR)
        left, top = int(self.pad[0]), int(self.pad[1])
        return cv2.copyMakeBorder(small, top, in_h - nh - top, left, in_w - nw - left, cv2.BORDER_CONSTANT,
                                  value=(114, 114, 114))

    @classmethod
    def input(cls, frame: np.ndarray, in_w: int, in_h: int) -> tuple["Letterbox", np.ndarray]:
        """How a BGR frame fits the detector, and the (1, 3, in_h, in_w) RGB 0-1 tensor it reads."""
        h, w = frame.shape[:2]
        lb = cls.fit(w, h, in_w, in_h)
        x = lb.apply(frame, in_w, in_h)
        return lb, np.ascontiguousarray(x[:, :, ::-1].transpose(2, 0, 1)[None], np.float32) * (1 / 255.0)


class Reader:
    def __init__(self, detector: Model, faces: Model, *, input_size: tuple[int, int] = (416, 320),
                 colours: list[str] | None = None, min_score: float = 0.3, backend: str = "custom",
                 crop_size: int = CROP_SIZE, model_id: str = "custom", numerals: NumeralReader | None = None,
                 finder: Callable[[np.ndarray], np.ndarray] | None = None, kind_head: Model | None = None,
                 doubt: Doubt | None = None, check: DieCheck | None = None,
                 second: SecondOpinion | None = None) -> None:
        self.detector, self.faces = detector, faces
        # The die check (vision/diecheck.py) reads the detector below its threshold and keeps the boxes
        # the face network sees a die in; without it the detector's threshold alone decides. A second
        # detector (vision/second.py) may then veto dice it sees nothing at and add dice the first missed.
        self.check, self.second = check, second
        # Numerals are text (vision/numerals.py); the finder says where the up face's numeral is and
        # which way it is turned; the kind head refines the detector's kind. Each is optional: without
        # them the reader is the face network alone, as tests with fakes use it.
        self.numerals, self.finder, self.kind_head, self.doubt = numerals, finder, kind_head, doubt
        self.model_id = model_id
        # A table's dice memory (vision/memory.py), blended into every reading when set.
        self.memory: DiceMemory | None = None
        self.in_w, self.in_h = input_size
        self.colours = colours or []
        self.min_score = min_score
        self.backend = backend
        self.crop_size = crop_size
        self.live_camera: CameraSense | None = None  # what the live pipeline's reads taught of its camera (watching)

    @classmethod
    def load(cls, folder: Path | None = None, backend: str = "auto", threads: int | None = None,
             kind_head: bool = True, doubt: bool = True, check: bool = True) -> "Reader":
        """The shipped reader; `kind_head=False` / `doubt=False` / `check=False` leave that part out (to fit
        a new one)."""
        folder = Path(folder) if folder else models_dir()
        det, faces = folder / "detector.onnx", folder / "reader.onnx"
        for f in (det, faces, det.with_suffix(".json"), faces.with_suffix(".json")):
            if not f.is_file():
                raise DicecamError(f"no shipped weights: {f} is missing")
        dmeta = json.loads(det.with_suffix(".json").read_text())
        fmeta = json.loads(faces.with_suffix(".json").read_text())
        if dmeta["kinds"] != list(KINDS) or len(fmeta["faces"]) != len(FACE_CLASSES):
            raise DicecamError(f"the weights in {folder} were trained for other classes")
        if not 16 <= fmeta["input"]["size"] <= 256 or fmeta["input"]["margin"] != CROP_MARGIN:
            raise DicecamError(f"the face reader in {folder} expects other crops")
        name = default_backend() if backend == "auto" else backend
        model_id = model_fingerprint(faces)
        numerals = NumeralReader.load(name, threads, folder)
        return cls(open_session(det, name, threads), open_session(faces, name, threads),
                   input_size=(dmeta["input"]["width"], dmeta["input"]["height"]), colours=fmeta["colours"],
                   backend=name, crop_size=int(fmeta["input"]["size"]), model_id=model_id,
                   numerals=numerals, finder=_optional_finder(folder),
                   kind_head=_optional_kind_head(folder, model_id, name, threads) if kind_head else None,
                   doubt=_optional_doubt(folder, model_id, numerals.source) if doubt else None,
                   check=_optional_check(folder, model_id) if check else None,
                   second=load_second(folder, model_id, lambda p: open_session(p, name, threads), detector_boxes)
                   if check else None)

    def detect(self, frame: np.ndarray) -> Detections:
        """The dice in a frame: the detector's boxes, and where there is a die check, the ones it keeps."""
        return self._found(frame)[0]

    def boxes(self, frame: np.ndarray, min_score: float | None = None) -> Detections:
        """The detector's own boxes scored `min_score` (default: its threshold, or the check's floor) or more."""
        if min_score is None:
            min_score = self.min_score if self.check is None else min(self.min_score, self.check.floor)
        return detector_boxes(self.detector, self.in_w, self.in_h)(frame, min_score)

    def seen(self, frame: np.ndarray, dets: Detections) -> "Seen":
        """The face network's view of each box: its crops and raw outputs."""
        crops = self.crops(frame, dets.xyxy)
        return Seen(crops, self._network(crops))

    def die_chance(self, frame: np.ndarray, dets: Detections, seen: "Seen") -> np.ndarray:
        """(N,) the die check's chance that each box holds a die (needs a check and the network's features)."""
        if self.check is None or len(seen.out) < 4:
            raise DicecamError("this reader has no die check, or its face reader gives no features")
        h, w = frame.shape[:2]
        return self.check.chance(boxes_inputs(seen.out[3], dets, w, h))

    def _found(self, frame: np.ndarray) -> tuple[Detections, "Seen | None"]:
        """The dice in a frame, and the face network's view of them when the check needed it."""
        dets = self.boxes(frame)
        if self.check is None:
            return dets, None
        seen = None
        if len(dets):
            seen = self.seen(frame, dets)
            if len(seen.out) < 4:  # a face reader without features: the detector's threshold alone
                return dets[dets.confidence >= self.min_score], seen[dets.confidence >= self.min_score]
            keep = self.check.keep(self.die_chance(frame, dets, seen), dets.confidence)
            dets, seen = dets[keep], seen[keep]
        if self.second is None:
            return dets, seen
        return self._second_opinion(frame, dets, seen)

    def _second_opinion(self, frame: np.ndarray, dets: Detections, seen: "Seen | None") -> tuple[Detections, "Seen | None"]:
        """The dice kept, less those the second detector vetoes, plus those it adds (vision/second.py)."""
        looks: list[Seen] = []  # the face network's view of the boxes it would add, taken once

        def features(boxes: Detections) -> np.ndarray:
            looks.append(self.seen(frame, boxes))
            return looks[-1].out[3]

        opinion = self.second.on(frame, dets, features)
        dets = dets[opinion.keep]
        seen = seen[opinion.keep] if seen is not None else None
        if not opinion.add.any():
            return dets, seen
        added = looks[0][opinion.add]
        if seen is None or not len(dets):
            return opinion.added, added
        return dets.concat(opinion.added), seen.concat(added)

    def crops(self, frame: np.ndarray, boxes: np.ndarray) -> np.ndarray:
        """(N, S, S, 3) uint8: the face reader's view of each box."""
        return crop_batch(frame, np.asarray(boxes, np.float32).reshape(-1, 4), size=self.crop_size)

    def embed(self, crops: np.ndarray) -> np.ndarray:
        """The face reader's feature vector per crop (what the dice memory compares)."""
        return self._faces_with_features(crops)[3]

    def _network(self, crops: np.ndarray) -> list[np.ndarray]:
        """The face network's raw outputs for (N, S, S, 3) uint8 crops."""
        return self.faces(crops.transpose(0, 3, 1, 2).astype(np.float32))

    def _faces_with_features(self, crops: np.ndarray) -> list[np.ndarray]:
        out = self._network(crops)
        if len(out) < 4:
            raise DicecamError("these face-reader weights give no features: the dice memory needs newer weights")
        return out

    def use_memory(self, memory: "DiceMemory | None") -> None:
        self.memory = memory

    def kind_prior(self, dets: Detections, features: np.ndarray | None) -> np.ndarray:
        """(N, K): the detector's kind scores, or the kind head's belief from them and the crop's features."""
        if self.kind_head is None or features is None:
            return dets.kind_scores
        return _softmax(self.kind_head(kind_head_inputs(features, dets.kind_scores))[0])

    def up_faces(self, frame: np.ndarray, boxes: np.ndarray, crops: np.ndarray) -> np.ndarray | None:
        """(N, 5) the finder's (u, v, cos, sin, facing) per die, or None without a finder. `crops` are the
        face reader's; a finder that takes larger crops of the same framing gets its own cut."""
        if self.finder is None:
            return None
        size = getattr(self.finder, "size", crops.shape[1])
        if size != crops.shape[1]:
            crops = crop_batch(frame, np.asarray(boxes, np.float32).reshape(-1, 4), size=size)
        return self.finder(crops)

    def looks(self, frame: np.ndarray, boxes: np.ndarray, crops: np.ndarray) -> list[tuple[Look, ...]]:
        """Where each die's numeral windows look: the finder's up face and the crop's centre."""
        return _looks(self.up_faces(frame, boxes, crops), len(crops))

    def camera_bias(self, camera: CameraSense | None = None) -> np.ndarray:
        """(LOOKS,) what to add to each look's face scores for the camera being read (vision/camera.py), from
        the table's taught dice and, in the live pipeline, its own sure reads (`camera`), pooled."""
        return camera_preference(None if self.memory is None else self.memory.taught_looks(),
                                 None if camera is None else camera.counts())

    def readings(self, frame: np.ndarray, dets: Detections, view: "Seen | None" = None,
                 camera: CameraSense | None = None):
        """Both readers' view of each detected die, the face network's raw outputs, what the table's dice
        memory recalls of them (None without one), where the memory's glyphs moved a die both views stacked
        (`both_views`; else None), and the looks' face scores (None without a recogniser). A recognised die's
        kind goes into the readers' kind prior here, the camera's preference among the looks into their scores
        (`camera_bias`), and the taught dice's glyphs into the recogniser's scores and the face network's
        probabilities. `view`: the face network's view of `dets` when it was already taken (`Reader.seen`)."""
        view = view if view is not None else self.seen(frame, dets)
        crops_u8, out = view.crops, view.out
        features = out[3] if len(out) >= 4 else None
        face_p = _softmax(out[0])
        kind_prior = self.kind_prior(dets, features)
        recall = None
        if self.memory is not None and len(self.memory) and features is not None:
            recall = self.memory.recall(features)
            kind_prior = recall.kind_prior(kind_prior)
        up = self.up_faces(frame, dets.xyxy, crops_u8)
        # A die the network reads as a d6's pips is looked at for pips; one that shows none has its numerals read.
        no_pips = show_no_pips(frame, dets.xyxy, KIND_OF_FACE[face_p.argmax(1)] == _D6)
        looks = _unless_pips(_looks(up, len(crops_u8)), plainly_pips(face_p, kind_prior[:, _D6]) & ~no_pips)
        axes = _d4_axes(up, kind_prior[:, KINDS.index("d4")] >= D4_PRIOR)
        evidence = None if self.numerals is None else self.numerals(frame, dets.xyxy, looks, axes)
        face_ll = None if evidence is None else evidence.face_ll
        side = np.maximum(dets.xyxy[:, 2] - dets.xyxy[:, 0], dets.xyxy[:, 3] - dets.xyxy[:, 1])
        foreign = None if evidence is None else evidence.foreign
        foreign_up = None if evidence is None else evidence.foreign_up
        if face_ll is not None and face_ll.shape[1] == LOOKS:
            preference = self.camera_bias(camera)
            if preference.any():
                face_ll = face_ll + preference[None, :, None]
        if recall is not None and face_ll is not None and face_ll.shape[1]:
            # The scores nudged towards the faces the taught dice's own glyphs say they show.
            colours = [self.colours[c] if c < len(self.colours) else None for c in out[1].argmax(1)]
            bias = self.memory.glyph_bias(recall, face_ll.max(1), kind_prior.argmax(1), colours)
            network_bias = self.memory.network_bias(recall, face_p)
            if bias.any() or network_bias.any():  # both views in one pass: its cost is per call, hardly per die
                both = both_views(kind_prior, face_p, face_ll, bias, side, foreign, network_bias, up, no_pips,
                                  foreign_up)
                return both.rows(slice(0, len(side))), out, recall, both, face_ll
        return readings(kind_prior, face_p, face_ll, side, foreign, up, no_pips, foreign_up), out, recall, None, face_ll

    def learnable(self, frame: np.ndarray, boxes: np.ndarray, kinds: list[str] | None = None) -> "Learnable":
        """What the dice memory keeps of the dice in `boxes`: crops, features, the recogniser's face scores.
        `kinds`: each die's kind where the player named it; a d6 the face network reads plainly as pips then
        keeps no recogniser scores (NaN: not measured), as a reading would not have read its numerals (unless no
        pip is seen on it: vision/pips.py)."""
        boxes = np.asarray(boxes, np.float32).reshape(-1, 4)
        crops = self.crops(frame, boxes)
        out = self._faces_with_features(crops)
        face_p = _softmax(out[0])
        scores = looks = None
        if self.numerals is not None and len(boxes):
            named_d6 = np.array([k == "d6" for k in kinds], float) if kinds is not None else np.zeros(len(boxes))
            # Only where it would lift "plainly pips": a taught die has no gate for the pip test to turn.
            plain = plainly_pips(face_p, named_d6)
            pips = plain & ~show_no_pips(frame, boxes, plain)
            up = self.up_faces(frame, boxes, crops)
            named_d4 = np.array([k == "d4" for k in kinds], bool) if kinds is not None else np.zeros(len(boxes), bool)
            face_ll = self.numerals(frame, boxes, _unless_pips(_looks(up, len(boxes)), pips),
                                    _d4_axes(up, named_d4)).face_ll
            scores = face_ll.max(1) if face_ll.shape[1] else np.full((len(boxes), face_ll.shape[2]), np.nan)
            scores[pips] = np.nan
            looks = face_ll
        return Learnable(crops, out[3], scores, face_p, looks)

    def read_faces(self, frame: np.ndarray, dets: Detections, view: "Seen | None" = None,
                   camera: CameraSense | None = None) -> Detections:
        """`dets` read. `camera`: the live pipeline's sense of its camera, which this frame's sure numeral dice
        add to (`watching`)."""
        if not len(dets):
            return dets
        seen, out, recall, both, face_ll = self.readings(frame, dets, view, camera)
        if both is None:
            belief = decide(seen, self.doubt)
        else:  # one pass of the doubt model over both views
            n, weighed = len(dets), decide(both, self.doubt)
            belief = _no_surer_than(weighed.rows(slice(0, n)), weighed.rows(slice(n, None)))
        if recall is not None:
            belief = _with_faces_seen_before(belief, recall)
        best, conf = belief.best, belief.confidence
        colour_p = _softmax(out[1])
        colours = np.array([self.colours[i] if i < len(self.colours) else None for i in colour_p.argmax(1)], object)
        cocked = 1 / (1 + np.exp(-out[2].reshape(-1))) > COCKED_ABOVE
        doubt = np.array([belief.doubt(i) for i in range(len(best))], object)
        if camera is not None and face_ll is not None and face_ll.shape[1] == LOOKS:
            sure = ~belief.uncertain & ~cocked
            camera.observe(looks_agreeing(face_ll[sure], best[sure]))
        return dets.with_faces(
            kind=KIND_OF_FACE[best], value=VALUE_OF_FACE[best],
            confidence=(conf * dets.confidence).astype(np.float32), colour=colours, cocked=cocked,
            uncertain=belief.uncertain, doubt=doubt)

    def read(self, frame: np.ndarray) -> Detections:
        return self.read_faces(frame, *self._found(frame))

    def __call__(self, frame: np.ndarray) -> list[DieReading]:
        return self.read(frame).to_readings()

    def watching(self) -> "Watching":
        """This reader as the live pipeline runs it: frames of one camera, whose sure reads teach it where that
        camera shows up faces (vision/camera.py). Photos read otherwise (`read`, uploads) neither teach it nor
        use it. The latest one is `live_camera`, for a page to tell what it has learnt."""
        self.live_camera = CameraSense()
        return Watching(self, self.live_camera)


@dataclass(frozen=True)
class Watching:
    """A reader reading one camera's frames (`Reader.watching`): frame -> readings, as `Reader` is."""

    reader: Reader
    camera: CameraSense

    def read(self, frame: np.ndarray) -> Detections:
        return self.reader.read_faces(frame, *self.reader._found(frame), camera=self.camera)

    def __call__(self, frame: np.ndarray) -> list[DieReading]:
        return self.read(frame).to_readings()


def detector_boxes(model: Model, in_w: int, in_h: int) -> Callable[[np.ndarray, float], Detections]:
    """(frame, min_score) -> the boxes an exported YOLO detector of input in_w x in_h scores min_score or more."""
    def boxes(frame: np.ndarray, min_score: float) -> Detections:
        h, w = frame.shape[:2]
        lb, x = Letterbox.input(frame, in_w, in_h)
        return Detections.from_yolo(model(x)[0], lb.scale, lb.pad, (w, h), min_score=min_score)
    return boxes


@dataclass(frozen=True)
class Seen:
    """The face network's view of N boxes: its crops (N, S, S, 3) uint8 and its raw outputs, each (N, ...)."""

    crops: np.ndarray
    out: list[np.ndarray]

    def __getitem__(self, mask) -> "Seen":
        return Seen(self.crops[mask], [o[mask] for o in self.out])

    def concat(self, other: "Seen") -> "Seen":
        """This view followed by `other`'s (of the same network)."""
        return Seen(np.concatenate([self.crops, other.crops]), [np.concatenate(p) for p in zip(self.out, other.out)])


@dataclass(frozen=True)
class Learnable:
    """What the dice memory keeps of N dice seen in a frame (`Reader.learnable`)."""

    crops: np.ndarray  # (N, S, S, 3) uint8
    features: np.ndarray  # (N, D)
    numerals: np.ndarray | None  # (N, F) each face's best score over the looks (NaN: not read); None without a recogniser
    network: np.ndarray | None = None  # (N, F) the face network's face probabilities
    looks: np.ndarray | None = None  # (N, G, F) each look's face scores (a die not read: its looks read NOT_READ)

    def scores(self, i: int) -> np.ndarray | None:
        return None if self.numerals is None else self.numerals[i]

    def look_scores(self, i: int) -> np.ndarray | None:
        return None if self.looks is None else self.looks[i]

    def face_p(self, i: int) -> np.ndarray | None:
        return None if self.network is None else self.network[i]


def _no_surer_than(belief: Belief, plain: Belief) -> Belief:
    """`belief` (the memory's glyphs taken in) no surer of its answer than `plain` (without them) was of
    that face: the glyphs choose among what the readers saw, they do not make it surer. Their nudge
    sharpens the scores, and the doubt model was never fitted on nudged ones: taking its word on them
    doubled the sure dice read wrong on lurig-d20-values' other runs (2.2 -> 4.1 %)."""
    rows = np.arange(len(belief.best))
    cap = np.where(belief.best == plain.best, plain.confidence,
                   np.minimum(plain.confidence, plain.joint[rows, belief.best]))
    return replace(belief, confidence=np.minimum(belief.confidence, cap))


MEMORY_OUTWEIGHS = 0.5  # a taught die's face vote trusted this far outweighs the readers' belief in the blend


def _with_faces_seen_before(belief: Belief, recall: Recall) -> Belief:
    """The belief with the memory's face vote blended in, as far as it is trusted (nearly identical
    examples of a taught die: the same die lying much as it was taught)."""
    t = recall.face_trust
    joint = (1 - t[:, None]) * belief.joint + t[:, None] * recall.face_p
    best = joint.argmax(1)
    rows = np.arange(len(best))
    kept = (best == belief.best) * belief.confidence
    # A taught die's own examples read a face that is a picture, which the numerals cannot (vision/memory.py): where
    # their vote outweighs the readers', the die is no longer doubted for showing one.
    picture = None if belief.picture is None else belief.picture & (t < MEMORY_OUTWEIGHS)
    return Belief(joint, best, (1 - t) * kept + t * recall.face_p[rows, best], belief.legible, belief.below, picture)


def _looks(up: np.ndarray | None, n: int) -> list[tuple[Look, ...]]:
    """The looks of n dice from the finder's rows (`up`), or the fixed ones without a finder."""
    return [FALLBACK] * n if up is None else [finder_looks(row) for row in up]


def _d4_axes(up: np.ndarray | None, maybe_d4: np.ndarray) -> list[Look | None]:
    """Per die, where its d4 faces are read (vision/numerals.d4_axis) where it may be a d4 and the finder saw it."""
    if up is None:
        return [None] * len(maybe_d4)
    return [d4_axis(row) if may else None for row, may in zip(up, maybe_d4)]


def _unless_pips(looks: list[tuple[Look, ...]], pips: np.ndarray) -> list[tuple[Look, ...]]:
    """Each die's looks, and none for a die that plainly shows pips (vision/belief.plainly_pips): not read."""
    return [() if p else look for p, look in zip(pips, looks)]


def kind_head_inputs(features: np.ndarray, kind_scores: np.ndarray) -> np.ndarray:
    """(N, D + K): what the kind head reads, [face-network features, log detector kind scores]."""
    return np.concatenate([features, np.log(kind_scores + KIND_HEAD_EPS)], 1).astype(np.float32)


def _optional_finder(folder: Path) -> UpFaceFinder | None:
    """The up-face finder when it is shipped beside the other weights (readers before it had none)."""
    path = folder / MODEL_FILE
    return UpFaceFinder.load(path) if path.is_file() else None


def _optional_kind_head(folder: Path, model_id: str, backend: str, threads: int | None) -> Model | None:
    """The kind head, when shipped and fitted on this face reader's features (another reader's
    features mean nothing to it, so a mismatch is refused rather than read)."""
    path = folder / "kind.onnx"
    if not path.is_file():
        return None
    meta = json.loads(path.with_suffix(".json").read_text())
    if meta.get("reader") != model_id:
        raise DicecamError(f"the kind head in {folder} was fitted on another face reader: refit it (dicecam train --stages kind)")
    return open_session(path, backend, threads)


def _optional_check(folder: Path, model_id: str) -> DieCheck | None:
    """The die check, when shipped (readers before it had none; DieCheck.load refuses another reader's)."""
    path = folder / CHECK_FILE
    return DieCheck.load(path, model_id) if path.is_file() else None


def _optional_doubt(folder: Path, model_id: str, recogniser: str) -> Doubt | None:
    """The doubt model, when shipped and fitted on this face reader and this text recogniser (a doubt
    model older than the fine-tuned recogniser names none: it was fitted on the wheel's)."""
    path = folder / "doubt.json"
    if not path.is_file():
        return None
    meta = json.loads(path.read_text())
    if meta.get("reader") != model_id:
        raise DicecamError(f"the doubt model in {folder} was fitted on another face reader: refit it (dicecam train --stages doubt)")
    if meta.get("recogniser", WHEEL_RECOGNISER) != recogniser:
        raise DicecamError(f"the doubt model in {folder} was fitted on another text recogniser: refit it (dicecam train --stages doubt)")
    try:
        return Doubt.load(path)
    except (ValueError, KeyError) as e:
        raise DicecamError(f"the doubt model in {folder} cannot be used ({e}): refit it (dicecam train --stages doubt)") from None


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)
