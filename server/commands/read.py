"""CLI commands of the reader: `read`, `teach` and `eval`.

The dispatcher imports this module for every command, `--help` included: the reader's modules
(OpenCV, ONNX Runtime, pydantic) and the extras check are imported inside the
handlers, when one of these commands runs.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from dicecam.mechanics.errors import DicecamError, LimitError

from .flags import add_memory_flag


def register(subparsers) -> None:
    """Add `read`, `teach` and `eval`; see server/cli.py for the contract."""
    p = subparsers.add_parser("read", help="read the dice on images; one JSON line per image")
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="image files or folders of images")
    p.add_argument("--jsonl", action="store_true", help="JSON Lines output (the default; kept for scripts)")
    p.add_argument("--backend", default="auto", help="onnxruntime, openvino or auto (default)")
    add_memory_flag(p)
    p.set_defaults(handler=_read)

    t = subparsers.add_parser(
        "teach", help="teach the table's dice memory from labelled photos",
        description="Teach the dice memory your own dice from labelled photos (the read format: one JSON line per "
        "photo; images next to the file or in its images/ folder; a line with \"single\": true and no box holds "
        "one die). Each bad example is refused with its reason; one that contradicts the memory is flagged, "
        "not learnt.")
    t.add_argument("truth", type=Path, metavar="TRUTH", help="a reads.jsonl file, or a folder holding one")
    t.add_argument("--die", metavar="NAME", help="the name of the die these photos show (e.g. 'gold d20')")
    t.add_argument("--force", action="store_true",
                   help="an example contradicting the memory replaces the earlier one instead of being flagged")
    t.add_argument("--backend", default="auto")
    add_memory_flag(t)
    t.set_defaults(handler=_teach)

    e = subparsers.add_parser("eval", help="score the reader on labelled images")
    e.add_argument("truth", type=Path, metavar="TRUTH",
                   help="a reads.jsonl file (or a folder holding one, or a folder of such folders), or a YOLO "
                        "folder of d6-pip photos")
    e.add_argument("--limit", type=int, default=None, help="score at most N images")
    e.add_argument("--held-out", action="store_true",
                   help="score only the part of a shared real set that the training recipe never sees")
    e.add_argument("--backend", default="auto")
    e.add_argument("--misreads", type=Path, metavar="DIR",
                   help="also write DIR/misreads.jsonl (every die read wrong) and DIR/misreads.jpg (a sheet of them, "
                        "those read without a doubt flag first) to look at")
    add_memory_flag(e)
    e.set_defaults(handler=_eval)


def load_reader(args):
    """The shipped reader with the table's dice memory (--memory) attached."""
    from dicecam.vision.read import Reader
    from dicecam.vision.teach import attach

    reader = Reader.load(backend=args.backend)
    attach(reader, getattr(args, "memory", None), None,
           lambda m: print(f"dicecam {args.command}: {m}", file=sys.stderr))
    return reader


def _teach(args) -> int:
    from dicecam.vision.read import Reader
    from dicecam.vision.teach import memory_dir, open_memory, teach_truth

    if args.memory is not None and args.memory.strip().lower() == "none":
        raise DicecamError("--memory none has nowhere to teach: give a folder, or leave --memory out")
    t0 = time.perf_counter()
    reader = Reader.load(backend=args.backend)
    folder = memory_dir(args.memory)
    memory = open_memory(reader, folder)
    report = teach_truth(reader, memory, args.truth, die=args.die, force=args.force,
                         on_problem=lambda m: print(f"dicecam teach: {m}", file=sys.stderr))
    if report.learnt:
        memory.save()
    known = sum(d["known"] for d in memory.dice())
    print(f"dicecam teach: learnt {report.learnt} of {report.examples} examples from {report.photos} photos "
          f"({len(report.flagged)} flagged as contradicting the memory, {len(report.refused)} refused) "
          f"in {time.perf_counter() - t0:.1f} s; the memory in {folder} holds {len(memory)} examples, "
          f"{len(memory.dice())} dice, {known} fully known", file=sys.stderr)
    return 0 if report.learnt else 2


def _images(paths: list[Path]):
    from dicecam.vision.labels import IMAGE_EXTS

    for p in paths:
        if p.is_dir():
            yield from sorted(f for f in p.rglob("*") if f.suffix.lower() in IMAGE_EXTS)
        else:
            yield p


def _read(args) -> int:
    from dicecam.mechanics.dice import ImageRead
    from dicecam.vision.images import ImageRefused, load_image

    reader = load_reader(args)
    failed = 0
    for path in _images(args.paths):
        # The server's loader and caps: a cut-short or oversized photo is refused, never guessed at.
        try:
            img = load_image(path)
        except ImageRefused as e:
            why = str(e)
        except (FileNotFoundError, IsADirectoryError, PermissionError) as e:
            why = "no such file" if not path.exists() else (e.strerror or str(e))
        else:
            why = None
        if why is not None:
            failed += 1
            print(f"dicecam read: cannot read {path}: {why}", file=sys.stderr)
            continue
        read = ImageRead(image=str(path), width=img.shape[1], height=img.shape[0], dice=reader(img))
        print(json.dumps(read.model_dump(mode="json"), separators=(",", ":")), flush=True)
    return 1 if failed else 0


def _eval(args) -> int:
    from dicecam.vision.evaluate import evaluate, held_out_in

    if args.limit is not None and args.limit < 1:
        raise LimitError(f"--limit must be at least 1, got {args.limit}")
    if args.misreads is not None:
        from dicecam.vision.misreads import usable

        usable(args.misreads)  # said before minutes of reading, not after
    keep = held_out_in(args.truth) if args.held_out else None
    reader = load_reader(args)
    report = evaluate(args.truth, reader, args.limit, on_error=lambda m: print(f"dicecam eval: {m}", file=sys.stderr),
                      keep=keep)
    if not report.images and not report.failed:  # an empty folder scores nothing: saying 0 % would mislead
        raise DicecamError(f"no labelled images to score in {args.truth}" + (" (its held-out part)" if args.held_out else ""))
    out = report.to_json()
    out["truth"] = str(args.truth)
    out["held_out_only"] = bool(args.held_out)
    if args.misreads is not None:
        from dicecam.vision.misreads import write_misreads

        out["misreads"] = [str(p) for p in write_misreads(report.misreads, args.misreads)]
    print(json.dumps(out, indent=1))
    return 0
