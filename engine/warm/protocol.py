"""The line protocol: one JSON request line, one JSON reply line, then the connection closes.

Request: `{"memex": PROTOCOL, "op": "search", "version", "identity", "argv", "common",
"token"}` (or `"op": "status"`). Before the reply to a search, the worker that takes it sends
the note `{"working": true}` (the client's short wait for a worker ends there; the search's
own time follows). Reply: `{"ok": true, "stdout", "stderr", "code", "pid",
"served"}` — the bytes and exit code the one-shot path would have given — or
`{"ok": false, "decline": reason}` (not this server's to answer, or "busy": run the one-shot
path) or `{"ok": false, "error": message}` (a malformed request). Over TCP (Windows) the
client first sends `{"op": "hello", "nonce"}` and the server answers `{"proof"}`, a keyed hash
of the nonce with the port file's token (engine/warm/runtime.py), before the request line.
"""

from __future__ import annotations

import json
import socket
from typing import Any

PROTOCOL = 1
MAX_REQUEST_BYTES = 1 << 20
MAX_REPLY_BYTES = 256 << 20  # a --limit 100000 --json page is large, but not this large


class ProtocolError(Exception):
    """A line that is too long, cut short, or not a JSON object."""


def send(sock: socket.socket, message: dict[str, Any]) -> None:
    """One message as one line (ASCII JSON: no character can break the framing)."""
    sock.sendall(json.dumps(message, ensure_ascii=True).encode("ascii") + b"\n")


def receive(sock: socket.socket, limit: int) -> dict[str, Any]:
    """The next line as a JSON object; ProtocolError otherwise (OSError on a timeout)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        data = sock.recv(65536)
        if not data:
            raise ProtocolError("the connection closed before the end of the line")
        end = data.find(b"\n")
        chunks.append(data if end < 0 else data[:end])
        size += len(chunks[-1])
        if size > limit:
            raise ProtocolError(f"a line longer than {limit} bytes")
        if end >= 0:
            return parse(b"".join(chunks))


def parse(line: bytes) -> dict[str, Any]:
    """The line as a JSON object; ProtocolError for anything else, a line nested too deep
    for `json` (which gives up with RecursionError) included."""
    try:
        message = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProtocolError(f"not JSON: {exc}") from None
    except RecursionError:
        raise ProtocolError("not JSON: nested too deeply") from None
    if not isinstance(message, dict):
        raise ProtocolError("not a JSON object")
    return message
