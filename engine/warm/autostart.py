"""A warm process started on first use: the client's side, and the lock both sides share.

A `memex --search` that finds no warm process for its index (no socket, or a stale one)
answers one-shot as before, and first starts `python -m engine.cli.autostart` for the same
`--root/--db/--config`, detached: its own session (a Ctrl+C in the shell never reaches it),
stdin, stdout and stderr on the null device, not waited for. That process loads the engine,
warms it up, listens on the index's socket (engine/warm/runtime.py, with every check the app's
and `memex watch`'s servers make) and exits after `search.warm_idle_minutes` without a search.

One lock file per index beside its socket (`memex-search-<hash>.lock`, in the same private
folder) decides who starts: the process holds it with `flock` from before it loads anything
until it exits, so a second process for the same index gives up at once, and a client that
finds it held (a server still warming up) starts nothing. The kernel drops the lock with the
process, so a crash leaves nothing stale behind.

Nothing starts when `search.warm_autostart` is off, `search.warm_idle_minutes` is 0,
MEMEX_NO_AUTOSTART=1 (the test suite sets it), the warm path is off (MEMEX_NO_WARM=1,
`search.warm_cli = false`), the index file is missing or belongs to another user, the socket's
folder is someone else's, on Windows (no `flock`), or in a frozen build (no `python -m`).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from engine.settings import Settings
from engine.warm.argv import Common
from engine.warm.runtime import address_for
from engine.warm.trust import my_uid

ENV_NO_AUTOSTART = "MEMEX_NO_AUTOSTART"
SERVER_MODULE = "engine.cli.autostart"  # the detached process's `python -m` module
LOCK_SUFFIX = ".lock"


def switched_off(env: Mapping[str, str]) -> bool:
    return env.get(ENV_NO_AUTOSTART, "").strip().lower() not in ("", "0", "false", "no")


def wanted(settings: Settings, env: Mapping[str, str]) -> bool:
    """Whether a search with these settings may start a warm process at all."""
    return (
        settings.search.warm_autostart
        and settings.search.warm_idle_minutes > 0
        and not switched_off(env)
        and sys.platform != "win32"
        and not getattr(sys, "frozen", False)
    )


def index_problem(db_path: Path) -> str:
    """'' when the index file is there and this user's; else why no process is started
    for it (a warm process of ours must not hold another user's index open)."""
    try:
        info = os.stat(db_path)
    except OSError:
        return f"there is no index at {db_path}"
    mine = my_uid()
    if mine is not None and info.st_uid != mine:
        return f"the index {db_path} belongs to another user (uid {info.st_uid})"
    return ""


def lock_path(address: Path) -> Path:
    """The lock file beside the socket `address` (the same private folder)."""
    return address.with_name(address.stem + LOCK_SUFFIX)


def take_lock(lock: Path) -> int | None:
    """The descriptor holding `lock` for as long as it stays open, or None when another
    process holds it (or it cannot be made)."""
    import fcntl

    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def lock_held(lock: Path) -> bool:
    """Whether a process holds `lock` (a warm process is starting or serving). A shared
    probe: it never makes a file, and a process that takes the lock meanwhile still wins."""
    import fcntl

    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:  # no lock file: no process ever started here, or its folder is not made
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def command(common: Common, identity: str) -> list[str]:
    """The detached process's command line: the client's own options, as given (it runs in
    the client's working folder, so relative paths read the same)."""
    args = [sys.executable, "-m", SERVER_MODULE, "--identity", identity]
    for root in common.root or ():
        args += ["--root", root]
    if common.db is not None:
        args += ["--db", common.db]
    if common.config is not None:
        args += ["--config", common.config]
    return args


def start_server(
    settings: Settings, common: Common, identity: str, env: Mapping[str, str]
) -> int | None:
    """Start a detached warm process for this search's index; its pid, or None when none
    is started (not wanted, not this user's index, one already starting, no spawn)."""
    if not wanted(settings, env) or index_problem(settings.db_path):
        return None
    import subprocess  # only on the way to a spawn: the client stays light

    with contextlib.suppress(OSError, ValueError):
        if lock_held(lock_path(address_for(settings.db_path, env))):
            return None
        child = subprocess.Popen(
            command(common, identity),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=dict(env),
            start_new_session=True,  # no signal from the client's terminal reaches it
            close_fds=True,
        )
        # The process outlives this one and is reaped by init: no wait, and no warning
        # for a child still running when this object goes.
        child.returncode = 0
        return child.pid
    return None
