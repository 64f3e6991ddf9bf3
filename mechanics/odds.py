"""Exact odds: the shared result types and the glue between a rule and icepool.

A rule is written once as plain Python; `FoldEvaluator` runs the same step function over
icepool's multiset evaluation (all outcomes at once) that a resolver runs over the real dice.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable, Hashable, Iterable, Sequence

import icepool
from pydantic import BaseModel, ConfigDict, Field

from .errors import LimitError

# Hard cap on an odds query: every system's odds stay polynomial in the pool size,
# but a page must not be able to ask for a thousand dice.
MAX_ODDS_POOL = 30


class OutcomeOdds(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    outcome: str = Field(title="Outcome word or event")
    probability: float = Field(ge=0.0, le=1.0, title="Probability")
    fraction: str = Field(title="Exact probability, e.g. 61/120")


class Odds(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    system: str = Field(title="System name")
    pool: list[str] = Field(title="Die types rolled")
    options: dict[str, Any] = Field(default_factory=dict, title="Options the odds assume")
    outcomes: list[OutcomeOdds] = Field(title="Mutually exclusive outcomes; probabilities sum to 1")
    # Additive to the contract: facts that overlap the outcomes ("fail by one", "GM tension").
    events: list[OutcomeOdds] = Field(default_factory=list, title="Other events (not exclusive)")
    summary: str = Field(title="One sentence")

    def probability(self, outcome: str) -> Fraction:
        for o in [*self.outcomes, *self.events]:
            if o.outcome == outcome:
                return Fraction(o.fraction)
        raise KeyError(outcome)


def fraction_text(p: Fraction) -> str:
    return f"{p.numerator}/{p.denominator}"


def entry(name: str, p: Fraction) -> OutcomeOdds:
    return OutcomeOdds(outcome=name, probability=float(p), fraction=fraction_text(p))


def percent(p: Fraction) -> str:
    v = float(p) * 100
    if v == 0:
        return "0%"
    if v == 100:
        return "100%"
    return f"{v:.1f}%" if v >= 1 else f"{v:.2g}%"


def ladder(die: icepool.Die, names: Sequence[str]) -> list[OutcomeOdds]:
    """Probabilities of each named outcome (in the given order, zeros kept) from a die over names."""
    unknown = set(die.outcomes()) - set(names)
    if unknown:  # a rule produced an outcome the system does not name: a bug, not user input
        raise AssertionError(f"unnamed outcomes {sorted(unknown)}")
    return [entry(n, Fraction(die.probability(n)) if n in die else Fraction(0)) for n in names]


def check_pool_size(n: int, cap: int = MAX_ODDS_POOL) -> None:
    if n > cap:
        raise LimitError(f"{n} dice is over the cap of {cap} for an odds query")


class FoldEvaluator(icepool.MultisetEvaluator):
    """Runs an order-independent fold `step(state, outcome, count)` over a pool.

    The same `step` and `final` are applied to the real dice by `fold()`, so a verdict and
    its distribution come from one definition.
    """

    def __init__(self, init: Hashable, step: Callable[[Any, int, int], Any], final: Callable[[Any], Any]):
        self._init, self._step, self._final = init, step, final

    def initial_state(self, order, outcomes, *sizes, **kwargs):
        return self._init

    def next_state(self, state, order, outcome, count):
        return self._step(state, outcome, count) if count else state

    def final_outcome(self, final_state, order, outcomes, *sizes, **kwargs):
        return self._final(final_state)


def fold(init: Hashable, step, final, values: Iterable[int]):
    counts: dict[int, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    state = init
    for v in sorted(counts):
        state = step(state, v, counts[v])
    return final(state)
