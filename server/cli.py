"""The `dicecam` command: one dispatcher, each subcommand registered by the package that owns it
(the server's commands are in `server/commands/`).

Every owner module exposes `register(subparsers)`, which adds its subcommand(s) and sets
`handler=` to a function taking the parsed namespace and returning an exit status. A
register function imports nothing heavy: the handler imports what it needs when it runs.

Errors: a `DicecamError` (bad input) prints one line to stderr and exits 2; a missing or
unreadable file exits 1 with one line; no traceback reaches the user either way.
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from typing import Sequence

from dicecam.mechanics.errors import DicecamError

# Owner modules, in the order their commands appear in --help.
COMMAND_MODULES = (
    "dicecam.server.commands.rules",  # resolve, odds
    "dicecam.server.commands.fairness",  # fairness
    "dicecam.datasets.cli",  # synth, contact-sheet
    "dicecam.models.cli",  # train
    "dicecam.server.commands.sample",  # sample
    "dicecam.server.commands.read",  # read, teach, eval
    "dicecam.server.commands.bench",  # bench
    "dicecam.server.commands.watch",  # watch
    "dicecam.server.commands.serve",  # serve
)


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        # A value pasted 5000 characters long is shown by its start, so the line stays one line.
        message = re.sub(r"'([^'\n]{30})[^'\n]{10,}'", lambda m: f"'{m.group(1)}…'", message)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="dicecam", description="Read dice through a webcam and adjudicate the roll.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(handler(args) or 0)
    except DicecamError as e:
        print(f"dicecam {args.command}: {e}", file=sys.stderr)
        return 2
    except (FileNotFoundError, IsADirectoryError, PermissionError) as e:
        name = getattr(e, "filename", None) or str(e)
        print(f"dicecam {args.command}: cannot open {name}: {e.strerror or e}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as e:
        # An optional extra the command reached for: one line naming it. Any other missing module is a bug.
        # (Imported here, on the error path: this module is every command's start-up.)
        from dicecam.vision.extras import as_missing_extra

        missing = as_missing_extra(e)
        if missing is None:
            raise
        print(f"dicecam {args.command}: {missing}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `dicecam read ... | head` closes the pipe early: not an error for the user.
        return 0


if __name__ == "__main__":
    sys.exit(main())
