"""`dicecam train`: the training recipe (needs the `train` extra: torch, ultralytics).

The dispatcher imports this module for every command: the recipe (torch) and the extras check are
imported when `train` runs.
"""

from __future__ import annotations

import os
from pathlib import Path

from dicecam.mechanics.errors import DicecamError, LimitError

STAGES = ("synth", "real", "detector", "reader", "export", "kind", "diecheck", "recogniser", "doubt")
# The recogniser's fine-tune is asked for by name: measured on runs it never learnt (its cross-fit), it
# reads about as well as the wheel's and its doubt lets no numeral die be sure (models/MODEL_CARD.md).
DEFAULT_STAGES = tuple(s for s in STAGES if s != "recogniser")


def register(subparsers) -> None:
    """Add this module's subcommands; see server/cli.py for the contract."""
    p = subparsers.add_parser(
        "train", help="train the detector and face reader (needs the train extra)",
        description="Render synthetic dice, add the real photos, train the detector and the face reader, "
        "export ONNX. Every stage resumes: run the same command again after an interruption.")
    p.add_argument("--work", type=Path, default=Path("work/train"), help="work folder: data, checkpoints (default work/train)")
    p.add_argument("--export", type=Path, default=None, help="where the ONNX files and cards go (default WORK/export)")
    p.add_argument("--real", type=Path, default=None, help="folder of real YOLO-labelled d6-pip photos, e.g. ../shared/datasets/real")
    p.add_argument("--real-sets", default="pips,lurig-d20-values,lurig-types",
                   help="which real sets under --real to use: pips (the d6-pip YOLO sets), lurig-d20-values, "
                        "lurig-types (default: all)")
    p.add_argument("--images", type=int, default=20000, help="synthetic training images (default 20000)")
    p.add_argument("--seed", type=int, default=1000, help="synthetic training seed (default 1000)")
    p.add_argument("--kind-images", type=int, default=600,
                   help="renders the kind head and the doubt model are fitted on beside the real photos (default 600)")
    p.add_argument("--photoreal", type=Path, default=None,
                   help="photoreal renders the kind head learns too: a folder from `dicecam synth --renderer photoreal "
                        "--format jsonl`, or a folder of such folders")
    p.add_argument("--epochs", type=int, default=40, help="detector epochs (default 40)")
    p.add_argument("--hours", type=float, default=None, help="detector wall-clock budget in hours (overrides --epochs)")
    p.add_argument("--cache", choices=("ram", "disk"), default=None, help="cache decoded detector images")
    p.add_argument("--imgsz", type=int, default=416, help="detector training size (default 416)")
    p.add_argument("--batch", type=int, default=64, help="detector batch (default 64)")
    p.add_argument("--detector-init", type=Path, default=None,
                   help="fine-tune the detector from an exported detector (.onnx, e.g. models/detector.onnx) or a checkpoint (.pt)")
    p.add_argument("--detector-lr", type=float, default=0.002, help="detector fine-tuning learning rate (default 0.002)")
    p.add_argument("--reader-epochs", type=int, default=30, help="face reader epochs (default 30)")
    p.add_argument("--reader-batch", type=int, default=512)
    p.add_argument("--reader-size", type=int, default=64, help="face reader input side in pixels (default 64)")
    p.add_argument("--reader-arch", choices=("residual", "compact"), default="residual",
                   help="face reader network: residual (the shipped one) or compact (trains ~7x faster on a CPU)")
    p.add_argument("--reader-width", type=int, default=32, help="face reader channels in its first stage (default 32)")
    p.add_argument("--real-weight", type=float, default=2.0,
                   help="how much more often a real crop is drawn than a synthetic one (default 2)")
    p.add_argument("--reader-init", type=Path, default=None,
                   help="fine-tune the face reader from a checkpoint (.pt) or an exported reader (.onnx)")
    p.add_argument("--reader-lr", type=float, default=3e-3, help="face reader peak learning rate (default 3e-3)")
    p.add_argument("--recogniser-epochs", type=int, default=2, help="text recogniser fine-tuning epochs (default 2)")
    p.add_argument("--device", default="cpu", help="cpu, or a CUDA device index such as 0")
    p.add_argument("--workers", type=int, default=2, help="render and data-loading processes")
    p.add_argument("--stages", default=",".join(DEFAULT_STAGES),
                   help=f"comma-separated subset of {','.join(STAGES)} (default: all but recogniser)")
    p.add_argument("--pack-real", type=Path, default=None, metavar="OUT",
                   help="only copy WORK/real's detector photos, shrunk to --imgsz, into the new folder OUT: put it "
                        "at WORK/real on a training machine without the shared sets (a lent GPU)")
    p.set_defaults(handler=_train)


def _train(args) -> int:
    stages = tuple(s.strip() for s in args.stages.split(",") if s.strip())
    real_sets = tuple(s.strip() for s in args.real_sets.split(",") if s.strip())
    known = ("pips", "lurig-d20-values", "lurig-types")
    if not real_sets or any(s not in known for s in real_sets):
        raise DicecamError(f"--real-sets takes a comma-separated subset of {', '.join(known)}")
    unknown = [s for s in stages if s not in STAGES]
    if unknown:
        raise DicecamError(f"unknown stage {unknown[0]!r} (stages: {', '.join(STAGES)})")
    for name, value, lo, hi in (("--images", args.images, 1, 1_000_000), ("--kind-images", args.kind_images, 1, 100_000), ("--epochs", args.epochs, 1, 1000),
                                ("--reader-epochs", args.reader_epochs, 1, 1000), ("--workers", args.workers, 1, 64),
                                ("--recogniser-epochs", args.recogniser_epochs, 1, 100),
                                ("--imgsz", args.imgsz, 64, 1280), ("--batch", args.batch, 1, 1024),
                                ("--reader-size", args.reader_size, 32, 160), ("--reader-width", args.reader_width, 4, 128)):
        if not lo <= value <= hi:
            raise LimitError(f"{name} must be {lo}-{hi}, got {value}")
    if args.photoreal is not None and not args.photoreal.is_dir():
        raise DicecamError(f"--photoreal takes a folder of photoreal renders, and {args.photoreal} is none")
    init = args.detector_init
    if init is not None and (init.suffix not in (".onnx", ".pt") or not init.is_file()):
        raise DicecamError(f"--detector-init takes an exported detector (.onnx) or a checkpoint (.pt) that exists, not {init}")
    if not 0 < args.detector_lr <= 1:
        raise LimitError(f"--detector-lr must be over 0 and at most 1, got {args.detector_lr}")
    if args.pack_real is not None:  # needs no training extra: the photos are copied, nothing is trained
        from .data import pack_for_detector

        packed = pack_for_detector(args.work / "real", args.pack_real, max_side=args.imgsz)
        print(f"packed {packed['photos']} ({packed['bytes'] / 1e6:.1f} MB) into {args.pack_real}")
        return 0
    from dicecam.vision.extras import require

    # Only look: ultralytics must not be imported before the recipe sets it up offline.
    require("train", "training", modules=("torch", "ultralytics", "moderngl"))
    # Numerals in every installed font, not only the bundled ones (see datasets/render.py).
    os.environ["DICECAM_SYSTEM_FONTS"] = "1"
    # After the setting above: the renderer reads it when the recipe imports it.
    from .recipe import Recipe, run
    from .train_detector import DetectorTrainConfig
    from .train_reader import ReaderTrainConfig
    from .train_recogniser import RecogniserTrainConfig

    device = args.device
    threads = os.cpu_count() or 1
    r = Recipe(
        work=args.work, export=args.export or args.work / "export", real=args.real, real_sets=real_sets,
        images=args.images, kind_images=args.kind_images, photoreal=args.photoreal,
        seed=args.seed, workers=args.workers, stages=stages,
        detector=DetectorTrainConfig(epochs=args.epochs, imgsz=args.imgsz, batch=args.batch, workers=args.workers,
                                     device=device, seed=args.seed, hours=args.hours,
                                     cache=args.cache or False,
                                     init=str(args.detector_init) if args.detector_init else None, lr0=args.detector_lr),
        reader=ReaderTrainConfig(epochs=args.reader_epochs, batch=args.reader_batch, seed=args.seed,
                                 device="cpu" if device == "cpu" else f"cuda:{device}", threads=threads,
                                 size=args.reader_size, width=args.reader_width, arch=args.reader_arch,
                                 real_weight=args.real_weight,
                                 init=str(args.reader_init) if args.reader_init else None, lr=args.reader_lr),
        recogniser=RecogniserTrainConfig(epochs=args.recogniser_epochs, threads=threads),
    )
    report = run(r)
    print(f"trained: {report['figures']} in {report['timings'].get('total_s')} s; weights in {r.export}")
    return 0
