"""The command line as the warm client reads it, before anything heavy is imported.

The client only needs to know that this is a plain search and which `--root/--db/--config`
it names (they choose the index and settings, hence the socket). Anything it does not
understand sends it to the one-shot path; the server parses `argv` again with the real
parser and declines when its reading of those three options differs.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from dataclasses import dataclass

FREE_TEXT_FLAGS = ("--search", "--query", "--person")
END_OF_OPTIONS = "--"  # `--search -- -foo`: the next argument is the value, whatever it is
_OPTION = re.compile(r"--[A-Za-z][A-Za-z0-9-]*(=.*)?", re.DOTALL)


def looks_like_option(arg: str) -> bool:
    """`--json`, `--limit=5`: a long option, never taken as a free-text value. `-foo`,
    `---`, `-- x` and `--two words` are text."""
    return _OPTION.fullmatch(arg) is not None


def glue_values(argv: Sequence[str]) -> list[str]:
    """`--search -x` would read -x as an option: glue free-text values to their flag.

    The value is the next argument unless that is a long option (`--search --json`: no
    value, which the parser then reports) or `--`, which makes the argument after it the
    value whatever it is (`--search -- --json` searches for "--json").
    """
    out: list[str] = []
    items = list(argv)
    i = 0
    while i < len(items):
        at = _value_at(items, i)
        if at is None:
            out.append(items[i])
            i += 1
        else:
            out.append(f"{items[i]}={items[at]}")
            i = at + 1
    return out


def _value_at(items: Sequence[str], i: int) -> int | None:
    """Where the value of the free-text flag at `i` is; None for no flag or no value."""
    if items[i] not in FREE_TEXT_FLAGS or i + 1 >= len(items):
        return None
    if items[i + 1] == END_OF_OPTIONS:
        return i + 2 if i + 2 < len(items) else None
    return None if looks_like_option(items[i + 1]) else i + 1


@dataclass(frozen=True)
class Common:
    """The options that choose the index and the settings, as given (not resolved)."""

    root: list[str] | None
    db: str | None
    config: str | None

    def as_json(self) -> dict[str, list[str] | str | None]:
        return {"root": self.root, "db": self.db, "config": self.config}


class _Unsure(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _Unsure(message)


def is_plain_search(glued: Sequence[str]) -> bool:
    """A `--search` and no help or single-dash option (those print or fail: one-shot)."""
    searches = any(a == "--search" or a.startswith("--search=") for a in glued)
    odd = any(a.startswith("--h") or (a.startswith("-") and not a.startswith("--")) for a in glued)
    return searches and not odd


def common_options(glued: Sequence[str]) -> Common | None:
    """`--root/--db/--config` as the real parser would read them, or None when unsure."""
    parser = _Parser(add_help=False, allow_abbrev=False)
    parser.add_argument("--root", action="append")
    parser.add_argument("--db")
    parser.add_argument("--config")
    try:
        args, _rest = parser.parse_known_args(list(glued))
    except _Unsure:
        return None
    return Common(args.root, args.db, args.config)
