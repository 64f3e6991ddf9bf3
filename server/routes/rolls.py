"""/api/rolls and the exports: the history, rolls entered by hand, corrections, each roll's picture."""

from __future__ import annotations

from typing import Any

from fastapi import HTTPException, Query
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from dicecam.mechanics.roll import Roll

from ..contract import CSVResponse, Die, JPEGResponse, answers
from ..store import ExportedRoll
from .deps import MAX_DICE, WRITE_ANSWERS, TableDep, Write, api_router, json_answers

router = api_router()


class ResolveRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    system: str | None = Field(default=None, max_length=64, title="System (default: the configured one)")
    options: dict[str, Any] | None = Field(default=None, title="System options (default: the configured ones)")
    dice: list[Die] = Field(min_length=1, max_length=MAX_DICE, title="Dice as read, e.g. \"d6:5\" or objects")
    follows: str | None = Field(default=None, max_length=64, title="Id of the roll this continues")


class AmendRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    dice: list[Die] = Field(min_length=1, max_length=MAX_DICE, title="The corrected dice, all of them")
    system: str | None = Field(default=None, max_length=64, title="System (default: the original roll's)")
    options: dict[str, Any] | None = Field(default=None, title="Options (default: the original roll's when the system "
                                           "is unchanged, else the new system's defaults)")


class RollWithAmendments(Roll):
    amendments: list[Roll] = Field(default_factory=list, title="Corrections of this roll, oldest first")


class HistoryPage(BaseModel):
    items: list[Roll] = Field(title="Rolls, newest first")
    total: int = Field(title="Rolls stored")
    offset: int
    limit: int


@router.get("/rolls", response_model=HistoryPage, summary="Roll history, newest first", tags=["rolls"])
def history(table: TableDep, offset: int = Query(0, ge=0, le=10_000_000), limit: int = Query(50, ge=1, le=10_000)):
    """One page of the stored rolls, amendments included (they name the roll they amend)."""
    limit = min(limit, table.settings.page_max)
    page = table.store.page(offset, limit)
    return HistoryPage(items=page.items, total=page.total, offset=offset, limit=limit)


@router.get("/rolls/{roll_id}", response_model=RollWithAmendments, summary="One roll and its amendments", tags=["rolls"],
            responses=answers(404))
def one_roll(roll_id: str, table: TableDep):
    roll = table.store.get(roll_id)
    if roll is None:
        raise HTTPException(404, f"no roll {roll_id!r}")
    return RollWithAmendments(**roll.model_dump(), amendments=table.store.amendments(roll_id))


@router.post("/rolls", response_model=Roll, status_code=201, dependencies=Write, summary="Enter a roll by hand",
             tags=["rolls"], responses={**WRITE_ANSWERS, **answers(413)})
def manual_roll(body: ResolveRequest, table: TableDep):
    """Adjudicate dice typed in at the table; stored with source "manual" and announced as roll.settled."""
    return table.manual(body.system, body.options, body.dice, follows=body.follows)


@router.post("/rolls/{roll_id}/amend", response_model=Roll, status_code=201, dependencies=Write,
             summary="Correct a misread roll", tags=["rolls"], responses={**WRITE_ANSWERS, **answers(404, 413)})
def amend_roll(roll_id: str, body: AmendRequest, table: TableDep):
    """Re-adjudicate with corrected dice. The original stays; the correction is a new roll with `amends`
    set, announced as roll.amended, and saved with its frame as a training example."""
    try:
        return table.amend(roll_id, body.dice, body.system, body.options)
    except KeyError:
        raise HTTPException(404, f"no roll {roll_id!r} to amend") from None


def frame_path(roll_id: str) -> str:
    return f"/api/rolls/{roll_id}/frame.jpg"


@router.get("/rolls/{roll_id}/frame.jpg", summary="The picture a roll was read from, dice boxed", tags=["rolls"],
            response_class=JPEGResponse,
            responses={200: {"content": {"image/jpeg": {"schema": {"type": "string", "format": "binary"}}},
                             "description": "JPEG, longest side at most 960 px, each die boxed and labelled as read"},
                       **json_answers(400, 404, 422)})
def roll_frame(roll_id: str, table: TableDep):
    """The camera frame or uploaded photo the roll's dice were read from, kept in the roll store as proof.
    A correction shows the picture of the roll it corrects (its boxes say what was first read). Rolls typed
    by hand have none, and only the newest `frames_kept` pictures are kept."""
    roll = table.store.get(roll_id)
    if roll is None:
        raise HTTPException(404, f"no roll {roll_id!r}")
    owner = table.store.frame_owner(roll)
    frame = table.store.frame(owner) if owner is not None else None
    if frame is None:
        raise HTTPException(404, _no_frame(roll, table.settings.frames_kept))
    # A roll's picture never changes: the browser may keep it.
    return Response(frame.jpeg, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=86400"})


def _no_frame(roll: Roll, kept: int) -> str:
    if roll.source == "manual":
        return "this roll was typed by hand: it has no picture"
    if kept <= 0:
        return "this server keeps no pictures (frames_kept is 0)"
    return f"no picture is kept for this roll (the store keeps the newest {kept})"


@router.get("/export.csv", summary="Every roll as CSV (demo rolls left out)", tags=["rolls"], response_class=CSVResponse,
            responses={200: {"content": {"text/csv": {"schema": {"type": "string"}}}, "description": "One roll a row"}})
def export_csv(table: TableDep):
    """Oldest first, one roll a row. The table's record: rolls of the bundled demo clip are left out."""
    return StreamingResponse(table.store.export_csv(), media_type="text/csv",
                             headers={"Content-Disposition": 'attachment; filename="dicecam-rolls.csv"'})


@router.get("/export.json", summary="Every roll as JSON (demo rolls left out)", tags=["rolls"], response_model=list[ExportedRoll])
def export_json(table: TableDep):
    """Oldest first; each roll's `frame` is the path of its picture, or null (typed by hand, or no longer kept).
    The table's record: rolls of the bundled demo clip are left out."""
    return StreamingResponse(table.store.export_json(frame_path), media_type="application/json",
                             headers={"Content-Disposition": 'attachment; filename="dicecam-rolls.json"'})
