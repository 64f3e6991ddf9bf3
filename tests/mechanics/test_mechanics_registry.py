"""The rules engine's entry points: a roll over a system's own cap names that cap, and options given as
another system's model keep their values."""

from __future__ import annotations

import pytest

from dicecam.mechanics import registry
from dicecam.mechanics.dice import parse_dice
from dicecam.mechanics.errors import LimitError
from dicecam.mechanics.options import validate_options
from dicecam.mechanics.percentile import ChanceOptions, PercentileOptions
from dicecam.mechanics.registry import MAX_RESOLVE_DICE


def test_a_hundred_dice_reach_the_system_which_names_its_own_cap():
    """Up to 100 dice the system judges the roll (Emergence reads 20 at most); beyond, the engine refuses."""
    with pytest.raises(LimitError, match="cap of 20$"):
        registry.resolve("emergence", parse_dice(["d10:5"] * MAX_RESOLVE_DICE))
    with pytest.raises(LimitError, match=f"cap of {MAX_RESOLVE_DICE} for one roll"):
        registry.resolve("emergence", parse_dice(["d10:5"] * (MAX_RESOLVE_DICE + 1)))


def test_options_given_as_another_systems_model_keep_their_values():
    """A chance roll's options built from percentile options keep the tens colour."""
    opts = validate_options(ChanceOptions, PercentileOptions(tens_colour="red"))
    assert (opts.tens_colour, opts.percent) == ("red", 50)
    a = registry.get("chance").resolve(parse_dice(["d10:3:red", "d10:4:blue"]), PercentileOptions(tens_colour="red"))
    assert (a.result, a.tens) == (34, 30)
