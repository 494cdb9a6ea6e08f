"""The headless command line: `memex --search`, and one module per command group.

Every command is a function `(argv, out) -> exit code`, registered in `COMMANDS` below;
`run` dispatches, and turns every expected failure into one sentence on stderr and an exit
code (see `engine.cli.common`), never a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from engine.cli import frecency, index, keys, maintenance, mcp, people, roots, status, watch
from engine.cli.common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_UNUSABLE,
    EXIT_USAGE,
    CliError,
    index_exit_code,
)
from engine.cli.search import cmd_search, search_parser
from engine.cli.stdio import guarded
from engine.embedders import EmbedderError
from engine.settings import SettingsError
from engine.store import db
from engine.warm.argv import glue_values

Command = Callable[[Sequence[str], TextIO], int]

COMMANDS: dict[str, Command] = {
    "reindex": index.cmd_reindex,
    "discover": index.cmd_discover,
    "roots": roots.cmd_roots,
    "demo": index.cmd_demo,
    "status": status.cmd_status,
    "maintenance": maintenance.cmd_maintenance,
    "backup": maintenance.cmd_backup,
    "watch": watch.cmd_watch,
    "key": keys.cmd_key,
    "mcp": mcp.cmd_mcp,
    "opened": frecency.cmd_opened,
    "frecency": frecency.cmd_frecency,
    "people": people.cmd_people,
}

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
        return COMMANDS[argv[at]]([*argv[:at], *argv[at + 1 :]], out)
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
