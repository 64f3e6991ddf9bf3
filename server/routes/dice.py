"""/api/fairness and /api/dice: each physical die, its name, and is it fair?"""

from __future__ import annotations

from fastapi import HTTPException, Query
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dicecam.mechanics import fairness
from dicecam.mechanics.errors import first_problem

from .deps import TableDep, Write, api_router

router = api_router()


class DieNameRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    die: str = Field(min_length=3, max_length=40, title="The die as TYPE:COLOUR, e.g. d20:red (d20: when no colour is read)")
    name: str | None = Field(default=None, max_length=40, title="Its name; empty or null forgets the name")


class DieNames(BaseModel):
    names: dict[str, str] = Field(title="Names by TYPE:COLOUR key")


@router.get("/fairness", response_model=fairness.FairnessReport, summary="Is each die fair? From the roll history",
            tags=["dice"])
def fairness_report(
    table: TableDep,
    die: str | None = Query(None, max_length=64, description="Only this die: its name, TYPE:COLOUR or label (red d20)"),
    alpha: float = Query(0.01, gt=0, lt=0.5, description="False-alarm rate: a fair die is flagged this often"),
    power: float = Query(0.8, gt=0, lt=1, description="How often a die loaded by `ratio` should be flagged"),
    ratio: float = Query(2.0, ge=0, le=20, description="The loading to plan for: one face this many times as often"),
):
    """Per physical die (kind + colour, or the name given to it): counts per face, a chi-square test against a
    fair die with its verdict in plain words, and the rolls such a test needs. Corrections count with their
    corrected value; uncertain readings are left out and counted. Demo rolls (source "demo") are never counted."""
    try:
        settings = fairness.FairnessSettings(alpha=alpha, power=power, ratio=ratio)
    except ValidationError as e:
        raise HTTPException(400, first_problem(e)[1]) from None
    return fairness.report(table.store.iter_all(demo=False), table.store.die_names(), settings, die)


@router.get("/dice/names", response_model=DieNames, summary="The names given to physical dice", tags=["dice"])
def die_names(table: TableDep):
    return DieNames(names=table.store.die_names())


@router.put("/dice/names", response_model=DieNames, dependencies=Write, summary="Name a physical die", tags=["dice"])
def name_die(body: DieNameRequest, table: TableDep):
    """A die is its kind and body colour; two colours of one kind given the same name count as one die
    (a colour the camera reads two ways). A name belongs to one kind of die."""
    kind, colour = fairness.parse_key(body.die)
    key = fairness.key_of(kind, colour)
    name = " ".join((body.name or "").split())
    names = table.store.die_names()
    for other, given in names.items():
        if not name or given.lower() != name.lower():
            continue
        if not other.startswith(kind.value + ":"):
            raise HTTPException(400, f"{given!r} already names a {other.partition(':')[0]}; a name belongs to one kind of die")
        name = given  # one spelling, so the two colours group as one die
    return DieNames(names=table.store.name_die(key, name or None))
