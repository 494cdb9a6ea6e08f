"""The headless command line: `memex --search`, and one module per command group.

Every command is a function `(argv, out) -> exit code`, registered in `COMMANDS` below by
where it lives ("module:function"), and imported when it runs: `memex --search` loads the
search and nothing of the indexer, the readers or the people build, which the other
commands bring (tests/test_cold_start.py). `run` dispatches, and turns every expected
failure into one sentence on stderr and an exit code (see `engine.cli.common`), never a
traceback.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from typing import TextIO, cast

from engine.cli.common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_UNUSABLE,
    EXIT_USAGE,
    CliError,
    index_exit_code,
)
from engine.cli.stdio import guarded
from engine.embedders import EmbedderError
from engine.settings import SettingsError
from engine.store import db
from engine.warm.argv import glue_values

Command = Callable[[Sequence[str], TextIO], int]

# name -> "module:function", imported on dispatch (tests/test_cold_start.py imports each).
COMMANDS: dict[str, str] = {
    "reindex": "engine.cli.index:cmd_reindex",
    "discover": "engine.cli.index:cmd_discover",
    "roots": "engine.cli.roots:cmd_roots",
    "demo": "engine.cli.index:cmd_demo",
    "status": "engine.cli.status:cmd_status",
    "maintenance": "engine.cli.maintenance:cmd_maintenance",
    "backup": "engine.cli.maintenance:cmd_backup",
    "watch": "engine.cli.watch:cmd_watch",
    "key": "engine.cli.keys:cmd_key",
    "mcp": "engine.cli.mcp:cmd_mcp",
    "opened": "engine.cli.frecency:cmd_opened",
    "frecency": "engine.cli.frecency:cmd_frecency",
    "people": "engine.cli.people:cmd_people",
}


def command(name: str) -> Command:
    """The function of the command `name`, its module imported now."""
    module, function = COMMANDS[name].split(":")
    return cast(Command, getattr(importlib.import_module(module), function))


GLOBAL_FLAGS = ("--root", "--db", "--config")  # engine.cli.common.add_common


def command_at(argv: Sequence[str]) -> int | None:
    """Where the sub-command is: first, or after global options (`memex --db F status`)."""
    i = 0
    while i < len(argv) and argv[i] not in COMMANDS:
        if argv[i] in GLOBAL_FLAGS:
            i += 2
        elif argv[i].startswith(tuple(f"{flag}=" for flag in GLOBAL_FLAGS)):
            i += 1
        else:
            return None
    return i if i < len(argv) else None


def dispatch(argv: Sequence[str], out: TextIO) -> int:
    at = command_at(argv)
    if at is not None:  # global options before the command go to it, as if after it
        return command(argv[at])([*argv[:at], *argv[at + 1 :]], out)
    from engine.cli.search import cmd_search, search_parser

    args = search_parser().parse_args(glue_values(argv))
    if args.version:
        from engine import __version__

        out.write(f"memex {__version__}\n")
        return EXIT_OK
    if args.search is None:
        raise CliError("nothing to do: give --search QUERY or a command (see 'memex --help')")
    return cmd_search(args, out)


def run(argv: Sequence[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run one headless command; returns the exit code. Used in-process by the tests."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        return dispatch(argv, out)
    except CliError as exc:
        err.write(f"memex: {exc}\n")
        return exc.code
    except SettingsError as exc:
        err.write(f"memex: {exc}\n")
        return EXIT_USAGE
    except EmbedderError as exc:
        err.write(f"memex: the embedder is unusable: {exc}\n")
        return EXIT_UNUSABLE
    except db.IndexError_ as exc:
        err.write(f"memex: {exc}\n")
        return index_exit_code(exc)
    except db.DAMAGE as exc:  # a damaged page met by a query: the way forward, not a traceback
        err.write(f"memex: {db.damaged(None, exc)}\n")
        return EXIT_UNUSABLE
    except KeyboardInterrupt:
        err.write("memex: interrupted\n")
        return EXIT_INTERRUPTED


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    return guarded(lambda: run(args))  # a closed pipe or Ctrl+C: quiet (engine.cli.stdio)
