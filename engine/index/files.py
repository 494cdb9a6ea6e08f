"""What may be read: regular files only, and symlinks only to places inside the roots.

A FIFO, socket or device on a routed path would block a run forever or never end (a link
to /dev/zero); a symlink from inside a root to /etc/passwd would index a file the user never
put there.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import platformdirs

from engine.extractors import ExtractError
from engine.settings import APP_NAME, Settings


def is_under(path: str, folder: Path) -> bool:
    """Whether `path` is `folder` or lies inside it (string prefix: no file system access)."""
    base = str(folder)
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class OwnPaths:
    """Memex's own places, which no walk enters nor counts: its config, data, state, cache
    and log folders (platformdirs', and the configured log folder), the index's files
    wherever the index is (`memex.db`, its -wal, -shm and .lock, the copies beside it) and
    the config file in use."""

    folders: frozenset[Path]
    index_folder: Path
    index_name: str
    files: frozenset[Path] = frozenset()

    @classmethod
    def of(cls, settings: Settings) -> OwnPaths:
        dirs = (
            platformdirs.user_config_dir,
            platformdirs.user_data_dir,
            platformdirs.user_state_dir,
            platformdirs.user_cache_dir,
            platformdirs.user_log_dir,
        )
        folders = {Path(folder(APP_NAME)) for folder in dirs} | {settings.log_path.parent}
        index = settings.db_path.absolute()
        config = () if settings.config_path is None else (settings.config_path.absolute(),)
        own = frozenset(f.absolute() for f in folders)
        return cls(own, index.parent, index.name, frozenset(config))

    def holds_file(self, folder: Path, name: str) -> bool:
        """Whether `name` in `folder` is Memex's own (asked of every file a walk lists)."""
        if name.startswith(self.index_name) and folder == self.index_folder:
            return True
        return name in self.file_names and folder / name in self.files

    @cached_property
    def file_names(self) -> frozenset[str]:
        return frozenset(f.name for f in self.files)


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

    A special file is told by its stat and never opened: opening a FIFO waits for a
    writer, a socket cannot be opened at all (ENXIO), and opening some devices acts (a tape
    rewinds). The open itself does not block and is checked again (fstat), so a FIFO or
    socket swapped in after the stat is refused rather than waited on forever.
    """
    refuse_special(os.stat(path).st_mode)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a socket swapped in after the stat, say
            refuse_special(os.stat(path).st_mode)
        raise
    with os.fdopen(descriptor, "rb") as handle:
        refuse_special(os.fstat(handle.fileno()).st_mode)
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ExtractError(f"file is larger than {limit} bytes")
    return data


def refuse_special(mode: int) -> None:
    """ExtractError, in plain words, unless `mode` is a regular file's."""
    if not stat.S_ISREG(mode):
        raise ExtractError(skipped(mode))


def skipped(mode: int) -> str:
    """`is a socket, not a regular file; skipped`: why a special file is not read."""
    return f"is {kind_name(mode)}, not a regular file; skipped"


def kind_name(mode: int) -> str:
    """What a file of this mode is, in words ('a socket', 'a FIFO (named pipe)', …)."""
    kinds = (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    return next((name for test, name in kinds if test(mode)), "a special file")
