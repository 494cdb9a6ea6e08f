"""Databases that are someone's data (Messages' `chat.db`), read from a consistent copy.

Messages keeps `chat.db` in WAL mode: the newest messages live in `chat.db-wal` until
Messages checkpoints them into the file, which may be days later. So the database is read
together with its WAL, and never where it lies: both are copied into a private folder
(mode 0700, beside the index, removed afterwards), and SQLite opens the copy read-only and
replays the copied WAL there. The originals are only read (their bytes and mtimes stay as
they were); `-shm` is not copied, SQLite rebuilds it from the WAL.

The pair must be one moment of the database although Messages may write while it is
copied. How SQLite's WAL works (sqlite.org/wal.html, `src/wal.c`): commits append frames to
the WAL; a checkpoint copies committed frames into the database file and leaves the WAL as
it is; once everything is copied, the next writer restarts the WAL from its start under a
new header (the checkpoint sequence and salts change), and frames of another generation,
or torn at the end, fail their salts or checksums and are ignored. Hence the order:

1. the WAL's 32-byte header is read, then the database file is copied, then the WAL;
2. the copy stands when the WAL copy's header is the one read before: the WAL was not
   restarted meanwhile, so every page a checkpoint may have written into the database
   during its copy (a page torn by the copy included) is in the copied WAL, whose replay
   puts back the newest committed version; a WAL appended to meanwhile only adds commits,
   and a half-written last frame is dropped by its checksum. With no WAL (or an empty one)
   the database file's size and mtime must be unchanged over the copy instead.
3. otherwise (a restart or truncation during the copy) it is copied again, up to
   `COPY_ATTEMPTS` times, and then the file is one error of this run.

Copying the WAL first would not do: a checkpoint after it could write pages of commits the
copied WAL lacks into the database before it is copied, a mix no replay repairs.

The pair is checked by reading it (its tables, then every message row); when it does not
read, the database is read alone, the run says the newest messages were left out, and the
file is read again when it or its WAL changes. The copy's size is not bounded by
`max_file_bytes` (a real `chat.db` is hundreds of MB to a few GB): nothing is held whole in
memory; what bounds it is the free space beside the index, checked before copying.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from engine.extractors import ExtractError, Extraction
from engine.extractors.base import CopyReader, copy_reader
from engine.index.archives import split as archive_member
from engine.index.discovery import Found
from engine.index.siblings import Resolved
from engine.settings import Settings
from engine.sources import SOURCE_TYPES

DatabaseReader = CopyReader  # (the copy, the original's path)

# The source types whose files are databases read from a copy of the file and its WAL
# (`SourceType.databases`), and how their readers read the copy (`FileReader.read_copy`).
DATABASE_READERS: dict[str, DatabaseReader] = {
    source.name: copy_reader(source) for source in SOURCE_TYPES if source.databases
}
WAL_SUFFIX = "-wal"
WAL_HEADER_BYTES = 32  # magic, version, page size, checkpoint sequence, salts, checksum
COPY_ATTEMPTS = 3
COPY_PREFIX = "memex-copy-"
# `.db`: a name no walk indexes, should the index's folder lie under a root.
COPY_NAME = "copy.db"
SPACE_MARGIN = 64 * 1024 * 1024  # left free beside the copy, for SQLite's -shm and the index
WAL_LEFT_OUT = (
    "the newest messages (in {name}-wal, not yet saved into {name} by Messages) could not be "
    "read; the rest was, and they are read once Messages saves them"
)


@dataclass(frozen=True)
class Copy:
    """A database copied with its WAL (None: it had none, or an empty one)."""

    database: Path
    wal: Path | None


def reads_from_copy(found: Found) -> bool:
    """Whether this file is a database read from a copy (not one inside an archive)."""
    return found.source_type in DATABASE_READERS and archive_member(found.path) is None


def wal_path(database: Path) -> Path:
    return database.with_name(database.name + WAL_SUFFIX)


def with_wal(found: Found, beside: Resolved) -> Resolved:
    """The file's identity for "unchanged?" extended by its WAL's size and mtime: Messages
    appends to `chat.db-wal` without changing `chat.db`'s mtime or size."""
    if not reads_from_copy(found):
        return beside
    try:
        stat = os.stat(wal_path(found.path))
    except OSError:
        return beside
    wal = f"wal:{stat.st_size}:{stat.st_mtime_ns}"
    return Resolved(beside.siblings, f"{beside.key}+{wal}" if beside.key else wal)


def copies_folder(settings: Settings) -> Path | None:
    """Where copies are made: the index's folder (a disk, where the system's temporary
    folder may be memory), else the system's temporary folder."""
    folder = settings.db_path.parent
    return folder if folder.is_dir() else None


def read_database(found: Found, settings: Settings) -> Extraction:
    """Read a database from a copy of it and its WAL; the copy is removed afterwards."""
    read = DATABASE_READERS[found.source_type]
    with tempfile.TemporaryDirectory(
        prefix=COPY_PREFIX, dir=copies_folder(settings), ignore_cleanup_errors=True
    ) as made:  # mkdtemp: mode 0700, only this user may read the copy
        folder = Path(made)
        _check_space(found.path, folder)
        copy = copy_with_wal(found.path, folder)
        return read_copy(read, copy, found.path)


def read_copy(read: DatabaseReader, copy: Copy, original: Path) -> Extraction:
    """The copy read with its WAL; else, when the pair does not read, the database alone."""
    try:
        return read(copy.database, original)
    except ExtractError:
        if copy.wal is None:
            raise
    for leftover in (copy.wal, Path(f"{copy.database}-shm")):
        leftover.unlink(missing_ok=True)
    result = read(copy.database, original)
    result.problems.append(WAL_LEFT_OUT.format(name=original.name))
    return result


def copy_with_wal(database: Path, folder: Path) -> Copy:
    """One moment of the database: its file, then its WAL, copied into `folder` (see the
    module's docstring for why in this order and when a copy stands)."""
    target = folder / COPY_NAME
    for _ in range(COPY_ATTEMPTS):
        header, before = wal_header(wal_path(database)), _stat(database)
        shutil.copyfile(database, target)
        wal = _copy_wal(database, target)
        copied = wal_header(wal) if wal is not None else b""
        if copied == header and (header or _stat(database) == before):
            return Copy(target, wal if header else None)
    raise ExtractError(
        f"{database.name} kept changing while it was copied to be read; "
        "it is read again on the next run"
    )


def wal_header(path: Path) -> bytes:
    """A WAL's header, or b"" when there is no WAL or it is empty (nothing to replay)."""
    try:
        with path.open("rb") as file:
            header = file.read(WAL_HEADER_BYTES)
    except FileNotFoundError:
        return b""
    return header if len(header) == WAL_HEADER_BYTES else b""


def _copy_wal(database: Path, target: Path) -> Path | None:
    wal = wal_path(target)
    try:
        shutil.copyfile(wal_path(database), wal)
    except FileNotFoundError:
        wal.unlink(missing_ok=True)  # one an earlier attempt copied
        return None
    return wal


def _stat(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns


def _check_space(database: Path, folder: Path) -> None:
    """ExtractError, saying how much is needed, when the copy would not fit."""
    needed = sum(_size(p) for p in (database, wal_path(database))) + SPACE_MARGIN
    free = shutil.disk_usage(folder).free
    if free < needed:
        raise ExtractError(
            f"{database.name} is read from a copy, which needs {_megabytes(needed)} free in "
            f"{folder.parent}, and only {_megabytes(free)} is; free some space there"
        )


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _megabytes(size: int) -> str:
    return f"{size / 1024 / 1024:,.0f} MB"
