"""/api/read, /api/frame.jpg and /api/video.mjpg: uploaded photos read, and the live camera boxed."""

from __future__ import annotations

import asyncio
import time

from fastapi import File, HTTPException, Query, UploadFile
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, Field

from dicecam.mechanics.dice import ImageRead
from dicecam.mechanics.errors import DicecamError
from dicecam.mechanics.roll import Roll
from dicecam.vision.images import decode_image

from ..contract import JPEGResponse, answers
from ..events import Broker
from ..table import Table
from .deps import WRITE_ANSWERS, TableDep, Write, api_router, json_answers

router = api_router()


class ReadResult(BaseModel):
    read: ImageRead = Field(title="The dice read from the image")
    roll: Roll | None = Field(default=None, title="The stored roll, when it could be adjudicated")
    error: str | None = Field(default=None, title="Why no roll was stored")


@router.post("/read", response_model=ReadResult, dependencies=Write, summary="Read the dice in an uploaded photo",
             tags=["vision"], responses={**WRITE_ANSWERS, **answers(413, 415, 503)})
async def read_upload(
    table: TableDep,
    image: UploadFile = File(..., description="PNG, JPEG, BMP or WebP photo of the dice"),
    store: bool = Query(True, description="Adjudicate with the configured system and store the roll"),
):
    """Capped in bytes and pixels; a stored roll keeps the photo, dice boxed, as its picture
    (`/api/rolls/{id}/frame.jpg`)."""
    s = table.settings
    data = await image.read(s.max_upload_bytes + 1)
    if table.reader is None:
        raise HTTPException(503, "no dice reader is loaded on this server: " + "; ".join(table.notices or ["unknown"]))
    # The same loader as `dicecam read`: caps checked from the header before any pixel is decoded.
    frame = await asyncio.to_thread(decode_image, data, max_bytes=s.max_upload_bytes, max_pixels=s.max_upload_pixels)
    return await asyncio.to_thread(_read_and_store, table, frame, image.filename or "upload", store)


def _read_and_store(table: Table, frame, name: str, store: bool) -> ReadResult:
    dice = table.reader(frame)
    read = ImageRead(image=name[:255], width=frame.shape[1], height=frame.shape[0], dice=dice)
    if not store or not dice:
        return ReadResult(read=read, error=None if dice else "no dice found in the image")
    try:
        roll = table.manual(None, None, dice, source="upload", frame=frame)
    except DicecamError as e:
        return ReadResult(read=read, error=str(e))
    return ReadResult(read=read, roll=roll)


@router.get("/frame.jpg", summary="The newest camera frame, dice boxed", tags=["vision"], response_class=JPEGResponse,
            responses={200: {"content": {"image/jpeg": {"schema": {"type": "string", "format": "binary"}}},
                             "description": "JPEG"}, **json_answers(400, 422, 503)})
async def frame_jpg(table: TableDep):
    if table.pipeline is None:
        raise HTTPException(503, "no live camera on this server")
    got = await asyncio.to_thread(table.live_jpeg)
    if got is None:
        raise HTTPException(503, "the camera has not delivered a frame yet")
    return Response(got[1], media_type="image/jpeg", headers={"Cache-Control": "no-store", "X-Frame-Id": str(got[0])})


@router.get("/video.mjpg", summary="Live video, dice boxed (MJPEG)", tags=["vision"], response_class=StreamingResponse,
            responses={200: {"content": {"multipart/x-mixed-replace": {}}, "description": "JPEG parts"}, **answers(503)})
async def video(table: TableDep, frames: int | None = Query(None, ge=1, le=1_000_000, description="Stop after N frames")):
    if table.pipeline is None:
        raise HTTPException(503, "no live camera on this server")
    period = 1.0 / table.settings.video_fps

    async def parts():
        # Each part ends with the next boundary: browsers show a part only once they see the boundary
        # after it, so a still camera would otherwise never show its frame.
        # A still frame is sent again each second: some browsers paint a part only when the next arrives.
        sent, last, last_at, part = 0, None, 0.0, b""
        yield b"--frame\r\n"
        broker: Broker = table.broker
        while (frames is None or sent < frames) and not broker.closing:
            latest = table.pipeline.latest_frame()
            now = time.monotonic()
            if latest is not None and (latest[0] != last or now - last_at >= 1.0):
                if latest[0] != last or not part:
                    got = await asyncio.to_thread(table.live_jpeg)
                    if got is None:
                        await asyncio.sleep(period)
                        continue
                    last = got[0]
                    part = (b"Content-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n" % len(got[1])
                            + got[1] + b"\r\n--frame\r\n")
                yield part
                sent, last_at = sent + 1, now
            await asyncio.sleep(period)

    return StreamingResponse(parts(), media_type="multipart/x-mixed-replace; boundary=frame",
                             headers={"Cache-Control": "no-store"})
