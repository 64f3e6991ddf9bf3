"""`dicecam watch`: the live pipeline on the terminal — one line per settled roll.

Rolls go to stdout (a summary line, or with --jsonl the event JSON); camera status changes
go to stderr so a script reading stdout sees only rolls.

The dispatcher imports this module for every command: the pipeline (OpenCV, ONNX Runtime) is
imported inside `run`, when `watch` runs.
"""

from __future__ import annotations

import argparse
import json
import sys

from dicecam.mechanics.errors import DicecamError, LimitError, first_problem

from .flags import add_camera_size_flag, add_memory_flag, add_option_flags, camera_size, options_from_args


def register(subparsers) -> None:
    """Add `watch`; see server/cli.py for the contract."""
    p = subparsers.add_parser(
        "watch", help="watch the table and print one line per settled roll",
        description="Watch a camera (or a video, an image sequence, a stream or the bundled demo clip) and print "
        "each roll once, when the dice come to rest: its readings and its verdict under SYSTEM.")
    p.add_argument("--source", default="0",
                   help="camera index or /dev/videoN, a video file, a folder of frames, a stream URL, or 'demo' (default 0)")
    p.add_argument("--system", default="contingency", metavar="NAME", help="rule system (default contingency)")
    p.add_argument("--jsonl", action="store_true", help="one event JSON per line (the shape the server sends)")
    g = p.add_argument_group("pipeline")
    g.add_argument("--settle-frames", type=int, metavar="N", help="quiet frames before the dice count as at rest (default 6)")
    g.add_argument("--vote-frames", type=int, metavar="N", help="still frames voted into one roll (default 3)")
    g.add_argument("--base-colour", metavar="C", help="emergence: the colour of the base die (default: first in reading order)")
    g.add_argument("--fast", action="store_true",
                   help="a file, folder or the demo: every frame as fast as possible, not at the clip's frame rate")
    g.add_argument("--loop", action="store_true", help="the demo clip: play it again and again (default: once)")
    g.add_argument("--max-rolls", type=int, metavar="N", help="stop after N rolls")
    g.add_argument("--backend", default="auto", help="onnxruntime, openvino or auto (default)")
    add_camera_size_flag(g)
    add_memory_flag(g)
    add_option_flags(p, odds=False)
    p.set_defaults(handler=run)


def _settings(args):
    from pydantic import ValidationError

    from dicecam.vision.watcher import PipelineSettings

    given = {k: v for k, v in (("settle_frames", args.settle_frames), ("vote_frames", args.vote_frames),
                               ("base_colour", args.base_colour)) if v is not None}
    try:
        return PipelineSettings(**given)
    except ValidationError as e:
        field, msg = first_problem(e)
        raise DicecamError(f"--{field.replace('_', '-')}: {msg}") from None


def _human(event) -> str:
    roll = event.data
    dice = " ".join(f"{d.type.value}:{d.value}" + (f":{d.colour}" if d.colour else "")
                    + ("?" if d.uncertain or d.cocked else "") for d in roll.dice)
    if roll.status == "uncertain" or roll.adjudication is None:
        return f"[frame {roll.frame_id}] {dice} — uncertain: {roll.reason}"
    follows = " (follows the last roll)" if roll.follows else ""
    return f"[frame {roll.frame_id}] {dice} — {roll.adjudication.summary}{follows}"


def run(args: argparse.Namespace) -> int:
    from ..rulebook import RegistryRules

    rules = RegistryRules()
    rules.check_options(args.system, {})  # an unknown system fails here, before the flags are read
    options = rules.check_options(args.system, options_from_args(args.system, args))
    if args.max_rolls is not None and args.max_rolls < 1:
        raise LimitError(f"--max-rolls must be at least 1, got {args.max_rolls}")
    settings = _settings(args)
    camera = camera_size(args)

    from dicecam.vision.pipeline import Pipeline
    from dicecam.vision.read import Reader
    from dicecam.vision.sources import is_camera, open_source, probe_camera

    if is_camera(args.source):
        try:
            probe_camera(args.source)
        except DicecamError as e:
            raise DicecamError(f"no camera at {args.source}: {e} (try --source demo, a video file or a folder of frames)") from None
    source = open_source(args.source, realtime=not args.fast, loop_demo=args.loop, **camera)
    try:
        reader = Reader.load(backend=args.backend)
    except DicecamError:
        raise
    except Exception as e:  # a broken runtime install (onnxruntime, openvino): one line, not a traceback
        raise DicecamError(f"cannot load the dice reader: {e}") from None
    from dicecam.vision.teach import attach

    attach(reader, args.memory, None, lambda m: print(f"dicecam watch: {m}", file=sys.stderr, flush=True))
    pipeline = Pipeline(source, reader.watching(), args.system, options, settings)
    as_json = args.jsonl or args.json
    rolls = [0]
    camera = {"last": None}

    def on_event(event) -> None:
        if event.type == "camera.status":
            line = event.data.message
            if line != camera["last"]:  # a camera flapping between retries says so once per change
                camera["last"] = line
                skipped = event.data.skipped_frames
                print(f"dicecam watch: {line}" + (f" ({skipped} bad frames skipped)" if skipped else ""),
                      file=sys.stderr, flush=True)
            return
        print(json.dumps(event.model_dump(mode="json"), ensure_ascii=False) if as_json else _human(event), flush=True)
        rolls[0] += 1
        if args.max_rolls is not None and rolls[0] >= args.max_rolls:
            pipeline.stop(timeout=0)

    pipeline.subscribe(on_event)
    try:
        pipeline.run()
    except KeyboardInterrupt:
        pipeline.stop(timeout=1)
    return 0
