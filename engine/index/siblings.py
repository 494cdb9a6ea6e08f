"""The files a reader reads beside the one it is given, found and read for it by the indexer.

Extractors are pure: bytes, path and `Siblings` in, drafts out. What a reader needs from the
files beside the one it reads (a Slack export's `users.json`, `dms.json` and `mpims.json`) is
declared on its source type (`SourceType.siblings`, relative to the file's folder) and read
here, each sibling file once per run. A digest of what was read is the file's dependency key
(`index_state.depends`): a file whose mtime and size are unchanged is read again when its key
changed, so a renamed user reaches every day file of the export, and unchanged siblings cost
one read per run and nothing else.

A sibling is read like an indexed file: a regular file only, at most `max_file_bytes`, inside
the roots (a symlink as `engine.index.files` allows). One that cannot be read is absent: the
reader falls back (ids for names), and the file is read again once it can be.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import apsw

from engine.extractors import NO_SIBLINGS, ExtractError, Siblings
from engine.index.archives import Archives
from engine.index.files import is_inside_roots, link_allowed
from engine.index.routes import Found, classify
from engine.settings import Settings
from engine.sources import SOURCE_TYPES, source_type
from engine.store.sql import state as state_sql
from engine.text import is_clean

# The file names any source type reads beside its files ("users.json"): what the watcher hears.
SIBLING_NAMES = frozenset(PurePosixPath(n).name for t in SOURCE_TYPES for n in t.siblings)


@dataclass(frozen=True)
class Resolved:
    """A file's siblings as read this run, and their key (None: it read none)."""

    siblings: Siblings
    key: str | None


NONE = Resolved(NO_SIBLINGS, None)


def sibling_path(path: Path, name: str) -> Path:
    """Where a declared sibling of `path` lies ("../users.json": in the folder above)."""
    return Path(os.path.normpath(path.parent / name))


def dependency_key(files: Mapping[str, bytes]) -> str | None:
    """What the siblings held, as one digest; None when there were none."""
    if not files:
        return None
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return digest.hexdigest()[:32]


class SiblingFiles:
    """Reads declared siblings for one run: each sibling file once, each set of them once, so
    every day file of an export shares one `Siblings` (and what its reader parsed of it)."""

    def __init__(self, settings: Settings, archives: Archives | None = None) -> None:
        self.settings = settings
        self.archives = archives or Archives()  # a member's siblings lie in its archive
        self._data: dict[Path, bytes | None] = {}
        self._sets: dict[tuple[Path, ...], Resolved] = {}

    def of(self, found: Found) -> Resolved:
        """The siblings the reader of this file needs, and their key."""
        declared = source_type(found.source_type)
        names = declared.siblings if declared else ()
        if not names:
            return NONE
        paths = tuple(sibling_path(found.path, name) for name in names)
        if paths not in self._sets:
            read = {name: self._read(path) for name, path in zip(names, paths, strict=True)}
            files = {name: data for name, data in read.items() if data is not None}
            self._sets[paths] = Resolved(Siblings(files), dependency_key(files))
        return self._sets[paths]

    def _read(self, path: Path) -> bytes | None:
        if path not in self._data:
            self._data[path] = self._read_one(path)
        return self._data[path]

    def _read_one(self, path: Path) -> bytes | None:
        settings = self.settings
        if not is_inside_roots(path.absolute(), settings) or not link_allowed(path, settings):
            return None
        try:
            return self.archives.read_file(path, settings.max_file_bytes)
        except (OSError, ExtractError):  # missing, unreadable, special or too large: absent
            return None


def dependents(conn: apsw.Connection, settings: Settings, path: Path) -> list[Found]:
    """The indexed files that read `path` as a sibling (a changed or removed users.json: the
    export's day files), as they are on disk now."""
    if path.name not in SIBLING_NAMES:
        return []
    target = path.parent.resolve() / path.name if path.parent.exists() else path.absolute()
    found: list[Found] = []
    for known in _candidates(conn, target):
        item = classify(Path(known), settings)
        declared = source_type(item.source_type) if item is not None else None
        if item is None or item.size < 0 or declared is None:
            continue
        if target in {sibling_path(item.path, name) for name in declared.siblings}:
            found.append(item)
    return found


def _candidates(conn: apsw.Connection, target: Path) -> list[str]:
    """Indexed files under every folder whose files may name `target` as a sibling."""
    folders: set[Path] = set()
    for source in SOURCE_TYPES:
        for name in source.siblings:
            parts = PurePosixPath(name).parts
            if parts[-1] != target.name:
                continue
            downs = len([p for p in parts[:-1] if p != ".."])  # folders named below the ups
            folders.add(target.parents[downs] if downs < len(target.parents) else target.parent)
    known: list[str] = []
    for folder in sorted(folders):
        base = str(folder)
        if not is_clean(base):
            continue
        prefix = base.rstrip(os.sep) + os.sep
        rows = conn.execute(state_sql.known_under_sql(), (base, len(prefix), prefix))
        known += [r[0] for r in rows]
    return known
