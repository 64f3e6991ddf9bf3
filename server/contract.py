"""What the API document promises, kept true: the error shapes sent, the exact forms of a die, the
content types, and JSON bodies whose over-long numbers are named by their field."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import Response
from fastapi.routing import APIRoute
from pydantic import BaseModel, BeforeValidator, Field, WithJsonSchema

from dicecam.mechanics.dice import DieReading, DieType
from dicecam.mechanics.errors import DicecamError, parse_int


class JSONRequest(Request):
    async def json(self) -> Any:
        # A number of thousands of digits stays a marker the field's check names, instead of failing the
        # whole body with "There was an error parsing the body" (Python refuses such an int).
        if not hasattr(self, "_json"):
            self._json = json.loads(await self.body(), parse_int=parse_int)
        return self._json


class JSONRoute(APIRoute):
    def get_route_handler(self):
        handler = super().get_route_handler()

        async def with_json_request(request: Request):
            return await handler(JSONRequest(request.scope, request.receive))

        return with_json_request


class Problem(BaseModel):
    """Every refusal: one line saying why, in the user's words."""

    detail: str = Field(title="Why the request was refused")


class FieldProblem(BaseModel):
    loc: list[str | int] = Field(title="Where: body, query or path, then the field")
    msg: str = Field(title="What is wrong there")


class ValidationProblem(Problem):
    errors: list[FieldProblem] = Field(default_factory=list, max_length=20, title="Each problem found (at most 20)")


def answers(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The documented error answers of a route, with the shapes really sent."""
    words = {400: "Bad input, or a Host header this server does not answer to",
             401: "This server needs its token for changes", 403: "A change from another web site (cross-origin)",
             404: "No such roll", 409: "Not possible with the table as it is (no die, or several, under the camera)",
             413: "Over a size limit (upload bytes or pixels, pool size)",
             415: "Not a PNG, JPEG, BMP or WebP image", 422: "A field is missing or has the wrong type",
             503: "Not available on this server now (no camera, no reader, too many clients)"}
    return {c: {"model": ValidationProblem if c == 422 else Problem, "description": words[c]} for c in codes}


class CSVResponse(Response):
    media_type = "text/csv"


class JPEGResponse(Response):
    media_type = "image/jpeg"


def _die(v: Any) -> Any:
    # Dice come as reading objects or as the CLI's "d6:5[:red]" text; the text exactly as the schema's
    # pattern says (the command line is more lenient: it forgives spaces and capitals).
    if not isinstance(v, str):
        return v
    try:
        die = DieReading.parse(v)
    except DicecamError as e:
        raise ValueError(str(e)) from None
    if not DIE_TEXT.fullmatch(v):
        raise ValueError(f"bad die {v[:30]!r}: write TYPE:VALUE or TYPE:VALUE:COLOUR in lower case, e.g. d6:3 or d6:5:red")
    return die


def _face_texts(kind: DieType) -> list[str]:
    faces = [str(f) for f in kind.faces]
    return faces + ["00", "100"] if kind is DieType.d00 else faces  # a d00's zero face may print 00 or 100


DIE_PATTERN = ("^(?:" + "|".join(f"{k.value}:(?:{'|'.join(_face_texts(k))})" for k in DieType) + ")(?::[^:]{0,32})?$")
DIE_TEXT = re.compile(DIE_PATTERN.removesuffix("$") + r"\Z")


def _die_schema() -> dict[str, Any]:
    """What the API accepts as one die, exactly: the text form, or a reading object whose value is a face
    of its kind (so a generated request that fits the document is a roll the server takes)."""
    base = DieReading.model_json_schema()
    objects = []
    for k in DieType:
        props = {**base["properties"], "type": {"const": k.value, "type": "string"},
                 "value": {"type": "integer", "enum": list(k.faces) + ([100] if k is DieType.d00 else [])}}
        objects.append({"type": "object", "properties": props, "required": ["type", "value"],
                        "additionalProperties": False})
    return {"anyOf": [{"type": "string", "pattern": DIE_PATTERN, "title": "TYPE:VALUE[:COLOUR], e.g. d6:5"},
                      *objects], "title": "A die as read"}


# Each die validated on its own, so an error names it: "dice #2: a d6 has no face 9".
Die = Annotated[DieReading, BeforeValidator(_die), WithJsonSchema(_die_schema())]
