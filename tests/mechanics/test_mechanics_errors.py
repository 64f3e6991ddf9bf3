"""Every refusal is one line that says what is wrong: each bad roll, pool, option or die spec with
the exact reason the user reads (the CLI and the API show these texts as they are)."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, ValidationError, field_validator

from dicecam.mechanics import registry
from dicecam.mechanics.dice import DieReading, parse_dice
from dicecam.mechanics.errors import (DicecamError, DiceError, LimitError, MissingExtra, RulesError, TooLongNumber,
                                     UnknownSystemError, first_problem, parse_int)
from dicecam.mechanics.futile_kingdoms import contest, contest_result
from dicecam.mechanics.house_games import split_pool

ERRORS = {"RulesError": RulesError, "LimitError": LimitError, "UnknownSystemError": UnknownSystemError,
          "DiceError": DiceError}


def dice(specs):
    """A list of specs, or (spec, n): n copies of one die."""
    return parse_dice([specs[0]] * specs[1] if isinstance(specs, tuple) else specs)


@pytest.mark.parametrize(("system", "specs", "options", "error", "reason"), [
    ('contingency', ['d6:1', 'd6:2'], {}, 'RulesError',
     'a contingency check takes exactly 3 dice, got 2'),
    ('contingency', ['d6:1', 'd6:2', 'd20:3'], {}, 'RulesError',
     'a contingency check uses d4-d12 dice, not d20'),
    ('contingency', ['d6:1', 'd6:2', 'd8:3'], {'luck': 'd8:2'}, 'RulesError',
     'the luck die must be a d6 (the size of the result die), not a d8'),
    ('contingency', ['d6:1', 'd6:2', 'd8:3'], {'luck': 'd20:2'}, 'RulesError',
     'bad option luck: a luck die is a d4-d12, not d20'),
    ('contingency', ['d6:1', 'd6:2', 'd8:3'], {'luck': 'd6'}, 'RulesError',
     "bad option luck: bad die 'd6': write TYPE:VALUE or TYPE:VALUE:COLOUR, e.g. d6:3 or d6:5:red"),
    ('contingency', ['d6:1', 'd6:2', 'd8:3'], {'modifiers': {'3': 1}}, 'RulesError',
     'bad option modifiers: modifier index 3 is not 0, 1 or 2'),
    ('contingency', ['d6:1', 'd6:2', 'd8:3'], {'modifiers': [21]}, 'RulesError',
     'bad option modifiers: a face modifier must lie within -20..+20'),
    ('contingency', ['d6:1', 'd6:2', 'd8:3'], {'modifiers': [-21]}, 'RulesError',
     'bad option modifiers: a face modifier must lie within -20..+20'),
    ('contingency', ['d6:1', 'd6:2', 'd8:3'], {'target': 41}, 'RulesError',
     'bad option target: Input should be less than or equal to 40'),
    ('contingency-action', ['d8:1', 'd20:2'], {}, 'RulesError',
     'an action roll uses d8 action dice and d6 pressure dice, not d20'),
    ('contingency-action', ['d8:1', 'd6:2'], {'mode': 'resource'}, 'RulesError',
     'a resource pool roll uses d8 dice only'),
    ('contingency-action', ['d8:1'], {'zero_dice': True}, 'RulesError',
     'a zero-dice roll takes exactly two d8, got 1'),
    ('contingency-action', ['d8:1', 'd8:2', 'd8:3'], {'zero_dice': True}, 'RulesError',
     'a zero-dice roll takes exactly two d8, got 3'),
    ('contingency-action', ['d6:1'], {}, 'RulesError',
     'no action dice (d8) read; for a zero-dice roll pass zero_dice and roll two d8'),
    ('contingency-action', [], {}, 'RulesError',
     'no action dice (d8) read; for a zero-dice roll pass zero_dice and roll two d8'),
    ('contingency-action', ['d8:1', 'd8:2'], {'mode': 'resource', 'pool_size': 3}, 'RulesError',
     'the resource pool holds 3 dice but 2 were read'),
    ('contingency-action', ('d8:1', 41), {}, 'LimitError',
     '41 dice is over the cap of 40'),
    ('house-games', ('d10:1', 41), {}, 'LimitError',
     '41 dice is over the cap of 40'),
    ('house-games', ['d10:1', 'd6:2'], {}, 'RulesError',
     'House Games rolls d10s only, not d6'),
    ('house-games', ['d10:1', 'd10:2'], {'opponent_dice': 2}, 'RulesError',
     '2 defender dice leave none for the actor'),
    ('house-games', ['d10:1', 'd10:2'], {'pool': 2, 'difficulty': 12}, 'RulesError',
     'a pool of 2 loses 3 dice to the difficulty: nothing to roll'),
    ('house-games', ['d10:1', 'd10:2'], {'pool': 4, 'difficulty': 10}, 'RulesError',
     'the table shows 2 dice, 1 fewer than the 3 to roll (pool 4, minus 1 lost to the difficulty): '
     'add the missing dice and roll again, or correct the roll'),
    ('house-games', [], {}, 'RulesError',
     'no dice read'),
    ('house-games', ['d10:1'], {'pool': 2, 'opponent_dice': 1}, 'RulesError',
     "bad options: a pool to expect needs the defender's dice named by colour (opponent_colour), not count"),
    ('emergence', [], {}, 'RulesError',
     'an Emergence roll needs at least the base d10'),
    ('emergence', ('d10:1', 41), {}, 'LimitError',
     '41 dice is over the cap of 20'),
    ('emergence', ['d10:1', 'd6:2'], {}, 'RulesError',
     'Emergence rolls d10s only, not d6'),
    ('emergence', ['d10:1'], {'rerolls': [3]}, 'RulesError',
     're-rolls are only made when the base is 0'),
    ('emergence', ['d10:0'], {'rerolls': [3, 4]}, 'RulesError',
     'more re-rolls than needed: the re-roll 3 already ended the Wyrd'),
    ('emergence', ['d10:0'], {'rerolls': [10]}, 'RulesError',
     'bad option rerolls: a re-roll is a d10 face, 0-9'),
    ('futile-kingdoms', ['d6:1:red', 'd8:2:white'], {}, 'RulesError',
     'a DR uses two d6 (red and white), not d8'),
    ('futile-kingdoms', ['d6:1', 'd6:2:white'], {}, 'RulesError',
     "no red d6 read (a die with colour 'red'); a DR needs one red and one white d6"),
    ('futile-kingdoms', ['d6:1:red', 'd6:2'], {}, 'RulesError',
     "no white d6 read (a die with colour 'white'); a DR needs one white and one red d6"),
    ('futile-kingdoms', ['d6:1:red', 'd6:2:red', 'd6:3:white'], {}, 'RulesError',
     '2 red dice read; a DR takes one red and one white d6'),
    ('percentile', ['d10:1'], {}, 'RulesError',
     'a percentile roll takes two dice (d00 + d10, or two d10), read 1'),
    ('percentile', ['d10:1', 'd6:2'], {}, 'RulesError',
     'a percentile roll uses a d00 and a d10, not d6'),
    ('percentile', ['d00:10', 'd00:20'], {}, 'RulesError',
     'two d00 dice: a percentile roll takes one d00 and one d10'),
    ('percentile', ['d10:1', 'd10:2'], {}, 'RulesError',
     "two plain d10s: name the tens die's colour (tens_colour)"),
    ('percentile', ['d10:1:red', 'd10:2:red'], {'tens_colour': 'red'}, 'RulesError',
     "need exactly one d10 coloured 'red' as the tens die, found 2"),
    ('percentile', ['d10:1:blue', 'd10:2:red'], {'tens_colour': 'green'}, 'RulesError',
     "need exactly one d10 coloured 'green' as the tens die, found 0"),
    ('chance', ['d00:10', 'd10:2'], {'percent': 101}, 'RulesError',
     'bad option percent: Input should be less than or equal to 100'),
    ('table', ['d6:1'], {'die': 'd7', 'rows': []}, 'RulesError',
     "bad options: a table die is one of d4, d6, d8, d10, d12, d20, d100, not 'd7'"),
    ('table', ['d6:1'], {'rows': [{'low': 3, 'high': 1, 'text': 'x'}]}, 'RulesError',
     'bad options: row 1: range 3-1 runs backwards'),
    ('table', ['d6:1'], {'rows': [{'low': 1, 'high': 3, 'text': 'x'}, {'low': 3, 'high': 4, 'text': 'y'}]}, 'RulesError',
     'bad options: rows 1 and 2 both cover 3'),
    ('table', ['d8:1'], {'rows': [{'low': 1, 'high': 3, 'text': 'x'}]}, 'RulesError',
     'this table is rolled with one d6, read d8'),
    ('table', [], {'rows': [{'low': 1, 'high': 3, 'text': 'x'}]}, 'RulesError',
     'this table is rolled with one d6, read nothing'),
    ('table', ['d6:1'], {'rows': []}, 'RulesError',
     'the table has no rows'),
    ('dnd', [], {}, 'UnknownSystemError',
     "unknown system 'dnd' (known: contingency, contingency-action, house-games, emergence, futile-kingdoms, futile-kingdoms-contest, percentile, "
     "chance, table)"),
    ('contingency', ('d6:1', 101), {}, 'LimitError',
     '101 dice is over the cap of 100 for one roll'),
    ('contingency', ['d6:1', 'd6:2', 'd8:3'], {'bogus': 1}, 'RulesError',
     'bad option bogus: no such option (options: target, advantage, disadvantage, modifiers, luck, '
     'choose_to_fail, tie_order, with_luck)'),
])
def test_a_roll_the_system_cannot_take_is_refused_with_its_reason(system, specs, options, error, reason):
    with pytest.raises(ERRORS[error]) as e:
        registry.resolve(system, dice(specs), options)
    assert type(e.value) is ERRORS[error] and str(e.value) == reason


@pytest.mark.parametrize(("system", "pool", "options", "error", "reason"), [
    ('contingency', ['d6', 'd6'], {}, 'RulesError',
     'contingency odds need exactly 3 dice from d4-d12'),
    ('contingency', ['d6', 'd6', 'd20'], {}, 'RulesError',
     'contingency odds need exactly 3 dice from d4-d12'),
    ('contingency-action', ['d8', 'd20'], {}, 'RulesError',
     'an action roll uses d8 and d6 dice, not d20'),
    ('contingency-action', ['d8'], {'zero_dice': True}, 'RulesError',
     'a zero-dice roll takes two d8 (or none in the pool)'),
    ('contingency-action', ['d6'], {}, 'RulesError',
     'no action dice (d8) in the pool'),
    ('contingency-action', ['d8', 'd6'], {'mode': 'resource'}, 'RulesError',
     'a resource pool roll uses d8 dice only'),
    ('house-games', ['d6'], {}, 'RulesError',
     'House Games rolls d10s only'),
    ('house-games', ['d10'], {'opponent_dice': 1}, 'RulesError',
     '1 defender dice (and 0 lost) leave none for the actor'),
    ('house-games', ['d10'], {'difficulty': 12}, 'RulesError',
     'a pool of 1 loses 3 dice to the difficulty: nothing to roll'),
    ('emergence', ['d6'], {}, 'RulesError',
     'Emergence rolls d10s only (the base and any modifiers)'),
    ('futile-kingdoms', ['d6'], {}, 'RulesError',
     'a DR rolls exactly two d6 (red and white)'),
    ('percentile', ['d6'], {}, 'RulesError',
     'a percentile roll takes a d00 and a d10 (or two d10)'),
    ('chance', ['d10'], {}, 'RulesError',
     'a percentile roll takes a d00 and a d10 (or two d10)'),
    ('contingency', ['d6'] * 41, {}, 'LimitError',
     '41 dice is over the cap of 30 for an odds query'),
])
def test_odds_for_a_pool_the_system_cannot_roll_are_refused_with_its_reason(system, pool, options, error, reason):
    with pytest.raises(ERRORS[error]) as e:
        registry.odds(system, pool, options)
    assert type(e.value) is ERRORS[error] and str(e.value) == reason


@pytest.mark.parametrize(("call", "args", "reason"), [
    (split_pool, ((8,), 1),
     'a split needs at least two actions'),
    (split_pool, ((), 2),
     'no pools to split'),
    (split_pool, ((5, 8), 3),
     'a pool of 5 cannot be split 3 ways with at least 2 dice each'),
    (contest, ({'a': 1},),
     'a contest needs two or more participants'),
    (contest_result, (1, []),
     'a contest roll needs at least one d6'),
    (contest_result, (1, [5, 3]),
     'a contest die only explodes on a 6'),
])
def test_splits_and_contests_that_cannot_be_made_are_refused(call, args, reason):
    with pytest.raises(RulesError) as e:
        call(*args)
    assert str(e.value) == reason


@pytest.mark.parametrize(("spec", "reason"), [
    ('d6', "bad die 'd6': write TYPE:VALUE or TYPE:VALUE:COLOUR, e.g. d6:3 or d6:5:red"),
    ('d6:x', "bad die 'd6:x': write TYPE:VALUE or TYPE:VALUE:COLOUR, e.g. d6:3 or d6:5:red"),
    ('d6:1:red:x', "bad die 'd6:1:red:x': write TYPE:VALUE or TYPE:VALUE:COLOUR, e.g. d6:3 or d6:5:red"),
    ('d7:1', "unknown die type 'd7' (known: d4, d6, d8, d10, d00, d12, d20)"),
    ('d6:X3', "bad die 'd6:X3': write TYPE:VALUE or TYPE:VALUE:COLOUR, e.g. d6:3 or d6:5:red"),
    ('d6:7', 'a d6 has no face 7 (faces 1-6)'),
    ('d00:35', 'a d00 has no face 35 (faces 0-90 in tens)'),
    ('d10:-1', 'a d10 has no face -1 (faces 0-9)'),
])
def test_a_die_that_cannot_exist_is_refused_with_its_reason(spec, reason):
    with pytest.raises(DiceError) as e:
        DieReading.parse(spec)
    assert str(e.value) == reason


@pytest.mark.parametrize(("system", "specs", "options"), [
    ("house-games", ("d10:5", 40), {}),  # the cap itself is allowed
    ("contingency-action", ("d8:5", 40), {}),
    ("house-games", ["d10:5", "d10:9", "d10:2"], {"opponent_dice": 2}),  # one die left to the actor
    ("house-games", ["d10:9"], {"pool": 2, "difficulty": 10}),  # a pool of 2 losing 1 die rolls 1
])
def test_rolls_at_the_edge_of_a_limit_are_taken(system, specs, options):
    assert registry.resolve(system, dice(specs), options).outcome


def test_a_split_of_exactly_two_dice_each_is_allowed():
    assert split_pool((6, 9), 3) == [2, 2, 2]


@pytest.mark.parametrize(("score", "faces", "total"), [(2, [3], 5), (1, [6, 4], 8), (0, [6, 6, 1], 7)])
def test_a_contest_entry_adds_the_first_d6_and_each_explosion_minus_3(score, faces, total):
    assert contest_result(score, faces) == total


def test_asking_odds_for_an_outcome_the_system_does_not_have_names_it():
    odds = registry.odds("futile-kingdoms", [], {})
    with pytest.raises(KeyError, match="jackpot"):
        odds.probability("jackpot")


@pytest.mark.parametrize(("given", "digits"), [
    ("json", 5000),  # what the JSON reader hands over for a number that long
    ("9" * 5000, 5000),  # the same number as text: pydantic refuses to parse it
    ("-" + "9" * 4400, 4400),  # the sign is no digit
])
def test_a_number_of_thousands_of_digits_is_named_by_its_length(given, digits):
    # Made here, not in the parameters: a mutation test changes the code only once the tests run.
    value = json.loads("9" * digits, parse_int=parse_int) if given == "json" else given
    with pytest.raises(RulesError) as e:
        registry.resolve("house-games", dice(["d10:9"]), {"difficulty": value})
    assert str(e.value) == f"bad option difficulty: a number of {digits} digits is far too long"


@pytest.mark.parametrize(("options", "where"), [
    ({"split": ["x", 3]}, "split #1"),  # list positions count from 1, as the user counts
    ({"split": [2, "x"]}, "split #2"),
])
def test_a_bad_item_of_a_list_option_is_named_by_its_position(options, where):
    with pytest.raises(RulesError) as e:
        registry.resolve("house-games", dice(["d10:9"] * 4), options)
    assert str(e.value).startswith(f"bad option {where}: ")


class _Checked(BaseModel):
    size: int

    @field_validator("size")
    @classmethod
    def _positive(cls, v: int) -> int:
        if v < 1:  # raised, not `assert`ed: pytest rewrites a test module's asserts and adds to their message
            raise AssertionError("size must be positive")
        return v


def test_a_failed_assertion_in_a_validator_reads_as_its_message_alone():
    with pytest.raises(ValidationError) as e:
        _Checked(size=0)
    assert first_problem(e.value) == ("size", "size must be positive")


def test_json_numbers_up_to_pythons_digit_limit_are_ints_and_longer_ones_stand_in():
    # 4300 digits is Python's own limit for int(str).
    assert json.loads("9" * 4300, parse_int=parse_int) == 10 ** 4300 - 1
    assert json.loads("-" + "9" * 4300, parse_int=parse_int) == 1 - 10 ** 4300  # the sign is no digit
    assert json.loads("[12, -3]", parse_int=parse_int) == [12, -3]
    long = json.loads("9" * 4301, parse_int=parse_int)
    assert isinstance(long, TooLongNumber) and long.digits == 4301
    assert repr(json.loads("-" + "9" * 5000, parse_int=parse_int)) == "<a number of 5000 digits>"


@pytest.mark.parametrize(("what", "message"), [
    ("dicecam train", "dicecam train needs the train extra (torch is not installed): pip install '.[train]'"),
    ("", "needs the train extra (torch is not installed): pip install '.[train]'"),
])
def test_a_missing_extra_names_the_extra_its_module_and_the_install_command(what, message):
    e = MissingExtra("train", "torch", what) if what else MissingExtra("train", "torch")
    assert (str(e), e.extra, e.module) == (message, "train", "torch")
    assert isinstance(e, DicecamError)
