"""The `dicecam` commands of the server folder, one module per family (`server/cli.py` dispatches).

Each module exposes `register(subparsers)`; the flags several commands share are in `flags.py`. The
datasets and models folders register their own commands (`datasets/cli.py`, `models/cli.py`).
"""
