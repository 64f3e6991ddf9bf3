"""One hierarchy for every error a user can cause; the CLI and the API turn these into
one clear line (exit 2) or a 4xx with the same reason."""


class DicecamError(Exception):
    """Base of every error caused by bad input; the message is shown to the user as is."""


class DiceError(DicecamError):
    """A die that cannot exist: unknown type, a face it does not have, a bad spec."""


class RulesError(DicecamError):
    """A roll the chosen system cannot adjudicate: wrong dice, missing die, bad option."""


class UnknownSystemError(RulesError):
    """The system name is not one of the resolvers."""


class LimitError(DicecamError):
    """A request over a hard cap on work (pool size, table size, image pixels)."""


# Longer numbers than Python turns into int by default; no field here needs one anywhere near it.
MAX_DIGITS = 4300


class TooLongNumber:
    """Stands in for a number with thousands of digits in JSON, so that the field holding it says
    what is wrong ("a number of 5000 digits") instead of the parser failing on the whole body."""

    def __init__(self, digits: int):
        self.digits = digits

    def __repr__(self) -> str:
        return f"<a number of {self.digits} digits>"


def parse_int(text: str) -> int | TooLongNumber:
    """json.loads(..., parse_int=parse_int)."""
    digits = len(text.lstrip("-"))
    return int(text) if digits <= MAX_DIGITS else TooLongNumber(digits)


# pydantic's wording where it is not the user's: by error type.
PLAIN = {
    "missing": "missing",
    "extra_forbidden": "unknown field",
    "dict_type": "should be an object",
    "model_type": "should be an object",
    "model_attributes_type": "should be an object",
}


def where_words(loc, skip: tuple[str, ...] = ()) -> str:
    """A validation error's location as the user wrote it: list positions count from 1 ("dice #2 value")."""
    parts = []
    for p in loc:
        if p in skip:
            continue
        parts.append(f"#{p + 1}" if isinstance(p, int) else str(p))
    return " ".join(parts)


def first_problem(error, skip: tuple[str, ...] = ()) -> tuple[str, str]:
    """(where, message) of a pydantic validation error's first problem: the field in the user's words
    (without the `skip` parts; "" for the whole object) and the message without pydantic's
    "Value error, " prefix — the one line every CLI and API error shows."""
    errs = error.errors()
    if not errs:
        return "", "invalid value"
    err = errs[0]
    where = where_words(err.get("loc", ()), skip)
    given = err.get("input")
    if isinstance(given, TooLongNumber) or err.get("type") == "int_parsing_size":
        digits = given.digits if isinstance(given, TooLongNumber) else len(str(given).strip().lstrip("-"))
        return where, f"a number of {digits} digits is far too long"
    msg = PLAIN.get(err.get("type", "")) or str(err.get("msg", error))
    return where, msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")


class MissingExtra(DicecamError):
    """A command needs an optional part of the install (a pip extra) that is not there."""

    def __init__(self, extra: str, module: str, what: str = ""):
        self.extra, self.module = extra, module
        lead = f"{what} needs" if what else "needs"
        super().__init__(f"{lead} the {extra} extra ({module} is not installed): pip install '.[{extra}]'")
