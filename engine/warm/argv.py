"""The command line as the warm client reads it, before anything heavy is imported.

The client only needs to know that this is a plain search and which `--root/--db/--config`
it names (they choose the index and settings, hence the socket). Anything it does not
understand sends it to the one-shot path; the server parses `argv` again with the real
parser and declines when its reading of those three options differs.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass

FREE_TEXT_FLAGS = ("--search", "--query", "--person")


def glue_values(argv: Sequence[str]) -> list[str]:
    """`--search -x` would read -x as an option: glue free-text values to their flag."""
    out: list[str] = []
    items = list(argv)
    i = 0
    while i < len(items):
        if items[i] in FREE_TEXT_FLAGS and i + 1 < len(items):
            out.append(f"{items[i]}={items[i + 1]}")
            i += 2
        else:
            out.append(items[i])
            i += 1
    return out


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
