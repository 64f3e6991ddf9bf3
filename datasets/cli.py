"""CLI commands of the synthetic dice generator: `synth` and `contact-sheet`.

The dispatcher imports this module for every command: the handlers import the renderer, and
the extras check, when they run.
"""

from __future__ import annotations

import os
from pathlib import Path

from dicecam.mechanics.errors import DicecamError, LimitError


def register(subparsers) -> None:
    """Add this module's subcommands; see server/cli.py for the contract."""
    p = subparsers.add_parser("synth", help="render labelled synthetic dice images")
    p.add_argument("--out", required=True, type=Path, help="output folder")
    p.add_argument("--count", type=int, default=100,
                   help="images (or clips with --clip; rolls per face with --one-die; rolls with --one-table)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--kinds", default=None, help="comma-separated die kinds, e.g. d4,d20 (default: all)")
    p.add_argument("--format", dest="fmt", default=None, help="yolo | crops | jsonl (default yolo; --one-die: jsonl)")
    p.add_argument("--clip", action="store_true", help="render short roll clips instead of stills")
    p.add_argument("--one-die", action="store_true",
                   help="each kind's one die rolled --count times per face on a table of its own, a folder per die "
                        "(OUT/KIND-SEED, read format): what `dicecam bench --teach-real OUT` measures teaching on")
    p.add_argument("--one-table", action="store_true",
                   help="--dice mixed dice (--kinds in turn) rolled together --count times on one table, one folder "
                        "(OUT/table-SEED, read format): what `dicecam bench --teach-real OUT/table-SEED` measures "
                        "teaching a table of mixed dice on")
    p.add_argument("--dice", type=int, default=10, help="--one-table: how many dice lie on the table")
    p.add_argument("--width", type=int, default=640)
    p.add_argument("--height", type=int, default=480)
    p.add_argument("--pictures", type=float, default=0.0,
                   help="the share of dice (no d4) whose highest face shows a picture, as ornate sets print a logo on "
                        "their 20 (default 0)")
    p.add_argument("--workers", type=int, default=1, help="parallel render processes")
    p.add_argument("--renderer", default="gl", choices=("gl", "photoreal"),
                   help="gl: the fast OpenGL renderer; photoreal: Blender Cycles (pip install 'dicecam[photoreal]')")
    p.add_argument("--device", default="cpu", choices=("cpu", "gpu"), help="photoreal: render on the CPU or a CUDA/OptiX GPU")
    p.add_argument("--system-fonts", action="store_true",
                   help="gl: numerals also in the installed system fonts, not only the bundled ones")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(handler=_synth)

    c = subparsers.add_parser("contact-sheet", help="draw labelled synthetic samples on one grid to check by eye")
    c.add_argument("--out", required=True, type=Path, help="PNG to write")
    c.add_argument("--count", type=int, default=24)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--kinds", default=None)
    c.add_argument("--from", dest="source", type=Path, default=None,
                   help="an exported folder (yolo or jsonl) to sample instead of rendering")
    c.add_argument("--cols", type=int, default=6)
    c.add_argument("--per-kind", type=int, default=0, help="N samples per die kind, one row per kind, larger dice")
    c.add_argument("--tile", type=int, default=320, help="tile width in pixels")
    c.set_defaults(handler=_contact)


def _synth(args) -> int:
    from dicecam.vision.extras import require

    require("synth")
    if args.system_fonts:
        os.environ["DICECAM_SYSTEM_FONTS"] = "1"  # read when the renderer is imported, here and in its workers
    from .synth import generate

    if not 1 <= args.workers <= 16:
        raise LimitError(f"--workers must be 1-16, got {args.workers}")
    if args.one_die and args.one_table:
        raise DicecamError("--one-die and --one-table are two kinds of set: give one")
    if args.one_die or args.one_table:
        _rolls_only(args)
    if args.one_die:
        return _one_die(args)
    if args.one_table:
        return _one_table(args)
    s = generate(args.out, args.count, args.seed, args.kinds, args.fmt or "yolo", clip=args.clip, progress=not args.quiet,
                 width=args.width, height=args.height, workers=args.workers, renderer=args.renderer,
                 device=args.device, pictures=args.pictures)
    print(f"wrote {s.images} images ({s.dice} dice) to {s.out} in {s.seconds:.1f} s ({s.images_per_s:.2f} images/s)")
    return 0


def _rolls_only(args) -> None:
    """--one-die and --one-table write rolled stills in the read format, from one process."""
    flag = "--one-die" if args.one_die else "--one-table"
    if args.fmt not in (None, "jsonl"):
        raise DicecamError(f"{flag} writes the read format: drop --format or give --format jsonl")
    if args.clip or args.workers > 1:
        raise DicecamError(f"{flag} renders stills in one process: drop --clip and --workers")
    if args.pictures:
        raise DicecamError(f"--pictures is drawn on synth's random tables, not {flag}'s: drop it")


def _one_table(args) -> int:
    from .synth import generate_table

    s = generate_table(args.out, args.count, args.seed, args.kinds, args.dice, progress=not args.quiet,
                       width=args.width, height=args.height, renderer=args.renderer, device=args.device)
    if s is None:
        print(f"kept {args.out / f'table-{args.seed}'}: it was there, whole")
    else:
        print(f"wrote {s.images} rolls ({s.dice} dice) to {s.out} in {s.seconds:.1f} s ({s.images_per_s:.2f} rolls/s)")
    return 0


def _one_die(args) -> int:
    from .synth import generate_rolls

    done = generate_rolls(args.out, args.count, args.seed, args.kinds, progress=not args.quiet, width=args.width,
                          height=args.height, renderer=args.renderer, device=args.device)
    rolls = sum(s.images for s in done)
    seconds = sum(s.seconds for s in done)
    print(f"wrote {len(done)} dice ({rolls} rolls) to {args.out} in {seconds:.1f} s"
          + (f" ({rolls / seconds:.2f} rolls/s)" if seconds else "") + "; dice already there were kept")
    return 0


def _contact(args) -> int:
    from dicecam.vision.extras import require

    if args.source is None:  # a sheet of an exported folder renders nothing
        require("synth")
    from .contact import contact_sheet

    n = contact_sheet(args.out, count=args.count, seed=args.seed, kinds=args.kinds, source=args.source,
                      cols=args.cols, tile=args.tile, per_kind=args.per_kind)
    print(f"wrote {args.out} ({n} samples)")
    return 0
