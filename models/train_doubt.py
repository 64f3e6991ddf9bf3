"""The doubt model: each reader's chance of being right on a die, from a few plain measures.

`vision/belief.py` asks two readers (the text recogniser's numerals, the face network) and believes
the one likelier to be right, with that chance as the die's confidence. The chances come from a gate
of boosted trees and two logistic regressions over `belief.FEATURES`, fitted here on dice whose truth we know and that the
held-out scores never see: the training parts of lurig-d20-values (real d20 by value),
lurig-types (real dice of every kind; kind only), nell-byler's d6-pip training photos, Rune55 (d6 pips,
a training-only set), and renders.
Each source is capped so that no one of them decides alone.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np
from scipy.optimize import minimize

from dicecam.mechanics.errors import DicecamError
from dicecam.vision import belief, crops, ctc, marks, numerals, pips, read, upface
from dicecam.vision.belief import FEATURES, NOT_READ, Doubt, Trees, confidence_inputs, gate_inputs
from dicecam.vision.crops import KIND_OF_FACE, KINDS, VALUE_OF_FACE
from dicecam.vision.evaluate import LABELLED_BESIDE, TruthImage, detected_photos, held_out, load_truth
from dicecam.vision.numerals import NumeralReader, TextRecogniser, recogniser_id
from dicecam.vision.read import Reader, models_dir

from .folds import grouped, run_of_photo
from .train_kind import L2 as KIND_L2, KindFold, cross_fit, harvest as kind_harvest
from .train_recogniser import run_of

# (folder under --real, which images) the model is fitted on; the rest of each set is held out.
DOUBT_SETS = (("lurig-d20-values", "training part"), ("lurig-types", "training part"),
              ("nell-byler-d6-pips/images/train", "all"), ("rune55-d6-pips", "all"))
PER_SOURCE = 600  # dice at most from each source
# The gate's trees: shallow and few, so that ~1,800 dice fit them without learning single photos
# (5-fold cross-validation on the training parts: pips 97.4 %, lurig-d20 85.2 %; a logistic gate on the
# same measures 97.0 % and 84.2 %).
GATE_TREES = dict(n_estimators=100, max_depth=3, learning_rate=0.1, random_state=0)
# At most this share of the dice read without a doubt flag may be wrong (the reading issue's bar).
SURE_WRONG = 0.02
# Label sets of dice whose up face is a picture: their photos are left out of the fit. The reader flags a picture
# where it sees one (belief.shows_picture); where it reads a clear neighbour instead, no measure here sees it, and one
# die's run would set every threshold (fiftieth stop: with its photos in, no pair kept lurig-types within the bar).
PICTURE_FACED = ("lurig-d20-logo-values",)


class Measured(NamedTuple):
    """A source's dice as `samples` measures them, one row per die."""

    features: np.ndarray  # (M, 2, F) each reader's measures
    right: np.ndarray  # (M, 2) whether each reader's answer is right
    runs: list  # (M,) its photo's video run, or None
    kinds: list  # (M,) its true kind
    answers: np.ndarray  # (M, 2) each reader's face class
    no_pips: np.ndarray  # (M,) no pip seen on it (vision/pips.py)
    foreign_up: np.ndarray  # (M,) no numeral where its up face lies (belief.Readings.foreign_up)
    network_ll: np.ndarray  # (M,) the numerals' score of the face network's answer (belief.Readings.network_ll)


def values_beside(real: Path, set_name: str) -> dict[str, int]:
    """Photo file name -> the value of its one die, from the sets beside `set_name` under `real` that label its
    photos by value (vision/evaluate.LABELLED_BESIDE) but for the picture-faced dice (PICTURE_FACED: their photos are
    left out of the fit); {} for a set that has none.

    lurig-types labels its dice by kind alone: where a set beside it labels a photo by value, a die read as the right
    kind with the wrong value is wrong. Without them a d4 read as any face of a d4 counted as right, and the doubt
    model learnt to be sure of d4s (forty-seventh stop: 29 of 100 sure d4s wrong in lurig-types' training runs), and
    its gate to hand a d12's plain "2" to the face network's "12" (forty-eighth stop)."""
    return {t.path.name: t.dice[0].value for t in _labelled_beside(real, set_name, pictured=False)
            if len(t.dice) == 1 and t.dice[0].value is not None}


def picture_faced(real: Path, set_name: str) -> set[str]:
    """The file names of `set_name`'s photos that a set beside it labels as a picture-faced die (PICTURE_FACED)."""
    return {t.path.name for t in _labelled_beside(real, set_name, pictured=True)}


def _labelled_beside(real: Path, set_name: str, *, pictured: bool) -> list[TruthImage]:
    """The photos of the sets under `real` that label `set_name`'s photos (vision/evaluate.LABELLED_BESIDE): those of
    the picture-faced dice (PICTURE_FACED), or those of the others."""
    return [t for name in LABELLED_BESIDE.get(set_name, ()) if (name in PICTURE_FACED) == pictured
            and (Path(real) / name).is_dir() for t in load_truth(Path(real) / name)]


def samples(reader: Reader, truth: Path, keep: Callable[[TruthImage], bool], cap: int = PER_SOURCE,
            reader_of: Callable[[TruthImage], Reader] | None = None, set_name: str = "synthetic",
            values: dict[str, int] | None = None
            ) -> Measured:
    """(features (M, 2, F), right (M, 2), runs (M,), kinds (M,), answers (M, 2), no pips (M,), foreign up (M,),
    network ll (M,)): per die, each reader's measures, whether its answer is right (its kind, and its value where the
    truth has one, or `values` names one for its photo's one die: `values_beside`), its photo's video run (None where
    `set_name` names none), its true kind, each reader's answer (a face class), whether the reader saw no pip on it
    (vision/pips.py: the reader then turns some of the gate's picks, `belief.turned`), how much of the writing where
    its up face lies is no numeral (the reader then flags a picture, `belief.shows_picture`) and how its numerals score
    the network's answer (the reader then turns others, `belief.turned`). `reader_of`: which reader reads a photo (the
    dice are found by `reader` either way)."""
    items = [t for t in load_truth(truth) if keep(t)]
    step = max(1, round(sum(len(t.dice) for t in items) / cap))
    feats, right, runs, kinds, said, no_pips, foreign_up, network_ll = [], [], [], [], [], [], [], []
    for item, img, dets, dice in detected_photos(reader, items[::step]):
        seen = (reader_of(item) if reader_of is not None else reader).readings(img, dets)[0]
        for die, j in dice:
            answers = seen.answers[j]
            value = die.value
            if value is None and values and len(item.dice) == 1:
                value = values.get(item.path.name)
            ok = [KINDS[KIND_OF_FACE[a]] == die.kind.value and (value is None or VALUE_OF_FACE[a] == value)
                  for a in answers]
            feats.append(seen.features[j])
            right.append(ok)
            runs.append(run_of_photo(set_name, item.meta))
            kinds.append(die.kind.value)
            said.append(answers)
            no_pips.append(seen.no_pips is not None and bool(seen.no_pips[j]))
            foreign_up.append(0.0 if seen.foreign_up is None else float(seen.foreign_up[j]))
            network_ll.append(NOT_READ if seen.network_ll is None else float(seen.network_ll[j]))
    return Measured(np.array(feats).reshape(-1, 2, len(FEATURES)), np.array(right, float).reshape(-1, 2), runs, kinds,
                    np.array(said, np.int64).reshape(-1, 2), np.array(no_pips, bool), np.array(foreign_up),
                    np.array(network_ll))


def fit_logistic(x: np.ndarray, y: np.ndarray, lam: float = 1e-2) -> tuple[np.ndarray, float]:
    z = np.c_[x, np.ones(len(x))]

    def loss(w):
        p = np.clip(1 / (1 + np.exp(-np.clip(z @ w, -50, 50))), 1e-9, 1 - 1e-9)
        nll = -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean()
        return nll + lam * (w[:-1] ** 2).sum(), z.T @ (p - y) / len(y) + np.r_[2 * lam * w[:-1], 0.0]

    w = minimize(loss, np.zeros(z.shape[1]), jac=True, method="L-BFGS-B").x
    return w[:-1], float(w[-1])


def fit_trees(x: np.ndarray, y: np.ndarray) -> Trees:
    """Boosted trees (scikit-learn's, a training-only dependency) for P(y = 1), exported as plain arrays."""
    from sklearn.ensemble import GradientBoostingClassifier

    if len(np.unique(y)) < 2:  # one reader is always the right one here: a gate that always says so
        p = 0.99 if len(y) and y[0] == 1 else 0.01
        none = np.zeros((1, 1))
        return Trees(np.full((1, 1), -1, np.int64), none, none.astype(np.int64), none.astype(np.int64), none,
                     float(np.log(p / (1 - p))), float(GATE_TREES["learning_rate"]))
    clf = GradientBoostingClassifier(**GATE_TREES).fit(x, y)
    grown = [t[0].tree_ for t in clf.estimators_]
    m = max(t.node_count for t in grown)

    def padded(get, fill, dtype):
        out = np.full((len(grown), m), fill, dtype)
        for i, t in enumerate(grown):
            out[i, :t.node_count] = get(t)
        return out

    prior = float(np.clip(y.mean(), 1e-6, 1 - 1e-6))
    trees = Trees(padded(lambda t: np.where(t.children_left < 0, -1, t.feature), -1, np.int64),
                  padded(lambda t: t.threshold, 0.0, np.float64),
                  padded(lambda t: np.maximum(t.children_left, 0), 0, np.int64),
                  padded(lambda t: np.maximum(t.children_right, 0), 0, np.int64),
                  padded(lambda t: t.value[:, 0, 0], 0.0, np.float64),
                  float(np.log(prior / (1 - prior))), float(GATE_TREES["learning_rate"]))
    # The arrays must say what scikit-learn says, to the rounding the JSON keeps.
    if not np.allclose(trees.log_odds(x), clf.decision_function(x), atol=1e-4):
        raise ValueError("the exported gate disagrees with the fitted one")
    return trees


def grow_gate(x: np.ndarray, y: np.ndarray) -> Trees:
    """The gate, grown on the dice where exactly one reader is right: P(the numerals are the right one)."""
    one = y[:, 0] != y[:, 1]
    return fit_trees(gate_inputs(x[one]), y[one, 0])


def out_of_fold_gate(x: np.ndarray, y: np.ndarray, fold: np.ndarray) -> np.ndarray:
    """(M,) each die's gate from trees grown on the other folds' dice."""
    gate = np.zeros(len(y))
    for k in np.unique(fold):
        trees = grow_gate(x[fold != k], y[fold != k])
        gate[fold == k] = trees.chance(gate_inputs(x[fold == k]))
    return gate


def fit_confidence(x: np.ndarray, y: np.ndarray, gate: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per reader, a logistic regression for its answer being right, on the dice `gate` hands it (on all
    dice when it is handed too few to fit on)."""
    pick = (gate < 0.5).astype(np.int64)
    inputs, right = confidence_inputs(x, pick, gate), y[np.arange(len(pick)), pick]
    conf = [fit_logistic(inputs[m], right[m], lam=1e-3) for m in
            ((pick == r) if (pick == r).sum() >= 20 and len(np.unique(right[pick == r])) == 2 else np.ones_like(pick, bool)
             for r in range(2))]
    return np.stack([c for c, _ in conf]), np.array([b for _, b in conf])


def cross_fitted(x: np.ndarray, y: np.ndarray, fold: np.ndarray, answers: np.ndarray | None = None,
                 no_pips: np.ndarray | None = None, network_ll: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(pick, chance) of every die from a doubt model fitted without its fold. Given each reader's `answers`, where
    `no_pips` were seen and how the numerals score the network's answer (`network_ll`), the gate's pick is turned as
    the reader turns it (`belief.turned`), so that the thresholds are chosen on the answers the reader gives."""
    pick, chance = np.zeros(len(y), np.int64), np.zeros(len(y))
    for k in np.unique(fold):
        out = fold == k
        if not ((y[~out, 0] != y[~out, 1]).any() and len(np.unique(y[~out])) == 2):
            continue  # too few dice left to fit on: this fold counts as unsure
        trees = grow_gate(x[~out], y[~out])
        coef, bias = fit_confidence(x[~out], y[~out], out_of_fold_gate(x[~out], y[~out], fold[~out]))
        doubt = Doubt(trees, coef, bias)
        pick[out], chance[out] = doubt.choose(x[out])
        if answers is not None:
            turn = out & belief.turned(x, answers, no_pips, network_ll, pick)
            pick[turn] = 0
            chance[turn] = doubt.chance_of(x[turn], pick[turn])
    return pick, chance


def flagged_as_the_reader_flags(x: np.ndarray, pick: np.ndarray, answers: np.ndarray, chance: np.ndarray,
                                foreign_up: np.ndarray | None = None) -> np.ndarray:
    """`chance` with every die the reader flags for a picture where its numeral should be (belief.shows_picture) at 0:
    such a die is uncertain however sure the model is, so the thresholds are chosen among the dice the reader leaves
    unflagged (forty-ninth stop's Next 10)."""
    return np.where(belief.shows_picture(x, pick, answers[np.arange(len(pick)), pick], foreign_up), 0.0, chance)


GRID = np.round(np.arange(0.5, 0.995, 0.01), 2)  # the thresholds tried, per reader


def beyond_reach(right: np.ndarray, chance: np.ndarray, source: np.ndarray) -> dict[str, int]:
    """Per source, its wrong dice that no threshold tried flags: read wrong at a chance at or over the strictest."""
    unflaggable = (1 - right) * (chance >= GRID[-1])
    return {str(s): int(unflaggable[source == s].sum()) for s in np.unique(source)}


def choose_threshold(right: np.ndarray, chance: np.ndarray, pick: np.ndarray, source: np.ndarray,
                     most_wrong: float = SURE_WRONG) -> tuple[float, float]:
    """Per reader (numerals, network), the confidence under which a die is uncertain: the pair that
    leaves the most dice read without doubt while, on every real source, at most `most_wrong` of those
    are wrong (renders are not what the threshold is for). One reader's chances can be better
    calibrated than the other's, so each gets its own.

    Where no pair meets the bar on every source, some source has wrong dice that no threshold flags (read
    wrong at 0.99 or surer: the fiftieth stop's numbered d6s read as pips), and the strictest pair would flag
    nearly every die while leaving those sure and wrong all the same. So then the bar counts a source's wrong dice
    beyond those: the thresholds may leave at most `most_wrong` of its sure dice wrong besides the ones no
    threshold reaches (`beyond_reach`; the fit still names the source as over the bar)."""
    real = _chosen_for(list(np.unique(source)))
    wrong = 1 - right
    mine = {s: source == s for s in real}  # each source's dice, found once rather than for every pair
    dice = {s: max(1, int(m.sum())) for s, m in mine.items()}

    def best_pair(allowed: dict[str, int]) -> tuple[float, float] | None:
        best, most = None, -1.0
        for a in GRID:
            for b in GRID:
                sure = chance >= np.where(pick == 0, a, b)
                n_sure = {s: int(sure[m].sum()) for s, m in mine.items()}
                if any(wrong[m & sure].sum() - allowed[s] > most_wrong * n_sure[s] for s, m in mine.items()):
                    continue
                share = float(np.mean([n_sure[s] / dice[s] for s in real]))
                if share > most:
                    best, most = (float(a), float(b)), share
        return best

    # The strictest pair always meets the second bar: the dice it leaves sure and wrong are the unreached ones.
    return best_pair(dict.fromkeys(real, 0)) or best_pair(beyond_reach(right, chance, source))


def sources_over_the_bar(figures: dict[str, dict], most_wrong: float = SURE_WRONG) -> list[str]:
    """The sources the thresholds are chosen for (the real ones; all where there are none) whose cross-validated sure
    dice are more than `most_wrong` wrong: where no pair of thresholds meets the bar on every one, `choose_threshold`
    falls back to a bar that counts only the wrong dice some threshold could flag (forty-ninth stop: with every
    value label beside lurig-types, models/MODEL_CARD.md, Next 10)."""
    return sorted(s for s in _chosen_for(list(figures)) if figures[s]["sure_wrong"] > most_wrong)


def _chosen_for(sources: list[str]) -> list[str]:
    """The sources the thresholds are chosen for: the real ones (renders are not what they are for), or every one
    where none is real."""
    return [s for s in sources if s != "synthetic"] or sources


def _figures(right: np.ndarray, chance: np.ndarray, below) -> dict:
    sure = chance >= below
    return {"dice": len(right), "right": round(float(right.mean()), 4), "sure": round(float(sure.mean()), 4),
            "sure_wrong": round(float(((1 - right) * sure).sum() / max(1, sure.sum())), 4)}


def train_doubt(real: Path | None, synthetic: Path | None, out: Path, *, reader_folder: Path | None = None,
                cache: Path | None = None, folds: Path | None = None, photoreal: Path | None = None,
                log=print) -> dict:
    """Fit the doubt model and write `out`/doubt.json (with how it was fitted, and its figures).
    `cache`: an .npz that keeps the measured dice, so a refit after an interruption or a change of
    the fit alone does not read every photo again (it is measured anew for another reader, recogniser or
    reading code).
    `folds`: the folder of the recogniser's cross-fit (models/train_recogniser.fine_tune_fold). The
    shipped recogniser has learnt some of the photos measured here and reads them surely, right or wrong;
    a doubt model fitted on that would trust it blindly. So each of those photos is read by the fold's
    recogniser that did not learn it, and the doubt model learns how a recogniser does on dice it never saw.
    The kind head learnt the kind sets' training photos and the renders: each of those is read with a kind
    head of its cross-fit (models/train_kind.cross_fit) for the same reason. `photoreal`: the photoreal
    renders the kind head learnt too (models/train_kind.photoreal_folders), so that its cross-fit learns
    what it learnt."""
    t0 = time.perf_counter()
    reader = Reader.load(reader_folder, backend="onnxruntime", doubt=False)
    fold_readers = _fold_readers(reader, folds)
    kind_id = _kind_head_id(reader_folder) if reader.kind_head is not None else "no kind head"
    kind_meta = _kind_meta(reader_folder) if reader.kind_head is not None else {}
    if kind_meta.get("fitted_on", {}).get("photoreal") and photoreal is None:
        raise DicecamError("the kind head learnt photoreal renders: give the same ones (--photoreal) to the doubt "
                           "stage, whose cross-fit of the head must learn what it learnt")
    values = _values(real)
    measured_by = "+".join([reader.model_id, reader.numerals.source, *(r.numerals.source for r, _ in fold_readers),
                            reading_code(), kind_id, _values_id(values)])
    parts = _cached(cache, measured_by)
    if parts is None:
        # The kind head learnt some of these photos too: each is read with a head of its cross-fit.
        kind_folds = [] if reader.kind_head is None else cross_fit(
            kind_harvest(reader, real, synthetic, log, photoreal), lam=float(kind_meta.get("l2", KIND_L2)))
        parts = _measure(reader, real, synthetic, log, _reader_of(reader, fold_readers, kind_folds), values)
        if cache is not None:
            np.savez(cache, reader=measured_by, names=list(parts),
                     **{f"x{i}": p.features for i, p in enumerate(parts.values())},
                     **{f"y{i}": p.right for i, p in enumerate(parts.values())},
                     **{f"g{i}": np.array(["" if g is None else g for g in p.runs])
                        for i, p in enumerate(parts.values())},
                     **{f"k{i}": np.array(p.kinds) for i, p in enumerate(parts.values())},
                     **{f"a{i}": p.answers for i, p in enumerate(parts.values())},
                     **{f"n{i}": p.no_pips for i, p in enumerate(parts.values())},
                     **{f"u{i}": p.foreign_up for i, p in enumerate(parts.values())},
                     **{f"l{i}": p.network_ll for i, p in enumerate(parts.values())})
    joined = lambda field: np.concatenate([getattr(p, field) for p in parts.values()])  # noqa: E731
    x, y = joined("features"), joined("right")
    if len(y) < 20 or len(np.unique(y)) < 2:
        raise ValueError("the doubt model needs dice both readers get right and wrong: give --real and renders")
    source = np.concatenate([[n] * len(p.right) for n, p in parts.items()])
    fold = np.concatenate([grouped(p.runs, strata=p.kinds) for p in parts.values()])
    # Every figure the doubt model is judged by comes from dice it was not fitted on: each fold of
    # photos (whole video runs, each kind's spread over the folds) is read by a gate and a confidence
    # fitted without it. The threshold is set there.
    answers = joined("answers")
    pick, chance = cross_fitted(x, y, fold, answers, joined("no_pips"), joined("network_ll"))
    right = y[np.arange(len(y)), pick]
    chance = flagged_as_the_reader_flags(x, pick, answers, chance, joined("foreign_up"))
    below = choose_threshold(right, chance, pick, source)
    trees = grow_gate(x, y)
    conf_coef, conf_bias = fit_confidence(x, y, out_of_fold_gate(x, y, fold))
    doubt = Doubt(trees, conf_coef, conf_bias, below)
    per_die = np.asarray(below)[pick]
    figures = {name: _figures(right[source == name], chance[source == name], per_die[source == name]) for name in parts}
    over = sources_over_the_bar(figures)
    unreached = {s: n for s, n in beyond_reach(right, chance, source).items() if s in over}
    meta = {**doubt.to_json(), "cross_validated": figures, "over_the_bar": over, "beyond_reach": unreached,
            "reader": reader.model_id,
            "recogniser": reader.numerals.source,
            "photos_read_by_fold_recognisers": [{"recogniser": r.numerals.source, "runs": sorted(runs)}
                                                for r, runs in fold_readers],
            "seconds": round(time.perf_counter() - t0, 1)}
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "doubt.json").write_text(json.dumps(meta, indent=1) + "\n")
    log(f"doubt: fitted on {len(y)} dice; uncertain below {below} (numerals, network); cross-validated: {figures}")
    if over:
        log(f"doubt: OVER THE BAR: no thresholds keep the sure dice of {', '.join(over)} within {SURE_WRONG:.0%} "
            f"wrong; {below} keep them within it but for the dice no threshold flags ({unreached}), "
            "as choose_threshold falls back: judge such a model held out before shipping it")
    return meta


def _fold_readers(reader: Reader, folds: Path | None) -> list[tuple[Reader, set[str]]]:
    """(the reader with fold k's recogniser, the runs fold k's recogniser did not learn), per fold."""
    if folds is None:
        return []
    out = []
    for meta_file in sorted(Path(folds).glob("recogniser-fold*.json")):
        meta = json.loads(meta_file.read_text())
        path = meta_file.parent / meta["file"]
        if not path.is_file():
            raise ValueError(f"{meta_file} names {path}, which is not there: run the recogniser stage again")
        mine = copy.copy(reader)
        mine.numerals = NumeralReader(TextRecogniser.load("onnxruntime", None, path), recogniser_id(path))
        out.append((mine, set(meta["runs"])))
    return out


def _reader_of(reader: Reader, fold_readers: list[tuple[Reader, set[str]]],
               kind_folds: list[KindFold] = ()) -> Callable[[TruthImage], Reader]:
    """Which reader reads a photo: the recogniser of the cross-fit that did not learn its run, and the
    kind head of the cross-fit that did not learn the photo (the shipped ones where none learnt it)."""
    made: dict[tuple[int, int], Reader] = {}

    def of(item: TruthImage) -> Reader:
        run = run_of(item)
        chosen = next((r for r, runs in fold_readers if run in runs), reader)
        kind = next((k for k in kind_folds if str(item.path) in k.photos), None)
        if kind is None:
            return chosen
        key = (id(chosen), id(kind))
        if key not in made:
            made[key] = copy.copy(chosen)
            made[key].kind_head = kind
        return made[key]
    return of


def _kind_head_id(reader_folder: Path | None) -> str:
    """The kind head the dice are read with, by its file's content (its cross-fit is made to match it)."""
    return "kind:" + hashlib.sha256((_weights(reader_folder) / "kind.onnx").read_bytes()).hexdigest()[:16]


def _kind_meta(reader_folder: Path | None) -> dict:
    """How the kind head was fitted (its kind.json: its L2, and how many crops of each source it learnt),
    for its cross-fit."""
    return json.loads((_weights(reader_folder) / "kind.json").read_text())


def _weights(reader_folder: Path | None) -> Path:
    """The folder the reader is loaded from (Reader.load's rule: the shipped weights without one)."""
    return Path(reader_folder) if reader_folder else models_dir()


def _measure(reader: Reader, real: Path | None, synthetic: Path | None, log,
             reader_of: Callable[[TruthImage], Reader] | None = None, values: dict[str, dict[str, int]] | None = None
             ) -> dict[str, Measured]:
    """Each doubt source's measured dice (`samples`); `values`: per real set, the values labelled beside it (`_values`)."""
    parts = {}
    for name, which in DOUBT_SETS if real is not None else ():
        truth = Path(real) / name
        if not truth.exists():
            continue
        set_name = name.split("/")[0]
        pictured = picture_faced(Path(real), set_name)
        keep = lambda t: t.path.name not in pictured and (which == "all" or not held_out(set_name, t))  # noqa: E731
        parts[name] = samples(reader, truth, keep, reader_of=reader_of, set_name=set_name,
                              values=(values or {}).get(set_name))
        log(f"doubt: {len(parts[name].right)} dice from {name} ({which})")
    if synthetic is not None:
        parts["synthetic"] = samples(reader, Path(synthetic), lambda t: True, reader_of=reader_of)
        log(f"doubt: {len(parts['synthetic'].right)} dice from renders in {synthetic}")
    return parts


def reading_code() -> str:
    """A digest of the code that turns a photo into the doubt model's measures: a cache measured before
    a change to it (the windows' size, how faces are scored, the kind head's cross-fit) holds measures
    the reader no longer gives."""
    digest = hashlib.sha256()
    here = Path(__file__).parent  # the kind head's cross-fit: its code and its folds'
    for path in [*(Path(m.__file__) for m in (crops, upface, numerals, marks, pips, ctc, belief, read)),
                 here / "train_kind.py", here / "folds.py"]:
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _values(real: Path | None) -> dict[str, dict[str, int]]:
    """Per real doubt set, the values labelled beside it (`values_beside`), read once a fit."""
    if real is None:
        return {}
    return {name.split("/")[0]: values_beside(Path(real), name.split("/")[0]) for name, _ in DOUBT_SETS}


def _values_id(values: dict[str, dict[str, int]]) -> str:
    """A digest of `_values`: measured dice kept before those labels changed were judged right or wrong by other
    labels."""
    return hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()[:16]


def _cached(cache: Path | None, reader_id: str) -> dict[str, Measured] | None:
    if cache is None or not Path(cache).is_file():
        return None
    data = np.load(cache)
    if str(data["reader"]) != reader_id or "l0" not in data:  # another reader, or kept before all the reader turns
        return None
    return {str(n): Measured(data[f"x{i}"], data[f"y{i}"], [g or None for g in data[f"g{i}"].tolist()],
                             data[f"k{i}"].tolist(), data[f"a{i}"], data[f"n{i}"], data[f"u{i}"], data[f"l{i}"])
            for i, n in enumerate(data["names"])}
