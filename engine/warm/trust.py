"""Whether a local socket belongs to this user: its folder, its file, the process behind it.

Every check compares owners with this process's uid explicitly: root bypasses file
permissions, so "I could open it" proves nothing. Each `*_problem` function returns ''
when all is well, or one sentence saying what is wrong; `Untrusted` carries that sentence.
Linux reads the peer's uid with SO_PEERCRED, macOS and the BSDs with getpeereid(); Windows
asks which process serves a named pipe and compares that process's user with ours.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import struct
import sys
from collections.abc import Callable
from pathlib import Path

UCRED = "iII"  # struct ucred: pid_t pid, uid_t uid, gid_t gid


class Untrusted(OSError):
    """A folder, socket file or peer that belongs to someone else: nothing is sent to it."""


def my_uid() -> int | None:
    """This process's uid; None where there are no uids (Windows)."""
    return os.getuid() if hasattr(os, "getuid") else None


def folder_problem(folder: Path, private: bool = True) -> str:
    """'' for a real folder (not a link) owned by this user that no one else may enter
    (`private=False`: that others may enter, but which is still this user's)."""
    try:
        info = os.lstat(folder)
    except OSError as exc:
        return f"the folder {folder} cannot be read ({exc.strerror})"
    if stat.S_ISLNK(info.st_mode):
        return f"the folder {folder} is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return f"{folder} is not a folder"
    return _owner_problem(folder, info, "folder", private)


def socket_problem(address: Path) -> str:
    """'' for a socket file owned by this user with a private mode; FileNotFoundError when
    there is none (nothing listens: not a trust problem)."""
    info = os.lstat(address)
    if not stat.S_ISSOCK(info.st_mode):
        return f"{address} is not a socket"
    return _owner_problem(address, info, "socket", True)


def _owner_problem(path: Path, info: os.stat_result, what: str, private: bool) -> str:
    mine = my_uid()
    if mine is not None and info.st_uid != mine:
        return f"the {what} {path} belongs to another user (uid {info.st_uid})"
    if private and info.st_mode & 0o077:
        return f"the {what} {path} is open to other users (mode {info.st_mode & 0o777:o})"
    return ""


def peer_uid(conn: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket; None where it cannot be
    read (not a Unix socket, no such call on this system)."""
    if conn.family != getattr(socket, "AF_UNIX", None):
        return None
    if hasattr(socket, "SO_PEERCRED"):
        raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize(UCRED))
        return int(struct.unpack(UCRED, raw)[1])
    getpeereid = _getpeereid()
    if getpeereid is None:
        return None
    import ctypes

    uid, gid = ctypes.c_uint32(), ctypes.c_uint32()
    if getpeereid(conn.fileno(), ctypes.byref(uid), ctypes.byref(gid)) != 0:
        raise OSError(ctypes.get_errno(), "getpeereid failed")
    return int(uid.value)


def _getpeereid() -> Callable[..., int] | None:
    """libc's getpeereid (macOS, the BSDs), or None (imported here: Linux needs no ctypes)."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        found: Callable[..., int] = libc.getpeereid
    except (OSError, AttributeError):
        return None
    return found


def peer_problem(conn: socket.socket) -> str:
    """'' when the peer runs as this user (or cannot be told: TCP, which the token guards)."""
    try:
        uid = peer_uid(conn)
    except OSError as exc:
        return f"the process at the other end cannot be identified ({exc})"
    mine = my_uid()
    if uid is None or mine is None or uid == mine:
        return ""
    return f"the process at the other end runs as another user (uid {uid})"


def descriptor_peer_problem(descriptor: int) -> str:
    """`peer_problem` for a native descriptor another library owns (a QLocalSocket's): a
    Unix socket's fd, or on Windows a named pipe's handle."""
    if sys.platform == "win32":
        return _pipe_server_problem(descriptor)
    try:
        conn = socket.socket(fileno=os.dup(descriptor))
    except OSError as exc:
        return f"the process at the other end cannot be identified ({exc})"
    with conn:
        return peer_problem(conn)


def _pipe_server_problem(handle: int) -> str:
    """'' when the process serving this named pipe runs as this user (Windows)."""
    try:
        theirs = _pipe_server_sid(handle)
        mine = _process_sid(os.getpid())
    except OSError as exc:
        return f"the process at the other end cannot be identified ({exc})"
    return "" if theirs == mine else "the process at the other end runs as another user"


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import ctypes
    from ctypes import wintypes

    PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
    TOKEN_QUERY = 0x0008
    TOKEN_USER_CLASS = 1

    def _pipe_server_sid(handle: int) -> str:
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        pid = wintypes.ULONG()
        if not kernel32.GetNamedPipeServerProcessId(wintypes.HANDLE(handle), ctypes.byref(pid)):
            raise ctypes.WinError(ctypes.get_last_error())
        return _process_sid(pid.value)

    def _process_sid(pid: int) -> str:
        """The string SID of the user a process runs as."""
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        advapi32 = ctypes.WinDLL("advapi32", use_last_error=True)
        kernel32.OpenProcess.restype = wintypes.HANDLE
        process = kernel32.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, False, pid)
        if not process:
            raise ctypes.WinError(ctypes.get_last_error())
        token = wintypes.HANDLE()
        try:
            if not advapi32.OpenProcessToken(process, TOKEN_QUERY, ctypes.byref(token)):
                raise ctypes.WinError(ctypes.get_last_error())
            try:
                return _token_sid(advapi32, kernel32, token)
            finally:
                kernel32.CloseHandle(token)
        finally:
            kernel32.CloseHandle(process)

    def _token_sid(advapi32: ctypes.WinDLL, kernel32: ctypes.WinDLL, token: wintypes.HANDLE) -> str:
        needed = wintypes.DWORD()
        advapi32.GetTokenInformation(token, TOKEN_USER_CLASS, None, 0, ctypes.byref(needed))
        buffer = ctypes.create_string_buffer(needed.value)
        if not advapi32.GetTokenInformation(
            token, TOKEN_USER_CLASS, buffer, needed, ctypes.byref(needed)
        ):
            raise ctypes.WinError(ctypes.get_last_error())
        sid = ctypes.c_void_p.from_buffer(buffer).value  # TOKEN_USER.User.Sid comes first
        text = wintypes.LPWSTR()
        if not advapi32.ConvertSidToStringSidW(ctypes.c_void_p(sid), ctypes.byref(text)):
            raise ctypes.WinError(ctypes.get_last_error())
        try:
            return str(text.value)
        finally:
            with contextlib.suppress(Exception):
                kernel32.LocalFree(text)

else:

    def _pipe_server_sid(handle: int) -> str:
        raise OSError("named pipes are a Windows matter")

    def _process_sid(pid: int) -> str:
        raise OSError("SIDs are a Windows matter")
