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


def first_problem(error, skip: tuple[str, ...] = ()) -> tuple[str, str]:
    """(where, message) of a pydantic validation error's first problem: the dotted field path
    (without the `skip` parts; "" for the whole object) and the message without pydantic's
    "Value error, " prefix — the one line every CLI and API error shows."""
    errs = error.errors()
    if not errs:
        return "", "invalid value"
    err = errs[0]
    where = ".".join(str(p) for p in err.get("loc", ()) if p not in skip)
    return where, str(err.get("msg", error)).removeprefix("Value error, ")


class MissingExtra(DicecamError):
    """A command needs an optional part of the install (a pip extra) that is not there."""

    def __init__(self, extra: str, module: str, what: str = ""):
        self.extra, self.module = extra, module
        lead = f"{what} needs" if what else "needs"
        super().__init__(f"{lead} the {extra} extra ({module} is not installed): pip install '.[{extra}]'")
