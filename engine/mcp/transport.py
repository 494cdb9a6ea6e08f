"""The stdio transport of `memex mcp`, in place of the SDK's `stdio_server()`.

It speaks the same wire (one JSON-RPC message per line) through engine/mcp/wire.py, so that
every line gets an answer: the SDK's transport drops a line it cannot parse, and pydantic's
parser cannot parse a lone-surrogate escape, so such a request would hang its client. The
server sees the same two streams as with the SDK's transport.

While serving, fd 0 reads the null device and fd 1 writes to stderr (the SDK's transport
does the same), so a library's stray `print` cannot corrupt the protocol; the wire is served
from private duplicates, and both descriptors are restored on exit. On Windows, or when the
descriptors cannot be moved, the streams are served in place.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import BinaryIO

import anyio
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from engine.mcp.wire import (
    MAX_LINE_BYTES,
    Inbound,
    Reply,
    decode_line,
    encode_message,
    encode_payload,
    oversized_reply,
)

log = logging.getLogger("memex.mcp")

ToServer = MemoryObjectSendStream[SessionMessage | Exception]
FromServer = MemoryObjectReceiveStream[SessionMessage]
Frames = MemoryObjectReceiveStream[Inbound | bytes]
Streams = tuple[
    MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]
]


class Wire:
    """The output side: whole lines, one writer at a time; a closed pipe ends the writing."""

    def __init__(self, sink: BinaryIO) -> None:
        self._sink = sink
        self._lock = anyio.Lock()
        self.closed = False

    async def write(self, line: bytes) -> None:
        if self.closed:
            return
        async with self._lock:
            try:
                await anyio.to_thread.run_sync(self._write_now, line)
            except OSError as exc:  # the client went away; reading will end at EOF
                log.debug("stdout closed: %s", exc)
                self.closed = True

    def _write_now(self, line: bytes) -> None:
        self._sink.write(line)
        self._sink.flush()


def read_frame(source: BinaryIO) -> Inbound | bytes:
    """The next line (b"" at end of input), or a `Reply` for a line over the size limit,
    whose rest is skipped."""
    try:
        line = source.readline(MAX_LINE_BYTES + 1)
        if len(line) <= MAX_LINE_BYTES or line.endswith(b"\n"):
            return line
        while line and not line.endswith(b"\n"):
            line = source.readline(MAX_LINE_BYTES)
    except (OSError, ValueError):  # stdin closed under us: the same as its end
        return b""
    return oversized_reply()


def start_reader(source: BinaryIO) -> Frames:
    """Frames from `source`, read on a daemon thread: a blocking read cannot be cancelled,
    and a daemon thread never keeps the process alive once the server has stopped."""
    send, receive = anyio.create_memory_object_stream[Inbound | bytes](0)
    token = anyio.lowlevel.current_token()

    def read_all() -> None:
        try:
            while (frame := read_frame(source)) != b"":
                anyio.from_thread.run(send.send, frame, token=token)
            anyio.from_thread.run(send.aclose, token=token)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.RunFinishedError):
            return  # nobody reads any more: the server has stopped

    threading.Thread(target=read_all, name="memex-mcp-stdin", daemon=True).start()
    return receive


async def pump_in(frames: Frames, to_server: ToServer, wire: Wire) -> None:
    """Lines from the client: messages to the server, error replies straight back."""
    async with frames, to_server:
        async for frame in frames:
            inbound = decode_line(frame) if isinstance(frame, bytes) else frame
            if isinstance(inbound, Reply):
                await wire.write(encode_payload(inbound.payload))
            elif inbound is not None:
                await to_server.send(SessionMessage(inbound))


async def pump_out(from_server: FromServer, wire: Wire) -> None:
    """Messages from the server, one line each, until the server closes its stream."""
    async with from_server:
        async for item in from_server:
            line = encode_message(item.message)
            if line is None:
                log.warning("dropped a %s the server could not encode", type(item.message).__name__)
            else:
                await wire.write(line)


@asynccontextmanager
async def stdio_transport(
    source: BinaryIO | None = None, sink: BinaryIO | None = None
) -> AsyncIterator[Streams]:
    """The server's read and write streams over stdin and stdout (or the given files)."""
    restore: Callable[[], None] = _nothing
    if source is None or sink is None:
        source, sink, restore = claim_stdio()
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    server_writes, from_server = anyio.create_memory_object_stream[SessionMessage](0)
    wire = Wire(sink)
    try:
        async with anyio.create_task_group() as tasks:
            reading = anyio.CancelScope()
            tasks.start_soon(_read_until_stopped, reading, start_reader(source), to_server, wire)
            tasks.start_soon(pump_out, from_server, wire)
            try:
                yield server_reads, server_writes
            finally:
                reading.cancel()  # the server has stopped; pump_out ends with its stream
    finally:
        restore()


def claim_stdio() -> tuple[BinaryIO, BinaryIO, Callable[[], None]]:
    """The wire's two ends, and how to give fd 0 and 1 back."""
    if sys.platform == "win32":
        return sys.stdin.buffer, sys.stdout.buffer, _nothing
    sys.stdout.flush()
    try:
        wire_in, wire_out = os.dup(0), os.dup(1)
    except OSError:
        return sys.stdin.buffer, sys.stdout.buffer, _nothing
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)

    def restore() -> None:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)

    # closefd=False: a reader thread may still block on the duplicate after the transport
    # exits (its read cannot be cancelled), so the descriptor is never closed under it.
    return (
        os.fdopen(wire_in, "rb", closefd=False),
        os.fdopen(wire_out, "wb", closefd=False),
        restore,
    )


async def _read_until_stopped(
    scope: anyio.CancelScope, frames: Frames, to_server: ToServer, wire: Wire
) -> None:
    with scope:
        await pump_in(frames, to_server, wire)


def _nothing() -> None:
    return None
