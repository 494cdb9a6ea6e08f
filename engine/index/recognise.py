"""Recognition by content: the source type of a file no route claims, from its name, its
first few KB and its siblings (`engine.extractors.recognisers`), and the folders a walk of a
home folder never enters (`exclude_folders`).

Reading costs I/O, so a file is read only when its name ends as some recogniser's files do
(`SUFFIXES`), and neither its type nor a verdict that
it is of no known format (`Verdict`) is known from an earlier run with the same mtime and
size; then at most `HEAD_BYTES` of it are read. A verdict also keeps the folders whose
listing the recognisers consulted (a Slack day file without `users.json` beside its channel
folder), so a file arriving beside it gets the file read again.

Recognising is inside the per-file boundary: a recogniser whose check raises on a file's
bytes says no for that file (the others are still asked), and the file gets one problem in
words (`Sniffer.problems`, told as an error of the run) and no verdict, so it is checked
again, and told again, on the next run. No file's bytes stop a walk.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

import apsw

from engine.extractors.recognisers import CONTENT_TYPES, SUFFIXES
from engine.extractors.sniffing import HEAD_BYTES, Recogniser, SiblingCheck
from engine.index import archives as archive_files
from engine.index.archives import Archives
from engine.settings import Settings
from engine.sources import READ_DATABASES
from engine.sources import source_type as declared_type
from engine.store import db
from engine.store.sql import state as state_sql
from engine.store.sql import verdicts as verdicts_sql

# path → (mtime, size, source type) of the files an earlier run indexed
KnownTypes = Mapping[str, tuple[float, int, str]]
VIRTUALENV_MARK = "pyvenv.cfg"  # a virtualenv's root holds it, whatever the folder's name


@dataclass
class Skipped:
    """What a walk left out, and why, as counts."""

    unknown: int = 0  # files no route or recogniser claims
    too_large: int = 0  # files over max_file_bytes that only content could have claimed
    ignored: int = 0  # files a route ignores (`source_type = "ignore"`, `enabled = false`)
    excluded: int = 0  # folders not entered (`exclude_folders`, virtualenvs)
    excluded_names: dict[str, int] = field(default_factory=dict)  # the rule → folders
    read_files: int = 0  # files whose head was read to recognise them
    read_bytes: int = 0  # bytes read to recognise files

    def add(self, other: Skipped) -> None:
        self.unknown += other.unknown
        self.read_files += other.read_files
        self.read_bytes += other.read_bytes
        self.too_large += other.too_large
        self.ignored += other.ignored
        self.excluded += other.excluded
        for rule, count in other.excluded_names.items():
            self.excluded_names[rule] = self.excluded_names.get(rule, 0) + count


@dataclass(frozen=True)
class Verdict:
    """A file the recognisers read and did not claim, as it was then: unchanged, and with
    the folders they consulted unchanged, it is not read again."""

    path: str
    mtime: float
    size: int
    folders: tuple[tuple[str, float], ...] = ()  # (folder, its mtime) the check looked in


def verdict_signature(settings: Settings) -> str:
    """What a verdict holds under: the recognisers (their types, names and tests' code) and
    the types they may claim; a Memex that recognises anything more reads the files again."""
    h = hashlib.sha256(str(HEAD_BYTES).encode())
    for name, recogniser in CONTENT_TYPES:
        code = getattr(recogniser.test, "__code__", None)
        h.update(repr((name, recogniser.suffixes, recogniser.reads_head)).encode())
        h.update(code.co_code if code is not None else repr(recogniser.test).encode())
    disabled = sorted(settings.desktop.disabled_types)
    h.update(json.dumps([disabled, settings.discovery.recognise_by_content]).encode())
    return h.hexdigest()[:16]


def load_verdicts(conn: apsw.Connection, settings: Settings) -> dict[str, Verdict]:
    """The verdicts stored under this Memex's recognisers; none when there is no table."""
    if conn.execute(verdicts_sql.exists_sql()).fetchone() is None:
        return {}
    rows = conn.execute(verdicts_sql.select_sql(), (verdict_signature(settings),))
    return {
        path: Verdict(path, mtime, size, tuple((f, m) for f, m in json.loads(folders)))
        for path, mtime, size, folders in rows
    }


def save_verdicts(
    conn: apsw.Connection,
    settings: Settings,
    before: Mapping[str, Verdict],
    seen: Iterable[Verdict],
    gone: Iterable[str] = (),
) -> int:
    """Store what changed since `before`: the verdicts new or changed in this walk and the
    paths `gone` (a complete walk's files no longer unknown or no longer there). Returns
    how many rows were written or deleted; nothing is written when nothing changed."""
    fresh = [v for v in seen if before.get(v.path) != v]
    gone = [path for path in gone if path in before]
    if not fresh and not gone:
        return 0
    signature = verdict_signature(settings)
    with db.transaction(conn):
        conn.execute(verdicts_sql.create_table_sql())
        conn.execute(verdicts_sql.delete_other_signatures_sql(), (signature,))
        conn.executemany(verdicts_sql.delete_sql(), [(path,) for path in gone])
        conn.executemany(
            verdicts_sql.upsert_sql(),
            [(v.path, v.mtime, v.size, json.dumps(v.folders), signature) for v in fresh],
        )
    return len(fresh) + len(gone)


def known_types(conn: apsw.Connection) -> dict[str, tuple[float, int, str]]:
    """The mtime, size and type of every indexed file, as the last run stored them."""
    rows = conn.execute(state_sql.files_with_stat_sql())
    return {path: (mtime, size, kind) for path, mtime, size, kind in rows}


def exclusion(relative: str, folder: Path, patterns: Sequence[str]) -> str:
    """The rule that keeps a walk out of a folder (root-relative POSIX path), or "".

    A pattern without `/` matches the folder's name (`node_modules`, `*.app`); one with `/`
    the last parts of its path (`Library/Caches`). A folder holding `pyvenv.cfg` is a
    virtualenv.
    """
    parts = relative.split("/")
    for pattern in patterns:
        wanted = pattern.strip("/").split("/")
        tail = parts[-len(wanted) :]
        if len(tail) == len(wanted) and all(map(fnmatchcase, tail, wanted)):
            return pattern
    if (folder / VIRTUALENV_MARK).is_file():
        return "virtualenv"
    return ""


def candidates(name: str, disabled: Sequence[str] = ()) -> list[tuple[str, Recogniser]]:
    """The (source type, recogniser) pairs worth asking about a file of this name."""
    lower = name.lower()
    if not lower.endswith(SUFFIXES):
        return []
    return [
        (source_type, recogniser)
        for source_type, recogniser in CONTENT_TYPES
        if lower.endswith(recogniser.suffixes) and source_type not in disabled
    ]


def read_from_copy(path: Path) -> bool:
    """Whether a file is a database its type reads from a copy, with no size limit
    (`SourceType.databases`; one inside an archive is read as any member is)."""
    return path.name.lower() in READ_DATABASES and archive_files.split(path) is None


def _among(source_type: str, pairs: Sequence[tuple[str, Recogniser]]) -> bool:
    return any(source_type == name for name, _ in pairs)


def read_head(path: Path) -> bytes:
    """At most HEAD_BYTES of a regular file's start; b"" when it cannot be read."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return b""
    try:
        return os.read(fd, HEAD_BYTES)
    except OSError:
        return b""
    finally:
        os.close(fd)


class SiblingCache:
    """Whether files exist beside a file, each checked once per walk (a Slack export's
    hundreds of day files ask about the same `../users.json`), and the mtimes of the
    folders such checks looked in."""

    def __init__(self, archives: Archives | None = None) -> None:
        self._seen: dict[str, bool] = {}
        self._mtimes: dict[str, float] = {}
        self.archives = archives or Archives()

    def check(self, folder: Path, consulted: set[str] | None = None) -> Callable[[str], bool]:
        """The check of files beside a file in `folder`; the folders it looks in are added
        to `consulted`."""

        def exists(relative: str) -> bool:
            target = os.path.normpath(folder / relative)
            if consulted is not None:
                consulted.add(os.path.dirname(target))
            if target not in self._seen:
                inside = archive_files.split(target) is not None
                self._seen[target] = (
                    self.archives.exists(target) if inside else os.path.isfile(target)
                )
            return self._seen[target]

        return exists

    def folder_mtime(self, folder: str) -> float:
        """A folder's mtime (changed by a file added or removed in it); -1 when gone."""
        if folder not in self._mtimes:
            try:
                self._mtimes[folder] = os.stat(folder).st_mtime
            except OSError:
                self._mtimes[folder] = -1.0
        return self._mtimes[folder]

    def unchanged(self, folders: Iterable[tuple[str, float]]) -> bool:
        return all(self.folder_mtime(folder) == mtime for folder, mtime in folders)


@dataclass(frozen=True)
class Recognition:
    """What the recognisers made of one file: the type that claims it (None: none does),
    the bytes read, the folders (with their mtimes) whose listing they consulted, and the
    types whose check failed on it (each taken as a no)."""

    found: str | None
    read: int
    folders: tuple[tuple[str, float], ...] = ()
    failed: tuple[str, ...] = ()


def _head(path: Path, pairs: Sequence[tuple[str, Recogniser]], siblings: SiblingCache) -> bytes:
    if not any(r.reads_head for _, r in pairs):
        return b""
    inside = archive_files.split(path) is not None
    return siblings.archives.head(path, HEAD_BYTES) if inside else read_head(path)


def _claims(recogniser: Recogniser, name: str, head: bytes, exists: SiblingCheck) -> bool | None:
    """Whether a recogniser claims the file; None when its check raised on these bytes."""
    try:
        return bool(recogniser.test(name, head, exists))
    except Exception:  # the per-file boundary: one check's fault is a "no" for this file only
        return None


def recognise_file(
    path: Path, pairs: Sequence[tuple[str, Recogniser]], siblings: SiblingCache
) -> Recognition:
    """The first of these types whose recogniser claims the file, asked in order; a
    recogniser whose check raises says no (named in `failed`) and the others are asked."""
    head = _head(path, pairs, siblings)
    consulted: set[str] = set()
    exists = siblings.check(path.parent, consulted)
    found: str | None = None
    failed: list[str] = []
    for kind, recogniser in pairs:
        claims = _claims(recogniser, path.name, head, exists)
        if claims is None:
            failed.append(kind)
        elif claims:
            found = kind
            break
    folders = tuple((folder, siblings.folder_mtime(folder)) for folder in sorted(consulted))
    return Recognition(found, len(head), folders, tuple(failed))


def check_failed(failed: Sequence[str], found: str | None) -> str:
    """A file some recognisers' checks failed on, in words: which, and what became of it."""
    *others, last = dict.fromkeys(_label(kind) for kind in failed) or ["any format"]
    labels = f"{', '.join(others)} or {last}" if others else last
    outcome = f"it was read as {_label(found)}" if found else "it was left out"
    return f"could not be checked for {labels} (Memex failed on its first bytes); {outcome}"


def _label(kind: str) -> str:
    declared = declared_type(kind)
    return declared.label if declared else kind


@dataclass
class Sniffer:
    """Recognition during one walk: the settings it obeys, what earlier runs found, and the
    counts of what it left out."""

    settings: Settings
    known: KnownTypes = field(default_factory=dict)
    unknown: Mapping[str, Verdict] = field(default_factory=dict)  # earlier runs' verdicts
    skipped: Skipped = field(default_factory=Skipped)
    siblings: SiblingCache = field(default_factory=SiblingCache)
    verdicts: list[Verdict] = field(default_factory=list)  # this walk's, reused or new
    problems: list[tuple[str, str]] = field(default_factory=list)  # archives, members refused
    unreadable_archives: list[Path] = field(default_factory=list)  # none of it read
    _indexed_archives: set[str] | None = field(default=None, repr=False)

    @property
    def enabled(self) -> bool:
        return self.settings.discovery.recognise_by_content

    def excluded(self, relative: str, folder: Path) -> bool:
        """Whether a walk stays out of this folder (counted when it does)."""
        rule = exclusion(relative, folder, self.settings.discovery.exclude_folders)
        if rule:
            self.count_excluded(rule)
        return bool(rule)

    def count_excluded(self, rule: str) -> None:
        self.skipped.excluded += 1
        self.skipped.excluded_names[rule] = self.skipped.excluded_names.get(rule, 0) + 1

    def known_unknown(self, path: Path, stat: os.stat_result) -> bool:
        """Whether an archive's verdict holds (unchanged since it was found to hold no
        export): counted unknown, kept for the next run."""
        verdict = self.unknown.get(str(path))
        if verdict is None or (verdict.mtime, verdict.size) != (stat.st_mtime, stat.st_size):
            return False
        self.skipped.unknown += 1
        self.verdicts.append(verdict)
        return True

    def unknown_archive(self, path: Path, stat: os.stat_result) -> None:
        """An archive that holds no export: its verdict, counted unknown."""
        self.skipped.unknown += 1
        self.verdicts.append(Verdict(str(path), stat.st_mtime, stat.st_size))

    def holds_indexed(self, archive: Path) -> bool:
        """Whether members of this archive are indexed (an earlier run's)."""
        if self._indexed_archives is None:
            marker = f"{archive_files.SEPARATOR}{os.sep}"
            self._indexed_archives = {p.split(marker, 1)[0] for p in self.known if marker in p}
        return str(archive) in self._indexed_archives

    def worth_reading(self, name: str) -> bool:
        """Whether any recogniser reads files of this name (else: unknown, unread)."""
        return self.enabled and name.lower().endswith(SUFFIXES)

    def source_type(self, path: Path, mtime: float, size: int) -> str | None:
        """The type of a file no route claims, by its content; None (counted) if none."""
        pairs = candidates(path.name, self.settings.desktop.disabled_types) if self.enabled else []
        if not pairs:
            self.skipped.unknown += 1
            return None
        # A file over max_file_bytes is still known by its head, so that an export too large
        # to index (a 2 GB Takeout mbox) is one error of the run that says so, not silence;
        # a database read from a copy (`chat.db`) has no such limit.
        over = size > self.settings.max_file_bytes
        self.skipped.too_large += over and not read_from_copy(path)
        known = self.known.get(str(path))
        if known is not None and known[:2] == (mtime, size) and _among(known[2], pairs):
            return known[2]
        verdict = self.unknown.get(str(path))
        if (
            verdict is None
            or (verdict.mtime, verdict.size) != (mtime, size)
            or not (self.siblings.unchanged(verdict.folders))
        ):
            recognition = self.recognise(path, pairs)
            if recognition.found is not None:
                return recognition.found
            if recognition.failed:  # no verdict: checked, and told, again on every run
                self.skipped.unknown += 1
                return None
            verdict = Verdict(str(path), mtime, size, recognition.folders)
        self.skipped.unknown += 1
        self.verdicts.append(verdict)
        return None

    def recognise(self, path: Path, pairs: Sequence[tuple[str, Recogniser]]) -> Recognition:
        """Read the file's head and ask the recognisers; whatever fails on its bytes is one
        problem of this file (`problems`), never the walk's."""
        try:
            recognition = recognise_file(path, pairs, self.siblings)
        except Exception:  # the head's read or a sibling check: none of the checks held
            recognition = Recognition(None, 0, failed=tuple(kind for kind, _ in pairs))
        self.skipped.read_files += 1
        self.skipped.read_bytes += recognition.read
        if recognition.failed:
            self.problems.append((str(path), check_failed(recognition.failed, recognition.found)))
        return recognition
