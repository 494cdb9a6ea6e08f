"""What every builder shares: the identifier check and lists of placeholders."""

from __future__ import annotations

import re

_IDENTIFIER = re.compile(r"[a-z0-9_]+")


class IdentifierError(ValueError):
    """A table name that may not be written into SQL."""


def identifier(name: str) -> str:
    """`name` itself if it is made of [a-z0-9_] only; raises IdentifierError otherwise.

    Table names cannot be bound parameters, so the ones read from the index (`meta`,
    `sqlite_master`) are checked before they are formatted into a statement.
    """
    if not isinstance(name, str) or _IDENTIFIER.fullmatch(name) is None:
        raise IdentifierError(f"not a valid table name: {name!r}")
    return name


def placeholders(count: int) -> str:
    """`?,?,…` for an IN list of `count` bound values."""
    if count < 0:
        raise ValueError(f"a negative count of placeholders: {count}")
    return ",".join("?" * count)
