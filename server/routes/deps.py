"""What every route shares: the table, the write guard (same origin or the token), and the answers documented."""

from __future__ import annotations

import secrets
from typing import Annotated, Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Depends, HTTPException, Request

from ..contract import JSONRoute, answers
from ..table import Table

MAX_DICE = 100
# Write and control endpoints may also answer these.
WRITE_ANSWERS = answers(401, 403)


def api_router() -> APIRouter:
    """A router under /api. Every route may answer 400 (the Host guard) and 422 (FastAPI's validation, in our
    ValidationProblem shape)."""
    return APIRouter(prefix="/api", route_class=JSONRoute, responses=answers(400, 422))


def get_table(request: Request) -> Table:
    return request.app.state.table


def foreign(origin: str | None, host: str | None) -> bool:
    """A browser request from a page of another site. "null" is foreign too: a sandboxed iframe or a
    file:// page sends it, and their form uploads need no CORS preflight."""
    return origin is not None and urlsplit(origin).netloc != (host or "")


def require_token(request: Request) -> None:
    """Write and control endpoints: same-origin or carrying the token, and the token when the server has one."""
    settings = request.app.state.table.settings
    auth = request.headers.get("authorization", "")
    given = auth[7:].strip() if auth.lower().startswith("bearer ") else request.query_params.get("token", "")
    has_token = settings.token_required and secrets.compare_digest(given.encode(), settings.token.encode())
    origin = request.headers.get("origin")
    if foreign(origin, request.headers.get("host")) and not has_token:
        # Another web site open in the same browser must not change this table's rolls (CSRF).
        raise HTTPException(403, f"cross-origin change refused (from {origin[:100]})")
    if settings.token_required and not has_token:
        raise HTTPException(
            status_code=401,
            detail="this server needs its token for changes: send 'Authorization: Bearer TOKEN' or add ?token=TOKEN",
            headers={"WWW-Authenticate": "Bearer"},
        )


def json_answers(*codes: int) -> dict[int | str, dict[str, Any]]:
    """`answers` for a route whose success is not JSON (a JPEG): FastAPI documents a `model` answer in the
    route's own media type, so its refusals would read as image/jpeg; they are sent as JSON."""
    out: dict[int | str, dict[str, Any]] = {}
    for code, answer in answers(*codes).items():
        name = answer["model"].__name__
        out[code] = {"description": answer["description"],
                     "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{name}"}}}}
    return out


TableDep = Annotated[Table, Depends(get_table)]
Write = [Depends(require_token)]
