"""CLI commands: watch (live pipeline issue). Placeholder until that issue lands."""


def register(subparsers) -> None:
    """Add this module's subcommands; see server/cli.py for the contract."""
