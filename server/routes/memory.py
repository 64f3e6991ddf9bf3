"""/api/memory: the table's dice memory, taught, listed, forgotten and carried (see server/memory.py)."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Depends, File, HTTPException, Request, UploadFile
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from dicecam.mechanics.dice import DieType
from dicecam.vision.memory import die_key

from ..contract import JSONRoute, answers
from ..memory import Forgotten, Imported, MemoryState, TableMemory, TaughtNote, TeachResult
from ..table import Table
from .deps import WRITE_ANSWERS, Write, get_table

# The same error shapes as the rest of the API (server/contract.py); 503 where the reader cannot learn.
router = APIRouter(prefix="/api/memory", tags=["memory"], route_class=JSONRoute, responses=answers(400, 422, 503))


def get_memory(request: Request) -> TableMemory:
    return request.app.state.memory


def need_memory(request: Request) -> TableMemory:
    memory: TableMemory = request.app.state.memory
    if memory.memory is None:
        raise HTTPException(503, f"no dice memory on this server: {memory.reason}")
    return memory


MemoryDep = Annotated[TableMemory, Depends(get_memory)]
Needed = Annotated[TableMemory, Depends(need_memory)]
TableDep = Annotated[Table, Depends(get_table)]


class TeachLive(BaseModel):
    model_config = ConfigDict(extra="forbid")
    die: str | None = Field(default=None, max_length=64, title="The die's name (e.g. \"gold d20\")")
    kind: DieType | None = Field(default=None, title="Its kind (default: as read)")
    value: int | None = Field(default=None, ge=0, le=100, title="The face on top (default: as read, to confirm it)")
    colour: str | None = Field(default=None, max_length=32, title="Its body colour (default: as read)")
    force: bool = Field(default=False, title="Replace an earlier example this one contradicts")


class TeachRollDie(TeachLive):
    index: int = Field(ge=0, le=99, title="Which die of the roll, in its reading order")


def _result(memory: TableMemory, got, kind: str, value: int, name: str) -> TeachResult:
    return TeachResult(learnt=got.learnt, reason=got.reason, kind=kind, value=value, die=memory.known(name))


def _teach(memory: TableMemory, frame, read, body: TeachLive) -> TeachResult:
    if read.box is None:
        raise HTTPException(409, "that die has no box in its frame: nothing to learn from")
    kind = (body.kind or read.type).value
    value = read.value if body.value is None else body.value
    colour = body.colour if body.colour is not None else read.colour
    got = memory.teach_box(frame, read.box, kind, value, colour=colour, die=body.die, source="teach", force=body.force)
    return _result(memory, got, kind, value, die_key(kind, (colour or "").strip().lower() or None,
                                                     (body.die or "").strip() or None))


@router.get("", response_model=MemoryState, summary="What the table's dice memory knows, per die")
def memory_state(memory: MemoryDep):
    return memory.state()


@router.delete("/dice/{name:path}", response_model=Forgotten, dependencies=Write, summary="Forget one die",
               responses={**WRITE_ANSWERS, **answers(404)})
def forget_die(name: str, memory: Needed):
    gone = memory.forget(name)
    if not gone:
        raise HTTPException(404, f"the memory knows no die {name!r}")
    return Forgotten(forgotten=gone, memory=memory.state())


@router.delete("", response_model=Forgotten, dependencies=Write, summary="Forget every die",
               responses=WRITE_ANSWERS)
def forget_all(memory: Needed):
    gone = memory.forget(None)
    return Forgotten(forgotten=gone, memory=memory.state())


@router.get("/export", summary="The memory as one file (.npz), to carry your dice to another table",
            responses={200: {"content": {"application/octet-stream": {}}}})
def export_memory(memory: Needed):
    return Response(memory.export(), media_type="application/octet-stream",
                    headers={"Content-Disposition": 'attachment; filename="dicecam-memory.npz"'})


@router.post("/import", response_model=Imported, dependencies=Write, responses={**WRITE_ANSWERS, **answers(413)}, summary="Add the dice of an exported memory")
async def import_memory(request: Request, memory: Needed,
                        file: UploadFile = File(..., description="A file from GET /api/memory/export")):
    """Examples that contradict this table's memory are left out and counted; a file that is not a
    memory (or does not fit this reader) is refused and the stored memory stays as it was."""
    cap = request.app.state.settings.max_memory_bytes
    data = await file.read(cap + 1)
    if len(data) > cap:
        raise HTTPException(413, f"the file is over the memory import limit of {cap} bytes")
    if not data:
        raise HTTPException(400, "the uploaded file is empty")
    learnt, flagged = await asyncio.to_thread(memory.import_file, data)
    return Imported(learnt=learnt, flagged=flagged, memory=memory.state())


@router.post("/teach/live", response_model=TeachResult, dependencies=Write, responses={**WRITE_ANSWERS, **answers(409)},
             summary="Teach the one die under the camera now")
def teach_live(body: TeachLive, memory: Needed, table: TableDep):
    """For the Teach a die flow: exactly one die must lie under the camera. Without a value, the face
    as read is confirmed (roll and confirm); with one, that face is taught."""
    if table.pipeline is None:
        raise HTTPException(503, "no live camera on this server")
    latest = table.pipeline.latest_frame()
    if latest is None:
        raise HTTPException(503, "the camera has not delivered a frame yet")
    _, frame, dice = latest
    if not dice:
        raise HTTPException(409, "no die under the camera: put the die you are teaching in view")
    if len(dice) > 1:
        raise HTTPException(409, f"{len(dice)} dice under the camera: leave only the die you are teaching")
    return _teach(memory, frame, dice[0], body)


@router.post("/teach/roll/{roll_id}", response_model=TeachResult, dependencies=Write,
             responses={**WRITE_ANSWERS, **answers(404, 409)},
             summary="Teach one die of a stored roll, from its frame")
def teach_roll(roll_id: str, body: TeachRollDie, memory: Needed, table: TableDep):
    roll = table.store.get(roll_id)
    if roll is None:
        raise HTTPException(404, f"no roll {roll_id!r}")
    if body.index >= len(roll.dice):
        raise HTTPException(422, f"index: the roll has {len(roll.dice)} dice (0-{len(roll.dice) - 1})")
    frame = table.roll_frame(roll_id)
    if frame is None:
        raise HTTPException(409, "the frame of that roll is no longer kept: teach from a recent roll")
    return _teach(memory, frame, roll.dice[body.index], body)


@router.get("/taught/{roll_id}", response_model=TaughtNote, responses=answers(404), summary="What a correction taught the memory")
def taught(roll_id: str, memory: MemoryDep):
    note = memory.note(roll_id)
    if note is None:
        raise HTTPException(404, f"the correction {roll_id!r} taught nothing (or is too old to remember)")
    return note
