"""`generate()`: many labelled images (or clips) written in one of the export formats.

Image i of a run uses the seed derived from (seed, i), so a run is reproducible and any
image can be re-rendered alone; with `workers` > 1 the images are rendered in parallel
processes (one GL context each) and written in order, so the output is the same.

`generate_rolls()`: each kind's one die rolled again and again on a table of its own, a folder per die: what
teaching a table its dice is measured on (`dicecam bench --teach-real`).
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import cv2
import numpy as np
from tqdm import tqdm

from dicecam.mechanics.dice import FACES, DieType
from dicecam.mechanics.errors import DicecamError, LimitError
from dicecam.vision.crops import KINDS

from .clip import render_clip
from .export import FORMATS, Writer
from . import photoreal
from .render import Renderer
from .scene import check_size, one_die_rolls, parse_kinds, render_image, table_kinds, table_rolls

MAX_COUNT = 1_000_000
MAX_ROLLS_PER_FACE = 100
MAX_TABLE_ROLLS = 1000


@dataclass
class Summary:
    out: str
    format: str
    images: int
    dice: int
    seconds: float
    images_per_s: float
    clips: int = 0


def image_seed(seed: int, i: int) -> int:
    return int(np.random.SeedSequence([seed, i]).generate_state(1)[0])


def _render_one(args, renderer: Renderer):
    seed, i, kinds, width, height = args
    return render_image(image_seed(seed, i), renderer=renderer, kinds=kinds, width=width, height=height)


# A pool worker's renderer: opened by the pool's initializer (`open_worker_renderer`) in the worker
# process, used by every job that worker runs, and gone with the process. The process that starts
# the pool never sets it; it owns its own renderer.
_worker_renderer: Renderer | None = None


def open_worker_renderer() -> None:
    """A pool initializer: this worker process's one GL context, reused by all its jobs."""
    global _worker_renderer
    _worker_renderer = Renderer()


def worker_renderer() -> Renderer:
    if _worker_renderer is None:
        raise RuntimeError("no renderer in this process: start the pool with initializer=open_worker_renderer")
    return _worker_renderer


JPEG_QUALITY = 92  # of written images, unless the webcam's own JPEG quality is lower


def _render_for_writer(args, renderer: Renderer):
    """(image or JPEG bytes, truth) of image i, ready for `Writer.add`.

    For the JPEG formats the frame is encoded here, once: at the simulated webcam's quality
    when it has one (instead of a JPEG round trip followed by a second encode), else at
    JPEG_QUALITY. In worker processes this also keeps the encoding off the writing process
    and sends ~50 kB instead of a raw frame back to it."""
    seed, i, kinds, width, height, fmt, pictures = args
    if fmt == "crops":
        return render_image(image_seed(seed, i), renderer=renderer, kinds=kinds, width=width, height=height,
                            pictures=pictures)
    img, read, quality = render_image(image_seed(seed, i), renderer=renderer, kinds=kinds, width=width, height=height,
                                      defer_jpeg=True, pictures=pictures)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, min(quality or JPEG_QUALITY, JPEG_QUALITY)])
    return buf.tobytes(), read


RENDERERS = ("gl", "photoreal")


def _photoreal_for_writer(args):
    """As `_render_for_writer`, from the photoreal (Cycles) renderer in this process."""
    seed, i, kinds, width, height, fmt, device = args
    # Here, not at the top: the photoreal modules (fonts, materials) cost ~50 ms that the GL path never needs.
    from .photoreal.run import render_image as render_photoreal

    img, read = render_photoreal(image_seed(seed, i), kinds=kinds, width=width, height=height, device=device)
    if fmt == "crops":
        return img, read
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    return buf.tobytes(), read


def _in_worker(args):
    return _render_for_writer(args, worker_renderer())


def _worker_init(lp_threads: str) -> None:
    """Runs in each spawned worker: sets up, then opens its GL context."""
    # One rasteriser thread per worker: the workers already fill the cores, and llvmpipe's
    # own thread pool only adds hand-offs between them.
    os.environ.setdefault("LP_NUM_THREADS", lp_threads)
    cv2.setNumThreads(1)
    open_worker_renderer()


def _ready(out: Path, renderer: str, device: str) -> Path:
    """`out` as a Path, once the renderer and device are known and usable and `out` can be a folder. The photoreal
    scene is built here: a --device gpu without a GPU fails before any file is written."""
    if renderer not in RENDERERS:
        raise DicecamError(f"unknown renderer {renderer!r} (known: {', '.join(RENDERERS)})")
    if device not in ("cpu", "gpu"):
        raise DicecamError(f"unknown device {device!r} (known: cpu, gpu)")
    if renderer == "photoreal":
        if not photoreal.bpy_available():
            raise DicecamError(photoreal.INSTALL_HINT)
        from .photoreal.run import stage

        stage(device)
    elif device != "cpu":
        raise DicecamError("--device gpu needs --renderer photoreal")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise DicecamError(f"{out} exists and is not a folder")
    return out


def generate(out: Path, count: int, seed: int, kinds: Sequence[str] | None, fmt: str, clip: bool = False,
             progress: bool = True, *, width: int = 640, height: int = 480, workers: int = 1,
             renderer: str = "gl", device: str = "cpu", pictures: float = 0.0) -> Summary:
    """Render `count` images (or clips) from `seed` into `out` in format `fmt`.

    renderer "photoreal": Blender Cycles (datasets/photoreal), on the CPU or with device "gpu"
    on CUDA/OptiX; one process, whose render threads already use every core. `pictures`: the share of
    dice whose highest face is a picture (`scene.with_pictures`; the OpenGL renderer's stills)."""
    if fmt not in FORMATS:
        raise DicecamError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    if not 1 <= count <= MAX_COUNT:
        raise LimitError(f"count must be 1-{MAX_COUNT}, got {count}")
    check_size(width, height)
    ks = parse_kinds(kinds)
    if renderer == "photoreal" and clip:
        raise DicecamError("--clip is not available with the photoreal renderer")
    if renderer == "photoreal" and workers > 1:
        raise DicecamError("the photoreal renderer uses every core in one process: drop --workers")
    if not 0 <= pictures <= 1:
        raise LimitError(f"--pictures is a share of the dice, 0-1, got {pictures}")
    if pictures and (clip or renderer == "photoreal"):
        raise DicecamError("--pictures is drawn by the OpenGL renderer's stills: drop --clip or --renderer photoreal")
    out = _ready(out, renderer, device)
    writer = Writer(out, fmt)
    t0 = time.perf_counter()
    clips = 0
    if clip:
        with Renderer() as gl:
            for c in tqdm(range(count), disable=not progress, desc="clips", unit="clip"):
                cl = render_clip(image_seed(seed, c), renderer=gl, kinds=ks, width=width, height=height)
                for f, (img, read) in enumerate(zip(cl.frames, cl.per_frame)):
                    name = f"clip{c:05d}_f{f:04d}"
                    writer.add(name, img, read.model_copy(update={"image": name}))
                meta = {"clip": c, "frames": len(cl.frames), "fps": cl.fps, "settled_at": cl.settled_at,
                        "truth": cl.truth.model_dump(mode="json")}
                with open(out / "clips.jsonl", "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(meta, separators=(",", ":")) + "\n")
                clips += 1
    elif renderer == "photoreal":
        for i in tqdm(range(count), disable=not progress, desc="photoreal", unit="img"):
            img, read = _photoreal_for_writer((seed, i, ks, width, height, fmt, device))
            name = f"p{seed}_{i:06d}"
            writer.add(name, img, read.model_copy(update={"image": name}))
    else:
        jobs = [(seed, i, ks, width, height, fmt, pictures) for i in range(count)]
        if workers > 1:
            ctx = mp.get_context("spawn")
            with ctx.Pool(workers, initializer=_worker_init, initargs=("1",)) as pool:
                it = pool.imap(_in_worker, jobs, chunksize=4)
                for i, (img, read) in enumerate(tqdm(it, total=count, disable=not progress, desc="synth", unit="img")):
                    name = f"s{seed}_{i:06d}"
                    writer.add(name, img, read.model_copy(update={"image": name}))
        else:
            with Renderer() as gl:
                for i, job in enumerate(tqdm(jobs, disable=not progress, desc="synth", unit="img")):
                    img, read = _render_for_writer(job, gl)
                    name = f"s{seed}_{i:06d}"
                    writer.add(name, img, read.model_copy(update={"image": name}))
    writer.close()
    dt = time.perf_counter() - t0
    summary = Summary(str(out.resolve()), fmt, writer.count, writer.dice, round(dt, 3), round(writer.count / max(dt, 1e-9), 2), clips)
    pictured = {"pictures": pictures} if pictures else {}  # a set without them is described as it always was
    _describe(out, summary, seed=seed, kinds=list(ks), renderer=renderer, **pictured)
    return summary


def generate_rolls(out: Path, rolls_per_face: int, seed: int, kinds: Sequence[str] | None, *, progress: bool = True,
                   width: int = 640, height: int = 480, renderer: str = "gl", device: str = "cpu") -> list[Summary]:
    """Each kind's die rolled `rolls_per_face` times its faces on a table of its own (look, camera, light and table
    drawn from (seed, kind); a new pose each roll: `scene.one_die_rolls`, `photoreal.run.one_die_rolls`), written
    in the read format to `out`/<kind>-<seed>/, one folder a die, so that `dicecam bench --teach-real out` reads
    each as a table. A die whose folder holds its summary.json is done and kept: a stopped run resumes at the die
    it stopped in. Returns the summaries of the dice rendered now."""
    if not 1 <= rolls_per_face <= MAX_ROLLS_PER_FACE:
        raise LimitError(f"rolls per face must be 1-{MAX_ROLLS_PER_FACE}, got {rolls_per_face}")
    check_size(width, height)
    ks = parse_kinds(kinds)
    out = _ready(out, renderer, device)
    done = []
    with _gl_renderer(renderer) as gl:
        for kind in ks:
            folder = out / f"{kind}-{seed}"
            if (folder / "summary.json").is_file():
                continue
            rolls = rolls_per_face * len(FACES[DieType(kind)])
            die_seed = image_seed(seed, KINDS.index(kind))  # the same die whichever other kinds are asked for
            if gl is not None:
                frames = one_die_rolls(die_seed, kind, rolls, renderer=gl, width=width, height=height)
            else:
                from .photoreal.run import one_die_rolls as photoreal_rolls

                frames = photoreal_rolls(die_seed, kind, rolls, width=width, height=height, device=device)
            summary = _write_rolls(folder, frames, rolls, f"r{seed}_{kind}", kind, progress)
            _describe(folder, summary, seed=seed, die_seed=die_seed, kinds=[kind], renderer=renderer, one_die=True,
                      rolls_per_face=rolls_per_face)
            done.append(summary)
    return done


def generate_table(out: Path, rolls: int, seed: int, kinds: Sequence[str] | None, n_dice: int = 10, *,
                   progress: bool = True, width: int = 640, height: int = 480, renderer: str = "gl",
                   device: str = "cpu") -> Summary | None:
    """A table of `n_dice` mixed dice (`kinds` in turn) rolled together `rolls` times (`scene.table_rolls`,
    `photoreal.run.table_rolls`), written in the read format to `out`/table-<seed>/, which `dicecam bench
    --teach-real` reads as one table: photos taught until each face was seen three times, the others read. A table
    whose folder holds its summary.json is done and kept (None)."""
    if not 1 <= rolls <= MAX_TABLE_ROLLS:
        raise LimitError(f"rolls must be 1-{MAX_TABLE_ROLLS}, got {rolls}")
    check_size(width, height)
    chosen = table_kinds(kinds, n_dice)
    out = _ready(out, renderer, device)
    folder = out / f"table-{seed}"
    if (folder / "summary.json").is_file():
        return None
    with _gl_renderer(renderer) as gl:
        if gl is not None:
            frames = table_rolls(seed, n_dice, rolls, renderer=gl, kinds=kinds, width=width, height=height)
        else:
            from .photoreal.run import table_rolls as photoreal_table

            frames = photoreal_table(seed, n_dice, rolls, kinds=kinds, width=width, height=height, device=device)
        summary = _write_rolls(folder, frames, rolls, f"t{seed}", "table", progress)
    _describe(folder, summary, seed=seed, kinds=chosen, renderer=renderer, table=True, rolls=rolls)
    return summary


def _gl_renderer(renderer: str):
    """An open OpenGL renderer for renderer "gl", closed on leaving; nothing for the photoreal one."""
    return Renderer() if renderer == "gl" else nullcontext()


def _write_rolls(folder: Path, frames, total: int, prefix: str, desc: str, progress: bool) -> Summary:
    """Rolled frames written to `folder` in the read format (`<prefix>_<i>` each), and what that took."""
    writer = Writer(folder, "jsonl")
    t0 = time.perf_counter()
    for i, (img, read) in enumerate(tqdm(frames, total=total, disable=not progress, desc=desc, unit="roll")):
        name = f"{prefix}_{i:05d}"
        writer.add(name, img, read.model_copy(update={"image": name}))  # the writer encodes at JPEG_QUALITY
    writer.close()
    dt = time.perf_counter() - t0
    return Summary(str(folder.resolve()), "jsonl", writer.count, writer.dice, round(dt, 3),
                   round(writer.count / max(dt, 1e-9), 2))


def _describe(folder: Path, summary: Summary, **what) -> None:
    """The folder's summary.json, written last: its presence says the folder is whole."""
    (folder / "summary.json").write_text(json.dumps({**asdict(summary), "classes": list(KINDS), **what}, indent=1) + "\n")
