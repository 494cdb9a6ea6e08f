"""Where a warm process listens: a socket in the user's private runtime folder.

Linux and macOS: a Unix domain socket (mode 0600) in $XDG_RUNTIME_DIR when that folder is the
user's own and private, else in a 0700 `run` folder in the user's cache folder; one socket per
index, named by a hash of the index file's resolved path. Before anything is sent, both ends
check (engine/warm/trust.py) that the folder and the socket file are this user's with private
modes and that the process at the other end runs as this user; a folder, file or peer that is
someone else's raises `Untrusted`, which says why in one sentence. Windows has no Unix sockets
in CPython: the server listens on 127.0.0.1 on a random port and writes the port and a random
token to a file of the same name in the user's own folder; the client first makes the server
prove it knows the token (a keyed hash of a fresh nonce), then sends it back with its request.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import socket
import sys
from collections.abc import Mapping
from pathlib import Path

import platformdirs

from engine.warm.protocol import ProtocolError, receive, send
from engine.warm.trust import Untrusted, folder_problem, peer_problem, socket_problem

WINDOWS = sys.platform == "win32"
BACKLOG = 64
HELLO_REPLY_BYTES = 4096


class AddressInUse(OSError):
    """Another live process already serves this index on this address."""


def runtime_folder(env: Mapping[str, str], create: bool = True) -> Path:
    """$XDG_RUNTIME_DIR when it is the user's own folder and private, else a 0700 `run`
    folder in the user's cache folder. `create=False` (a client) never makes the folder;
    `create=True` makes it and raises `Untrusted` if it, or the memex folder holding it,
    is not this user's (another user made it first in a shared cache folder)."""
    given = env.get("XDG_RUNTIME_DIR")
    if given and os.path.isabs(given) and not folder_problem(Path(given)):
        return Path(given)
    folder = Path(platformdirs.user_cache_dir("memex")) / "run"
    if create:
        make_private_folder(folder)
    return folder


def make_private_folder(folder: Path) -> None:
    """`folder` (and its parent) made if missing, this user's and 0700; Untrusted if either
    belongs to someone else, or `folder` is a link: nothing of theirs is changed or used."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    _require(folder_problem(folder.parent.resolve(), private=False))  # a link of one's own is fine
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    _require(folder_problem(folder, private=False))
    if os.lstat(folder).st_mode & 0o077:
        os.chmod(folder, 0o700)  # our own folder, made under a looser umask: close it
    _require(folder_problem(folder))


def folder_refusal(folder: Path) -> str:
    """Why sockets may not live in `folder` ('' when they may), naming the folder that
    failed: `folder` itself, or — when it is not there yet — the folder it would be made
    in, when that is someone else's (their `memex/` in a shared cache folder)."""
    if not os.path.lexists(folder) and os.path.lexists(folder.parent):
        problem = folder_problem(folder.parent.resolve(), private=False)
        if problem:
            return problem
    return folder_problem(folder)


def _require(problem: str) -> None:
    if problem:
        raise Untrusted(problem)


def address_for(db_path: Path, env: Mapping[str, str], create: bool = False) -> Path:
    """The socket (Windows: the port file) of the warm process serving `db_path`."""
    key = hashlib.sha256(str(db_path.resolve()).encode("utf-8", "surrogatepass")).hexdigest()
    return runtime_folder(env, create) / f"memex-search-{key[:16]}.sock"


def check_address(address: Path) -> None:
    """Untrusted unless the folder and the socket file are this user's and private;
    FileNotFoundError when there is no socket (no warm process: say nothing)."""
    problem = folder_problem(address.parent)
    if problem and not os.path.lexists(address.parent):
        raise FileNotFoundError(problem)
    _require(problem or socket_problem(address))


def connect(address: Path, timeout: float) -> tuple[socket.socket, str]:
    """A connected socket to a server of this user's at `address` and the token to send;
    Untrusted for someone else's folder, socket or process (nothing is sent to it); another
    OSError if nothing listens there (no file, a stale socket, a refused port)."""
    if WINDOWS:
        return _connect_tcp(address, timeout)
    check_address(address)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(str(address))
        _require(peer_problem(sock))
    except OSError:
        sock.close()
        raise
    return sock, ""


def _connect_tcp(address: Path, timeout: float) -> tuple[socket.socket, str]:
    """The port file's server, once it has proved it holds the file's token."""
    info = json.loads(address.read_text(encoding="utf-8"))
    token = str(info["token"])
    sock = socket.create_connection(("127.0.0.1", int(info["port"])), timeout)
    try:
        nonce = secrets.token_hex(16)
        send(sock, {"op": "hello", "nonce": nonce})
        proof = receive(sock, HELLO_REPLY_BYTES).get("proof")
        if not isinstance(proof, str) or not hmac.compare_digest(proof, prove(token, nonce)):
            raise Untrusted(f"the process on port {info['port']} does not hold the token")
    except ProtocolError as exc:
        sock.close()
        raise OSError(f"the process on port {info['port']} said no hello: {exc}") from None
    except OSError:
        sock.close()
        raise
    return sock, token


def prove(token: str, nonce: str) -> str:
    """What only a holder of `token` can answer to `nonce`."""
    return hmac.new(token.encode("ascii"), nonce.encode("ascii"), hashlib.sha256).hexdigest()


def listen(address: Path) -> tuple[socket.socket, str]:
    """A listening socket at `address` and the token clients must send. A socket left by a
    crashed process is removed first; AddressInUse if a live one answers there."""
    if WINDOWS:
        return _listen_tcp(address)
    if _answers(address):
        raise AddressInUse(f"another process serves this index at {address}")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(address)  # stale, in our own private folder (whoever left it)
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
    except OSError:  # nothing listens, or someone else's file in our folder: replaced
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
