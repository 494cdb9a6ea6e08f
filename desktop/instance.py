"""One Memex per user: a QLocalServer named per user, and a client that talks to it.

A second launch, and `memex --toggle`, connect to the running instance, send one line
("toggle", "show" or "quit") and exit. A socket left behind by a crash is removed with
`QLocalServer.removeServer` before listening.

On Linux and macOS the socket is a file in a folder only the user can enter: the runtime
folder ($XDG_RUNTIME_DIR, when it is the user's own and private), else a 0700 folder in the
user's cache folder. A bare name would put it in /tmp, where another local user could bind
it first and make every launch exit as "already running" after talking to them.

Nothing is sent to, or read from, another user (engine/warm/trust.py): before connecting,
`send` checks that the folder and the socket file are this user's with private modes, and
once connected that the process at the other end runs as this user (on Windows: the user of
the process serving the pipe); `listen` refuses a folder that is not this user's, and the
server drops a connection from another user unread. A refusal is one line on stderr.
"""

from __future__ import annotations

import getpass
import hashlib
import os
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import shiboken6
from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

# The same private folder as the warm search socket's (Qt-free, so it lives in the engine).
from engine.warm.runtime import check_address, folder_refusal, runtime_folder
from engine.warm.trust import Untrusted, descriptor_peer_problem

ENV_NAME = "MEMEX_INSTANCE"  # tests and side-by-side installs pick their own name
COMMANDS = ("toggle", "show", "quit")
TIMEOUT_MS = 1500


def socket_name(env: Mapping[str, str]) -> str:
    """The per-user server name: a path in the user's private runtime folder (Windows: a
    pipe name, already per session). MEMEX_INSTANCE overrides it."""
    if env.get(ENV_NAME):
        return env[ENV_NAME]
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "user"
    safe = re.sub(r"[^A-Za-z0-9_.-]", "", user)[:32] or "user"
    name = f"memex-{safe}-{hashlib.sha1(user.encode()).hexdigest()[:8]}"
    if sys.platform == "win32":
        return name
    try:
        folder = runtime_folder(env)
    except OSError:  # someone else's folder: `send` and `listen` say so and refuse it
        folder = runtime_folder(env, create=False)
    return str(folder / name)


def say(message: str) -> None:
    sys.stderr.write(f"memex: {message}\n")
    sys.stderr.flush()


def address_problem(name: str) -> str | None:
    """Why the socket at `name` is not to be trusted ('' when it is); None when there is no
    socket there. A bare name (MEMEX_INSTANCE, Windows) is checked only by its peer."""
    if sys.platform == "win32" or not os.path.isabs(name):
        return ""
    try:
        check_address(Path(name))
    except Untrusted as exc:
        return str(exc)
    except OSError:
        return None
    return ""


def send(
    name: str, command: str, timeout_ms: int = TIMEOUT_MS, on_refused: Callable[[str], None] = say
) -> bool:
    """Deliver `command` to a running instance of this user's; False if none is listening
    or the socket is someone else's (`on_refused` is told why, in one line)."""
    problem = address_problem(name)
    if problem is None:
        return False
    socket = QLocalSocket()
    if not problem:
        socket.connectToServer(name)
        if not socket.waitForConnected(timeout_ms):
            return False
        problem = descriptor_peer_problem(int(socket.socketDescriptor()))
    if problem:
        socket.abort()
        on_refused(f"not using the single-instance socket: {problem}")
        return False
    socket.write(f"{command}\n".encode())
    socket.flush()  # usually writes everything at once: then there is nothing left to wait for
    ok = socket.bytesToWrite() == 0 or socket.waitForBytesWritten(timeout_ms)
    socket.disconnectFromServer()
    if socket.state() != QLocalSocket.LocalSocketState.UnconnectedState:
        socket.waitForDisconnected(timeout_ms)
    return ok


class InstanceServer(QObject):
    """Listens for commands from later launches; emits each command line."""

    command = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._accept)
        self._buffers: dict[QLocalSocket, bytes] = {}
        self._problem = ""
        self.refused = 0  # connections from another user, dropped unread

    def listen(self, name: str) -> bool:
        """Listen on `name`, clearing a stale socket from a crashed instance first; False
        (see `error`) in a folder that is not this user's own and private."""
        if sys.platform != "win32" and os.path.isabs(name):
            self._problem = folder_refusal(Path(name).parent)
            if self._problem:
                return False
        if self.server.listen(name):
            return True
        QLocalServer.removeServer(name)
        return self.server.listen(name)

    def error(self) -> str:
        return self._problem or self.server.errorString()

    def close(self) -> None:
        """Stop listening and drop the open connections first: a socket Qt deletes with
        its server must not call back into this object (the app's quit came over one)."""
        for socket in list(self._buffers):
            if shiboken6.isValid(socket):
                socket.readyRead.disconnect()
                socket.disconnected.disconnect()
                socket.abort()
                socket.deleteLater()
        self._buffers.clear()
        self.server.close()

    def _accept(self) -> None:
        while self.server.hasPendingConnections():
            socket = self.server.nextPendingConnection()
            if descriptor_peer_problem(int(socket.socketDescriptor())):
                self.refused += 1
                socket.abort()
                socket.deleteLater()
                continue
            self._buffers[socket] = b""
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(lambda s=socket: self._closed(s))
            if socket.bytesAvailable():
                self._read(socket)

    def _read(self, socket: QLocalSocket) -> None:
        data = self._buffers.get(socket, b"") + bytes(socket.readAll().data())
        *lines, rest = data.split(b"\n")
        self._buffers[socket] = rest
        for line in lines:
            text = line.decode("utf-8", "replace").strip()
            if text in COMMANDS:
                self.command.emit(text)

    def _closed(self, socket: QLocalSocket) -> None:
        if not shiboken6.isValid(socket):  # deleted by Qt meanwhile: nothing left to read
            self._buffers.pop(socket, None)
            return
        if socket in self._buffers:
            self._read(socket)
            del self._buffers[socket]
        socket.deleteLater()
