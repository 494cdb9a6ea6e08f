"""Where a warm process listens: a socket in the user's private runtime folder.

Linux and macOS: a Unix domain socket (mode 0600) in $XDG_RUNTIME_DIR when that folder is the
user's own and private, else in a 0700 `run` folder in the user's cache folder; one socket per
index, named by a hash of the index file's resolved path. Windows has no Unix sockets in
CPython: the server listens on 127.0.0.1 on a random port and writes the port and a random
token to a file of the same name in the user's own folder; a client must send the token back.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import socket
import stat
import struct
import sys
from collections.abc import Mapping
from pathlib import Path

import platformdirs

WINDOWS = sys.platform == "win32"
BACKLOG = 16


class AddressInUse(OSError):
    """Another live process already serves this index on this address."""


def runtime_folder(env: Mapping[str, str], create: bool = True) -> Path:
    """$XDG_RUNTIME_DIR when it is the user's own folder and private, else a 0700 `run`
    folder in the user's cache folder (in their home: no other user can create it first).
    `create=False` (a client) never makes the folder."""
    given = env.get("XDG_RUNTIME_DIR")
    if given and os.path.isabs(given) and private(Path(given)):
        return Path(given)
    folder = Path(platformdirs.user_cache_dir("memex")) / "run"
    if create:
        folder.mkdir(parents=True, exist_ok=True)
        os.chmod(folder, 0o700)
    return folder


def private(folder: Path) -> bool:
    """A real folder (not a link), owned by this user, that no one else may enter."""
    try:
        info = os.lstat(folder)
    except OSError:
        return False
    mine = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    return stat.S_ISDIR(info.st_mode) and mine and not info.st_mode & 0o077


def address_for(db_path: Path, env: Mapping[str, str], create: bool = False) -> Path:
    """The socket (Windows: the port file) of the warm process serving `db_path`."""
    key = hashlib.sha256(str(db_path.resolve()).encode("utf-8", "surrogatepass")).hexdigest()
    return runtime_folder(env, create) / f"memex-search-{key[:16]}.sock"


def connect(address: Path, timeout: float) -> tuple[socket.socket, str]:
    """A connected socket to the server at `address` and the token to send; OSError if
    nothing listens there (no file, a stale socket, a refused port)."""
    if WINDOWS:
        info = json.loads(address.read_text(encoding="utf-8"))
        sock = socket.create_connection(("127.0.0.1", int(info["port"])), timeout)
        return sock, str(info["token"])
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(address))
    except OSError:
        sock.close()
        raise
    return sock, ""


def listen(address: Path) -> tuple[socket.socket, str]:
    """A listening socket at `address` and the token clients must send. A socket left by a
    crashed process is removed first; AddressInUse if a live one answers there."""
    if WINDOWS:
        return _listen_tcp(address)
    if _answers(address):
        raise AddressInUse(f"another process serves this index at {address}")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(address)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(address))
        os.chmod(address, 0o600)  # the folder is 0700 already: belt and braces
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock, ""


def _answers(address: Path) -> bool:
    try:
        probe, _ = connect(address, 0.2)
    except OSError:
        return False
    probe.close()
    return True


def _listen_tcp(address: Path) -> tuple[socket.socket, str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(BACKLOG)
    token = secrets.token_hex(16)
    info = {"port": sock.getsockname()[1], "token": token}
    address.write_text(json.dumps(info), encoding="utf-8")
    return sock, token


def owner_is_me(conn: socket.socket) -> bool:
    """Linux: the peer process runs as this user (SO_PEERCRED); elsewhere the folder's and
    socket's modes (or the Windows token) do this job."""
    if not hasattr(socket, "SO_PEERCRED") or conn.family != socket.AF_UNIX:
        return True
    raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", raw)
    return bool(uid == os.getuid())
