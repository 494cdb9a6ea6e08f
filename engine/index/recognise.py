"""Recognition by content: the source type of a file no route claims, from its name, its
first few KB and its siblings (`engine.extractors.recognisers`), and the folders a walk of a
home folder never enters (`exclude_folders`).

Reading costs I/O, so a file is read only when its name ends as some recogniser's files do
(`SUFFIXES`), it is no larger than `max_file_bytes`, and its type is not already known from
an earlier run with the same mtime and size; then at most `HEAD_BYTES` of it are read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

import apsw

from engine.extractors.recognisers import CONTENT_TYPES, SUFFIXES
from engine.extractors.sniffing import HEAD_BYTES, Recogniser
from engine.settings import Settings
from engine.store.sql import state as state_sql

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

    def add(self, other: Skipped) -> None:
        self.unknown += other.unknown
        self.too_large += other.too_large
        self.ignored += other.ignored
        self.excluded += other.excluded
        for rule, count in other.excluded_names.items():
            self.excluded_names[rule] = self.excluded_names.get(rule, 0) + count


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
    hundreds of day files ask about the same `../users.json`)."""

    def __init__(self) -> None:
        self._seen: dict[str, bool] = {}

    def check(self, folder: Path) -> Callable[[str], bool]:
        def exists(relative: str) -> bool:
            target = os.path.normpath(folder / relative)
            if target not in self._seen:
                self._seen[target] = os.path.isfile(target)
            return self._seen[target]

        return exists


def recognise_file(
    path: Path, size: int, pairs: Sequence[tuple[str, Recogniser]], siblings: SiblingCache
) -> str | None:
    """The first of these types whose recogniser claims the file, or None."""
    head = read_head(path) if any(r.reads_head for _, r in pairs) else b""
    exists = siblings.check(path.parent)
    for source_type, recogniser in pairs:
        if recogniser.test(path.name, head, exists):
            return source_type
    return None


@dataclass
class Sniffer:
    """Recognition during one walk: the settings it obeys, what earlier runs found, and the
    counts of what it left out."""

    settings: Settings
    known: KnownTypes = field(default_factory=dict)
    skipped: Skipped = field(default_factory=Skipped)
    siblings: SiblingCache = field(default_factory=SiblingCache)

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

    def source_type(self, path: Path, mtime: float, size: int) -> str | None:
        """The type of a file no route claims, by its content; None (counted) if none."""
        pairs = candidates(path.name, self.settings.desktop.disabled_types) if self.enabled else []
        if not pairs:
            self.skipped.unknown += 1
            return None
        if size > self.settings.max_file_bytes:
            self.skipped.too_large += 1
            return None
        known = self.known.get(str(path))
        if known is not None and known[:2] == (mtime, size) and _among(known[2], pairs):
            return known[2]
        found = recognise_file(path, size, pairs, self.siblings)
        if found is None:
            self.skipped.unknown += 1
        return found
