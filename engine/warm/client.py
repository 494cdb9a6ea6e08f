"""`memex --search` through a warm process, before the one-shot path loads anything heavy.

`try_warm(argv)` returns the exit code of a search a running app or `memex watch` answered
(its stdout and stderr already written, as the one-shot path would have written them), or
None: no warm process for this index and these settings, a stale socket, another version,
a decline or any error — then the caller runs the one-shot path as if nothing happened.
A socket, folder or process that is another user's gets nothing at all: one line on stderr
says why, and the one-shot path answers (engine/warm/trust.py).
MEMEX_NO_WARM=1 or `search.warm_cli = false` turn it off; MEMEX_WARM_DEBUG=1 adds one
line on stderr naming the process that answered (or that this search started: the console
script asks `try_warm` to start one when none listens, engine/warm/autostart.py).
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Mapping, Sequence
from typing import Any, BinaryIO

from engine.warm import argv as cli_argv
from engine.warm.autostart import start_server
from engine.warm.identity import cli_settings, identity
from engine.warm.protocol import MAX_REPLY_BYTES, PROTOCOL, ProtocolError, parse, send
from engine.warm.runtime import address_for, connect
from engine.warm.trust import Untrusted

ENV_OFF = "MEMEX_NO_WARM"
ENV_DEBUG = "MEMEX_WARM_DEBUG"
CONNECT_TIMEOUT_SECONDS = 0.05
# A busy server costs about a second: a worker takes the search (its note, or an answer)
# within it, or the server declines "busy" (engine/warm/server.py, QUEUE_SECONDS), or the
# one-shot path answers.
TAKEN_TIMEOUT_SECONDS = 1.5
REPLY_TIMEOUT_SECONDS = 30.0  # once taken: a search that takes longer runs again one-shot
EXIT_INTERRUPTED = 130  # engine.cli.common.EXIT_INTERRUPTED (that module loads apsw)
EXIT_BROKEN_PIPE = 141  # engine.cli.stdio.EXIT_BROKEN_PIPE


def try_warm(
    argv: Sequence[str], env: Mapping[str, str] | None = None, autostart: bool = False
) -> int | None:
    """The exit code of a warm answer, written out; None to run the one-shot path.
    `autostart`: when no warm process serves this index, start one for the next search
    (engine/warm/autostart.py; the console script asks for it, in-process callers do not)."""
    env = os.environ if env is None else env
    try:
        reply = ask(argv, env, autostart)
        if reply is None:
            return None
        return write_reply(reply, env)
    except KeyboardInterrupt:
        sys.stderr.write("memex: interrupted\n")
        return EXIT_INTERRUPTED


def enabled(env: Mapping[str, str]) -> bool:
    return env.get(ENV_OFF, "").strip().lower() in ("", "0", "false", "no")


def ask(
    argv: Sequence[str], env: Mapping[str, str], autostart: bool = False
) -> dict[str, Any] | None:
    """The server's reply to this search, or None (not for the warm path, or no answer;
    with `autostart`, a warm process started when none listens)."""
    glued = cli_argv.glue_values(argv)
    if not enabled(env) or not cli_argv.is_plain_search(glued):
        return None
    common = cli_argv.common_options(glued)
    if common is None:
        return None
    try:  # a bad config or flag: the one-shot path says so, in its own words
        settings = cli_settings(common.root, common.db, common.config)
    except Exception:
        return None
    if not settings.search.warm_cli:
        return None
    ours = identity(settings, env)
    try:
        sock, token = connect(address_for(settings.db_path, env), CONNECT_TIMEOUT_SECONDS)
    except Untrusted as exc:
        sys.stderr.write(f"memex: not asking the warm process: {exc}; answering one-shot\n")
        return None
    except (FileNotFoundError, ConnectionRefusedError):  # none listens (or a stale socket)
        if autostart:
            started(start_server(settings, common, ours, env), env)
        return None
    except Exception:
        return None
    request = {
        "memex": PROTOCOL,
        "op": "search",
        "version": _version(),
        "identity": ours,
        "argv": list(argv),
        "common": common.as_json(),
        "cwd": _cwd(),  # where the server reads this argv's relative --root/--db/--config
        "token": token,
    }
    return exchange(sock, request)


def started(pid: int | None, env: Mapping[str, str]) -> None:
    """MEMEX_WARM_DEBUG's line for a warm process this search started."""
    if pid is not None and env.get(ENV_DEBUG):
        sys.stderr.write(f"memex: started the warm process {pid} for the next search\n")


def exchange(sock: socket.socket, request: dict[str, Any]) -> dict[str, Any] | None:
    """Send the request on a checked connection; the answer, or None (a decline, a
    "busy", an error reply, no worker's note within TAKEN_TIMEOUT_SECONDS, a timeout), and
    the connection closed either way."""
    with sock:
        try:
            sock.settimeout(TAKEN_TIMEOUT_SECONDS)
            send(sock, request)
            lines = sock.makefile("rb")
            reply = read_line(lines)
            if reply.get("working") is True:  # a worker took it: the search's own time
                sock.settimeout(REPLY_TIMEOUT_SECONDS)
                reply = read_line(lines)
        except (OSError, ProtocolError):
            return None
    return reply if answered(reply) else None


def read_line(lines: BinaryIO) -> dict[str, Any]:
    """The next line of the reply as a JSON object (`protocol.receive`, but buffered: the
    note and the answer may come in one read)."""
    line = lines.readline(MAX_REPLY_BYTES + 1)
    if not line.endswith(b"\n"):
        raise ProtocolError("the connection closed, or the line is too long")
    return parse(line[:-1])


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:  # a deleted working folder: the server declines relative options
        return ""


def answered(reply: dict[str, Any]) -> bool:
    """A well-formed answer (a decline, an error reply or anything odd is not)."""
    return (
        reply.get("ok") is True
        and isinstance(reply.get("stdout"), str)
        and isinstance(reply.get("stderr"), str)
        and type(reply.get("code")) is int
    )


def write_reply(reply: dict[str, Any], env: Mapping[str, str]) -> int:
    """Write the answer as the one-shot path would; a closed stdout pipe: quiet, 141."""
    try:
        sys.stdout.write(reply["stdout"])
        sys.stdout.flush()
    except BrokenPipeError:
        _drop_stdout()
        return EXIT_BROKEN_PIPE
    sys.stderr.write(reply["stderr"])
    if env.get(ENV_DEBUG):
        sys.stderr.write(
            f"memex: answered by the warm process {reply.get('pid')} "
            f"(request {reply.get('served')})\n"
        )
    sys.stderr.flush()
    code: int = reply["code"]
    return code


def _drop_stdout() -> None:
    """As engine.cli.stdio: devnull behind stdout, so the exit-time flush cannot raise."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _version() -> str:
    from engine import __version__

    return __version__
