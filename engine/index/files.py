"""What may be read: regular files only, and symlinks only to places inside the roots.

A FIFO, socket or device on a routed path would block a run forever or never end (a link
to /dev/zero); a symlink from inside a root to /etc/passwd would index a file the user never
put there.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from engine.extractors import ExtractError
from engine.settings import Settings


def is_under(path: str, folder: Path) -> bool:
    """Whether `path` is `folder` or lies inside it (string prefix: no file system access)."""
    base = str(folder)
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def is_inside_roots(path: Path, settings: Settings) -> bool:
    return any(is_under(str(path), root) for root in settings.roots)


def link_allowed(path: Path, settings: Settings) -> bool:
    """A symlink is followed only to a place inside the roots, unless configured otherwise."""
    if settings.follow_symlinks_outside_roots or not path.is_symlink():
        return True
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):  # a broken link, or a loop
        return False
    return is_inside_roots(target, settings)


def read_regular_file(path: Path, limit: int) -> bytes:
    """A regular file's bytes; ExtractError for a FIFO, socket, device or folder, or a file
    that has grown past `limit` bytes since it was scanned.

    Opened without blocking and checked on the open file (fstat), so a FIFO swapped in after
    the scan is refused rather than waited on forever, and a device is never read.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    with os.fdopen(os.open(path, flags), "rb") as handle:
        kind = os.fstat(handle.fileno()).st_mode
        if not stat.S_ISREG(kind):
            raise ExtractError(f"not a regular file ({_kind_name(kind)}); not read")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ExtractError(f"file is larger than {limit} bytes")
    return data


def _kind_name(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    return next((name for test, name in kinds if test(mode)), "not a file")
