"""The API's routes, one module per thing served (rolls, dice, rules, vision, events, memory); `ROUTERS` is
the order the app includes them in, which is the order of the API document. Thin: validation here, the roll
flow in `server/table.py`."""

from __future__ import annotations

from . import dice, events, memory, rolls, rules, vision

ROUTERS = (rolls.router, dice.router, rules.router, vision.router, events.router, memory.router)
