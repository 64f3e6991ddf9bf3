"""One answer per die over (kind, value), from two readers, with a calibrated chance that it is right.

Two readers see each die:
- the **numerals**: the text recogniser's log-likelihood of every face's spelling in the windows of
  each look (vision/numerals.py); a face keeps its best window over the looks, its kind weighted by
  the kind prior (the detector's scores, sharpened by the kind head) over the kind's number of faces;
- the **face network**: trained on renders and real pip photos, it reads real d6 pips at 98 % and
  renders well, real numerals hardly at all.

Which one to believe depends on the die: a sharp numeral on a real die is the recogniser's, pips and
a blurry render are the network's. `Doubt` weighs a few plain measures of each die (how sure each
reader is, whether they agree, whether the looks agree, how big the die is in pixels, how squarely its
up face looks at the camera): a gate that picks the reader, and the chance that the picked answer is
right, which is the die's confidence.
Fitted on the training parts of the real sets and on renders, never on the held-out parts
(models/train_doubt.py, figures in models/MODEL_CARD.md). Below its reader's threshold (the doubt
model's `below`) a die is `uncertain`, with a reason a player can act on; so is a die whose numerals read
a picture or other writing where its numeral should be (`shows_picture`), however sure the doubt model is.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .crops import FACE_CLASSES, KIND_OF_FACE, KINDS, face_label

TEMPERATURE = 0.3  # how sharp the recogniser's likelihoods are taken to be
NONE_LEVEL = -2.0  # a window's best face at this log-likelihood is as likely as "nothing legible"
# Every kind keeps at least this share of the kind prior, so that a plain "17" makes a d20 of a die
# the detector took for a d12: the numerals can overrule the kind.
KIND_FLOOR = 0.02
# Below this chance of being right (the doubt model's) a die is uncertain. A fitted doubt model carries
# its own threshold, set where it was fitted so that, on photos it was not fitted on, at most two in a
# hundred of the dice read without a doubt flag are wrong (models/train_doubt.py); this is for one
# that does not. Without a doubt model a reader's own probability is not a calibrated chance, and the
# older rule holds: under 0.6 is uncertain.
UNCERTAIN_BELOW = 0.9
UNCALIBRATED_BELOW = 0.6
# A die read by its numerals whose clearest window's writing is this much no digit or mark shows a picture
# or other writing where its numeral should be (an ornate set's logo on its 20, 1 or 6): it is uncertain
# whatever the doubt model's chance, which learnt such dice only as read right by kind (forty-ninth stop,
# models/MODEL_CARD.md). Not a d4: its windows hold its other numerals, turned, which read as other characters.
PICTURE_FOREIGN = 0.3
# So is one whose looks above the crop's centre, where a tilted view shows the up face, all write mostly no digit or
# mark at their clearest windows (`Readings.foreign_up`): a picture on the up face, and the numerals' answer a side
# face's numeral read in its place, at the centre (the picture-faced d20's "8" and "14"; fifty-seventh stop,
# models/MODEL_CARD.md).
PICTURE_UP = 0.5
# A large die whose up face looks at the camera, which the gate gives to the face network, is read by its numerals
# where they legibly name another face of the network's kind and score the network's face far below it at every look
# (`contradicted_turn`): on real numeral dice the network, taught on renders, is surely wrong there (angled d12s' "2"
# and "8" read as its "12" and "10", d8s' "1" as its "5"), and the gate, fitted mostly on renders, believes it
# (fifty-eighth stop, models/MODEL_CARD.md). LEGIBLY: the numerals' legible share (the best look reads a face at about
# -1.1 or better); CONTRADICTS_BELOW: the network's face at its best look; LARGE_PX, SQUARE_ON: the die's size and the
# finder's facing, where a die is read closely enough for its numerals to outweigh the network.
LEGIBLY, CONTRADICTS_BELOW, LARGE_PX, SQUARE_ON = 0.95, -3.0, 128.0, 0.75
FACES_OF_KIND = np.bincount(KIND_OF_FACE, minlength=len(KINDS)).astype(np.float64)
# A die the face network reads as a d6 face at PIPS_SURE or more, where the kind prior (or the player's word)
# gives a d6 PIPS_KIND or more, is the face network's to read whatever its numerals say. Of 1,115 such dice in the
# training parts of nell-byler and lurig-types, Rune55 and renders, the doubt model chose the network for every one,
# and without the numerals' windows each kept its answer and its flag, its chance moving by 0.02 at most (fourteenth
# stop, models/MODEL_CARD.md). So their numerals are not read: two thirds of a die's reading time, spent where pips
# need it least.
PIPS_SURE, PIPS_KIND = 0.95, 0.8
NOT_READ = -1e30  # every face's score in a look that reads nothing: a die's padding looks, or a die not read
UNREAD = NOT_READ / 10  # a die at or below this everywhere was not read (a memory's nudge leaves NOT_READ below it)
FEATURES = ("log_p", "numeral_share", "looks_agree", "centre_agrees", "readers_agree", "readers_twins",
            "log_kind_prior", "log_side_px", "foreign_text", "facing", "up_offset")
_DIE_FROM = FEATURES.index("log_side_px")  # the measures from here on are the die's, not a reader's
_FOREIGN = FEATURES.index("foreign_text")
_D4 = KINDS.index("d4")
_D6 = KINDS.index("d6")
_TWIN = {("6", "9"), ("9", "6"), ("60", "90"), ("90", "60")}
# Face class -> the face class of the same kind that reads as it upside down (6 <-> 9, d00 60 <-> 90).
TWIN_OF = {i: j for i, (k, v) in enumerate(FACE_CLASSES) for j, (k2, v2) in enumerate(FACE_CLASSES)
           if k == k2 and (face_label(k, v), face_label(k2, v2)) in _TWIN}


# Kinds of the same solid, told apart by their numerals alone: a d10 and a d00 (tens) die. Neither the
# detector nor the kind head can see which one it is on real dice (on burksbuilds they called every d00 a
# d10), so for the numerals the prior holds their share together, split evenly, and the numerals decide
# ("40" or "0"). The face network keeps the prior as it is: it learnt both kinds' numerals from renders.
SAME_SOLID = ((KINDS.index("d10"), KINDS.index("d00")),)


def floored(kind_prior: np.ndarray, same_solid: bool = False) -> np.ndarray:
    """The kind prior with every kind's floor; `same_solid`: d10 and d00 share their part evenly."""
    p = kind_prior / np.maximum(kind_prior.sum(1, keepdims=True), 1e-12)
    if same_solid:
        for group in SAME_SOLID:
            p[:, list(group)] = p[:, list(group)].sum(1, keepdims=True) / len(group)
    return (1 - KIND_FLOOR * len(KINDS)) * p + KIND_FLOOR


def plainly_pips(face_p: np.ndarray, d6_share: np.ndarray) -> np.ndarray:
    """(N,) the dice whose numerals need not be read: the face network PIPS_SURE of a d6 face, and `d6_share`
    (N,), the kind prior's share on a d6 (or 1 where the die is known to be one), PIPS_KIND or more."""
    best = face_p.argmax(1)
    return (face_p.max(1) >= PIPS_SURE) & (KIND_OF_FACE[best] == _D6) & (d6_share >= PIPS_KIND)


def numeral_belief(face_ll: np.ndarray, kind_prior: np.ndarray, temperature: float = TEMPERATURE,
                   none_level: float = NONE_LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """(P(face) (N, F), P(something legible) (N,)) from the looks' (N, G, F) log-likelihoods, each
    face at its best look; padded looks carry NOT_READ and never win."""
    best = face_ll.max(1)
    # The numerals alone tell a d10 from a d00: the prior's split between them is no evidence here.
    prior = floored(kind_prior, same_solid=True)[:, KIND_OF_FACE] / FACES_OF_KIND[KIND_OF_FACE]
    logit = best / temperature + np.log(prior)
    logit -= logit.max(1, keepdims=True)
    p = np.exp(logit)
    p /= p.sum(1, keepdims=True)
    legible = 1 / (1 + np.exp(-np.clip((best.max(1) - none_level) / temperature, -50, 50)))
    return p, legible


def network_belief(face_p: np.ndarray, kind_prior: np.ndarray) -> np.ndarray:
    """The face network's (N, F) probabilities times the kind prior, renormalised."""
    joint = face_p * floored(kind_prior)[:, KIND_OF_FACE]
    return joint / np.maximum(joint.sum(1, keepdims=True), 1e-12)


@dataclass(frozen=True)
class Readings:
    """What both readers say of N dice, and the measures the doubt model weighs."""

    numeral: np.ndarray  # (N, F)
    network: np.ndarray  # (N, F)
    features: np.ndarray  # (N, 2, len(FEATURES)): per die, per reader (numerals, network)
    no_pips: np.ndarray | None = None  # (N,) bool: dice judged to show no pip at all (vision/pips.py)
    foreign_up: np.ndarray | None = None  # (N,) vision/numerals.NumeralEvidence.foreign_up
    network_ll: np.ndarray | None = None  # (N,) the numerals' score of the face network's answer, at its best look

    @property
    def answers(self) -> np.ndarray:
        """(N, 2) each reader's face class."""
        return np.stack([self.numeral.argmax(1), self.network.argmax(1)], 1)

    def rows(self, which) -> "Readings":
        return Readings(self.numeral[which], self.network[which], self.features[which],
                        None if self.no_pips is None else self.no_pips[which],
                        None if self.foreign_up is None else self.foreign_up[which],
                        None if self.network_ll is None else self.network_ll[which])


def readings(kind_prior: np.ndarray, face_p: np.ndarray, face_ll: np.ndarray | None, side_px: np.ndarray,
             foreign: np.ndarray | None = None, up: np.ndarray | None = None,
             no_pips: np.ndarray | None = None, foreign_up: np.ndarray | None = None) -> Readings:
    """Both readers' beliefs and the doubt model's measures; without numerals (a reader with fakes or
    no recogniser) the numeral reader says nothing legible. `foreign`: per die, how much of the
    clearest window's writing is no numeral (vision/numerals.NumeralEvidence). `up`: the up-face finder's
    (N, 5) rows (vision/upface.py): how squarely the up face looks at the camera, and how far from the
    crop's centre it lies (how tilted the view is); without a finder, square on at the centre. `no_pips` and
    `foreign_up` are kept beside the measures, not among them: rules of their own read them (`decide`)."""
    n = len(face_p)
    rows = np.arange(n)
    network = network_belief(face_p, kind_prior)
    said = network.argmax(1)
    network_ll = np.full(n, NOT_READ)
    if face_ll is None or face_ll.shape[1] == 0:
        numeral, legible = np.full_like(network, 1 / network.shape[1]), np.zeros(n)
        looks_agree = centre_agrees = np.zeros(n)
    else:
        numeral, legible = numeral_belief(face_ll, kind_prior)
        # Each look's best face over every class. A numeral scores alike as the face of every kind that has it,
        # and the first such class wins: a look reading "3" names the d4's 3, never the d20's. So the looks
        # "agree" with a d20's answer only where no kind before it has the numeral (13-19; a d00 has "20"): the
        # measure says whether they agree on a numeral only the answer's kind has. The doubt model was fitted on
        # it as it is. Judged within the answer's kind and refitted, it read lurig-d20's held-out runs better
        # (82.4 -> 85.0 %) but let more sure dice be wrong on the other sets (seventeenth stop,
        # models/MODEL_CARD.md): not taken.
        per_look = face_ll.argmax(2)  # (N, G)
        best = numeral.argmax(1)
        same = per_look == best[:, None]
        looks_agree = same.mean(1)
        centre_agrees = same[:, 0].astype(float)
        # A die whose numerals were not read (plainly_pips) is measured as one in a frame where none were.
        unread = face_ll.max((1, 2)) <= UNREAD
        numeral[unread], legible[unread], looks_agree[unread], centre_agrees[unread] = 1 / network.shape[1], 0, 0, 0
        network_ll = face_ll.max(1)[rows, said]
    answers = np.stack([numeral.argmax(1), said], 1)
    # Readers that differ only as 6 and 9 do still agree: the recogniser cannot tell a 6 from a 9 turned
    # round unless it sees the mark, so its choice between them is no evidence against the network's.
    twins = np.array([TWIN_OF.get(int(a)) == int(b) for a, b in answers], float)
    agree = np.maximum((answers[:, 0] == answers[:, 1]).astype(float), twins)
    # The die's own measures, the same for both readers: made once, not once a reader.
    die = np.stack([np.log(np.maximum(side_px, 1.0)), np.zeros(n) if foreign is None else foreign,
                    np.ones(n) if up is None else up[:, 4],
                    np.zeros(n) if up is None else np.hypot(up[:, 0], up[:, 1])], 1)
    feats = np.zeros((n, 2, len(FEATURES)))
    for r, belief in enumerate((numeral, network)):
        a = answers[:, r]
        kp = floored(kind_prior, same_solid=r == 0)  # each reader's answer against the prior it read with
        feats[:, r, :_DIE_FROM] = np.stack([np.log(belief[rows, a] + 1e-6), legible, looks_agree, centre_agrees,
                                            agree, twins, np.log(kp[rows, KIND_OF_FACE[a]])], 1)
        feats[:, r, _DIE_FROM:] = die
    return Readings(numeral, network, feats, None if no_pips is None else np.asarray(no_pips, bool),
                    None if foreign_up is None else np.asarray(foreign_up, np.float64), network_ll)


def both_views(kind_prior: np.ndarray, face_p: np.ndarray, face_ll: np.ndarray, bias: np.ndarray,
               side_px: np.ndarray, foreign: np.ndarray | None = None,
               network_bias: np.ndarray | None = None, up: np.ndarray | None = None,
               no_pips: np.ndarray | None = None, foreign_up: np.ndarray | None = None) -> Readings:
    """The readings of N dice twice, stacked: first with `bias` (N, F) added to every look's numeral
    scores and `network_bias` (N, F) to the face network's log-probabilities (the dice memory's glyphs),
    then as they were — so that one pass of the doubt model weighs both (vision/read.Reader.read_faces
    caps the first by the second)."""
    twice = lambda a: np.concatenate([a, a])  # noqa: E731
    nudged = face_p
    if network_bias is not None:
        nudged = face_p * np.exp(network_bias - network_bias.max(1, keepdims=True))
        nudged = nudged / np.maximum(nudged.sum(1, keepdims=True), 1e-30)
    return readings(twice(kind_prior), np.concatenate([nudged, face_p]),
                    np.concatenate([face_ll + bias[:, None, :], face_ll]), twice(side_px),
                    None if foreign is None else twice(foreign), None if up is None else twice(up),
                    None if no_pips is None else twice(no_pips), None if foreign_up is None else twice(foreign_up))


def _unsure(log_p: np.ndarray) -> np.ndarray:
    """log(1 - p): how far from certain a reader is. The face network reads pips at p = 0.99 and more,
    where log p is flat at 0 and this still spreads (0.99: -4.6, 0.999: -6.9)."""
    return np.log(np.maximum(-np.expm1(np.minimum(log_p, 0.0)), 1e-4))


def gate_inputs(features: np.ndarray) -> np.ndarray:
    """(N, G): what the gate weighs: every numeral measure, the network's own sureness and kind, and
    how unsure each reader is."""
    lp = FEATURES.index("log_p")
    return np.concatenate([features[:, 0], features[:, 1][:, [lp, FEATURES.index("log_kind_prior")]],
                           _unsure(features[:, 1, lp])[:, None], _unsure(features[:, 0, lp])[:, None]], 1)


def confidence_inputs(features: np.ndarray, pick: np.ndarray, gate: np.ndarray) -> np.ndarray:
    """(N, C): the chosen reader's measures, how unsure it is, and how clear the gate's choice was."""
    rows = np.arange(len(pick))
    chosen = features[rows, pick]
    return np.c_[chosen, _unsure(chosen[:, FEATURES.index("log_p")]), np.abs(gate - 0.5)]


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-np.clip(z, -50, 50)))


@dataclass(frozen=True)
class Trees:
    """Gradient-boosted regression trees as plain arrays (one row per tree, nodes padded to the fullest
    tree): their log-odds is `init + rate * sum of the leaves reached`, a node sending x left when
    x[feature] <= threshold. Fitted by models/train_doubt.py; read here with numpy alone."""

    feature: np.ndarray  # (T, M) int; -1 at a leaf
    threshold: np.ndarray  # (T, M)
    left: np.ndarray  # (T, M) int
    right: np.ndarray  # (T, M) int
    value: np.ndarray  # (T, M)
    init: float
    rate: float

    def log_odds(self, x: np.ndarray) -> np.ndarray:
        trees = np.arange(len(self.feature))[None, :]
        rows = np.arange(len(x))[:, None]
        node = np.zeros((len(x), len(self.feature)), np.int64)
        for _ in range(self.feature.shape[1]):  # no path is longer than the node count
            f = self.feature[trees, node]
            if (f < 0).all():
                break
            go_left = x[rows, np.maximum(f, 0)] <= self.threshold[trees, node]
            node = np.where(f < 0, node, np.where(go_left, self.left[trees, node], self.right[trees, node]))
        return self.init + self.rate * self.value[trees, node].sum(1)

    def chance(self, x: np.ndarray) -> np.ndarray:
        return _sigmoid(self.log_odds(x))

    def to_json(self) -> dict:
        return {"feature": self.feature.tolist(), "threshold": self.threshold.round(6).tolist(),
                "left": self.left.tolist(), "right": self.right.tolist(), "value": self.value.round(6).tolist(),
                "init": round(self.init, 6), "rate": self.rate}

    @classmethod
    def from_json(cls, data: dict) -> "Trees":
        return cls(np.asarray(data["feature"], np.int64), np.asarray(data["threshold"], np.float64),
                   np.asarray(data["left"], np.int64), np.asarray(data["right"], np.int64),
                   np.asarray(data["value"], np.float64), float(data["init"]), float(data["rate"]))


@dataclass(frozen=True)
class Doubt:
    """The *gate*, boosted trees giving the chance that the numerals are the reader to believe on this
    die (fitted on dice where exactly one reader is right: which reader to believe turns on where each
    is sure, which a straight line through the measures drew badly for pips), and per reader the
    *confidence*, a logistic regression giving the chance that its answer is right when the gate chose it."""

    gate: Trees
    conf_coef: np.ndarray  # (2, C): numerals, network
    conf_bias: np.ndarray  # (2,)
    # Under this chance a die is uncertain, per reader (numerals, network), set where the model was fitted.
    below: tuple[float, float] = (UNCERTAIN_BELOW, UNCERTAIN_BELOW)

    def choose(self, features: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(pick (N,) 0 numerals / 1 network, chance the pick is right (N,)) from (N, 2, F) measures."""
        gate = self.gate.chance(gate_inputs(features))
        pick = (gate < 0.5).astype(np.int64)
        return pick, self._confidence(features, pick, gate)

    def chance_of(self, features: np.ndarray, pick: np.ndarray) -> np.ndarray:
        """(N,) the chance that the reader `pick` (N,) names is right, where something other than the gate chose
        it (`decide`'s rule for dice that show no pips)."""
        return self._confidence(features, pick, self.gate.chance(gate_inputs(features)))

    def _confidence(self, features: np.ndarray, pick: np.ndarray, gate: np.ndarray) -> np.ndarray:
        x = confidence_inputs(features, pick, gate)
        return _sigmoid(np.einsum("nc,nc->n", x, self.conf_coef[pick]) + self.conf_bias[pick])

    def to_json(self) -> dict:
        return {"features": list(FEATURES), "gate": self.gate.to_json(),
                "confidence": {"coef": self.conf_coef.round(6).tolist(), "bias": self.conf_bias.round(6).tolist()},
                "uncertain_below": list(self.below)}

    @classmethod
    def from_json(cls, data: dict) -> "Doubt":
        if data.get("features") != list(FEATURES):
            raise ValueError("the doubt model was fitted on other measures")
        if "feature" not in data.get("gate", {}):
            raise ValueError("the doubt model's gate is an older kind")
        return cls(Trees.from_json(data["gate"]), np.asarray(data["confidence"]["coef"], np.float64),
                   np.asarray(data["confidence"]["bias"], np.float64),
                   tuple(float(b) for b in data.get("uncertain_below", (UNCERTAIN_BELOW, UNCERTAIN_BELOW))))

    @classmethod
    def load(cls, path: Path) -> "Doubt":
        return cls.from_json(json.loads(Path(path).read_text()))


@dataclass(frozen=True)
class Belief:
    joint: np.ndarray  # (N, F) the chosen reader's probability over FACE_CLASSES
    best: np.ndarray  # (N,) the answer
    confidence: np.ndarray  # (N,) its chance of being right
    legible: np.ndarray  # (N,) whether a numeral was legible
    below: float | np.ndarray = UNCERTAIN_BELOW  # under this confidence a die is uncertain (one, or (N,) per die)
    picture: np.ndarray | None = None  # (N,) bool: a picture or other writing where the numeral should be

    @property
    def uncertain(self) -> np.ndarray:
        unsure = self.confidence < self.below
        return unsure if self.picture is None else unsure | self.picture

    def rows(self, which) -> "Belief":
        below = np.broadcast_to(self.below, self.confidence.shape)[which] if np.ndim(self.below) else self.below
        return Belief(self.joint[which], self.best[which], self.confidence[which], self.legible[which], below,
                      None if self.picture is None else self.picture[which])

    def doubt(self, i: int) -> str | None:
        """Why die i is not trusted, in a few words for a player; None when it is."""
        if self.picture is not None and self.picture[i]:
            return "a picture or writing where its numeral should be"
        if self.confidence[i] >= np.broadcast_to(self.below, self.confidence.shape)[i]:
            return None
        p = self.joint[i]
        order = np.argsort(p)[::-1]
        first, second = FACE_CLASSES[order[0]], FACE_CLASSES[order[1]]
        if self.legible[i] < 0.5 and p[order[0]] < 0.5:
            return "no legible numeral or pips"
        a, b = face_label(*first), face_label(*second)
        if (a, b) in _TWIN and first[0] == second[0]:
            return f"a {first[0]} that reads as {a} or {b} (no mark seen)"
        if first[0] != second[0]:
            return f"reads as {first[0]} {a} or {second[0]} {b}"
        return f"a {first[0]} that reads as {a} or {b}"


def decide(r: Readings, doubt: Doubt | None = None) -> Belief:
    """Each die's answer: the reader likelier to be right, with that chance as its confidence.
    Without a doubt model (not fitted yet, or a reader of fakes in tests): the numerals where one is
    legible, else the network, each as sure as its own probability says."""
    rows = np.arange(len(r.answers))
    legible = r.features[:, 0, 1]
    if doubt is None:
        pick = (legible < 0.5).astype(np.int64)
        joint = np.where(pick[:, None] == 0, r.numeral, r.network)
        best = r.answers[rows, pick]
        return Belief(joint, best, joint[rows, best], legible, UNCALIBRATED_BELOW)
    pick, chance = doubt.choose(r.features)
    pick, chance = _turned_to_numerals(r, doubt, pick, chance)
    joint = np.where(pick[:, None] == 0, r.numeral, r.network)
    best = r.answers[rows, pick]
    return Belief(joint, best, chance, legible, np.asarray(doubt.below)[pick],
                  shows_picture(r.features, pick, best, r.foreign_up))


def _turned_to_numerals(r: Readings, doubt: Doubt, pick: np.ndarray,
                        chance: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The gate's pick, but the dice `turned` names are their numerals' to read, as sure as the doubt model's
    confidence in the numerals says."""
    turn = turned(r.features, r.answers, r.no_pips, r.network_ll, pick)
    if not turn.any():
        return pick, chance
    pick, chance = pick.copy(), chance.copy()
    pick[turn] = 0
    chance[turn] = doubt.chance_of(r.features[turn], pick[turn])
    return pick, chance


def turned(features: np.ndarray, answers: np.ndarray, no_pips: np.ndarray | None, network_ll: np.ndarray | None,
           pick: np.ndarray) -> np.ndarray:
    """(N,) bool: the dice the gate gave to the face network that the reader reads by their numerals instead: a d6
    that shows no pips (`no_pips_turn`), a large die whose numerals contradict the network (`contradicted_turn`).
    The doubt fit turns them alike (models/train_doubt.cross_fitted)."""
    turn = np.zeros(len(pick), bool)
    if no_pips is not None:
        turn |= no_pips_turn(features, answers, no_pips, pick)
    if network_ll is not None:
        turn |= contradicted_turn(features, answers, network_ll, pick)
    return turn


def contradicted_turn(features: np.ndarray, answers: np.ndarray, network_ll: np.ndarray,
                      pick: np.ndarray) -> np.ndarray:
    """(N,) bool: dice the gate gave to the face network, of LARGE_PX or more with their up face SQUARE_ON to the
    camera, whose numerals legibly (LEGIBLY) name another face of the network's kind, not its 6/9 twin, while scoring
    the network's face under CONTRADICTS_BELOW at every look. Pips are no numerals: a network's d6 answer stays; so
    does its d4's, whose windows hold its other numerals, turned (as `shows_picture` says).
    Screened on the value sets' training parts (1,323 -> 1,342 dice right, 15 -> 9 sure and wrong) and renders (2,412
    -> 2,414 right); judged on the real held-out sets and on renders no reader had read (fifty-eighth stop,
    models/MODEL_CARD.md)."""
    num, net = answers[:, 0], answers[:, 1]
    # readers_agree: the same face, or 6 and 9 (a twin the recogniser cannot tell without the mark)
    return ((pick == 1) & ~np.isin(KIND_OF_FACE[net], (_D4, _D6)) & (KIND_OF_FACE[num] == KIND_OF_FACE[net])
            & (features[:, 0, FEATURES.index("readers_agree")] == 0)
            & (features[:, 0, FEATURES.index("numeral_share")] >= LEGIBLY)
            & (np.asarray(network_ll) < CONTRADICTS_BELOW)
            & (features[:, 0, FEATURES.index("log_side_px")] >= np.log(LARGE_PX))
            & (features[:, 0, FEATURES.index("facing")] >= SQUARE_ON))


def no_pips_turn(features: np.ndarray, answers: np.ndarray, no_pips: np.ndarray, pick: np.ndarray) -> np.ndarray:
    """(N,) bool: dice the gate handed to the face network's d6 pips where no pip is seen and whose numerals legibly
    name another face of a d6: the gate learnt from pip dice, whose pips the recogniser reads as digits about as often,
    to believe the network there (lurig-d6-values' numbered training d6s 141 -> 153 of 182 right, sure and wrong
    10 -> 1; models/MODEL_CARD.md, fifty-sixth stop). The doubt fit turns them as the reader does
    (models/train_doubt.cross_fitted)."""
    return (np.asarray(no_pips, bool) & (pick == 1) & (KIND_OF_FACE[answers[:, 0]] == _D6)
            & (KIND_OF_FACE[answers[:, 1]] == _D6) & (features[:, 0, FEATURES.index("numeral_share")] >= 0.5)
            & (answers[:, 0] != answers[:, 1]))


def shows_picture(features: np.ndarray, pick: np.ndarray, best: np.ndarray,
                  foreign_up: np.ndarray | None = None) -> np.ndarray:
    """(N,) bool: dice answered by their numerals where the clearest window's writing is mostly no numeral
    (PICTURE_FOREIGN), or where the looks at the up face's places write it (`foreign_up`, PICTURE_UP). The face
    network's answers are not: pips are no digits either."""
    foreign = features[:, 0, _FOREIGN] >= PICTURE_FOREIGN
    if foreign_up is not None:
        foreign = foreign | (np.asarray(foreign_up) >= PICTURE_UP)
    return (pick == 0) & foreign & (KIND_OF_FACE[best] != _D4)


def combine(kind_prior: np.ndarray, face_p: np.ndarray, face_ll: np.ndarray | None = None,
            side_px: np.ndarray | None = None, doubt: Doubt | None = None) -> Belief:
    side = np.full(len(face_p), 100.0) if side_px is None else side_px
    return decide(readings(kind_prior, face_p, face_ll, side), doubt)
