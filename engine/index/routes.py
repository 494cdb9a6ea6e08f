"""Routes map path patterns, relative to a root, to source types; discovery walks the roots."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from engine.index.files import is_under, link_allowed
from engine.settings import Route, Settings
from engine.sources import SOURCE_TYPES

# Each source type's default routes (engine/sources.py), in declaration order.
DEFAULT_ROUTES: tuple[Route, ...] = tuple(
    Route(pattern, source.name) for source in SOURCE_TYPES for pattern in source.routes
)

IGNORED_PARTS = {
    ".git",
    ".obsidian",
    ".trash",
    "node_modules",
    "__pycache__",
    ".memex",
    "lost+found",  # a file system's own folder at a mount point, readable by root only
}
IGNORED_SUFFIXES = (
    ".tmp",
    ".swp",
    ".swx",
    ".part",
    "~",
    ".bak",
    ".crdownload",
    ".db",
    ".db-wal",
    ".db-shm",
    ".db-journal",
)


@lru_cache(maxsize=512)
def _compile(pattern: str) -> re.Pattern[str]:
    """Glob to regex: `**/` spans any folders (or none), `*` and `?` stay inside one name."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def effective_routes(settings: Settings) -> tuple[Route, ...]:
    """Config routes first (they win), then the defaults not disabled by the config."""
    user = settings.routes
    disabled_patterns = {r.pattern for r in user if not r.enabled}
    disabled_types = set(settings.desktop.disabled_types)
    routes = [r for r in user if r.enabled and r.source_type]
    routes += [r for r in DEFAULT_ROUTES if r.pattern not in disabled_patterns]
    return tuple(r for r in routes if r.source_type not in disabled_types)


def route_for(relative: str, routes: Sequence[Route]) -> str | None:
    """The source type of a root-relative POSIX path, or None if no route matches."""
    if is_ignored(relative):
        return None
    for route in routes:
        if _compile(route.pattern).match(relative):
            return route.source_type
    return None


def is_ignored(relative: str) -> bool:
    parts = relative.split("/")
    name = parts[-1]
    return (
        any(p in IGNORED_PARTS for p in parts)
        or name.startswith((".#", "~$"))
        or (name.startswith(".") and name.endswith(".swp"))
        or name.endswith(IGNORED_SUFFIXES)
    )


@dataclass(frozen=True)
class Found:
    """A file on disk that a route claims."""

    path: Path
    root: Path
    relative: str
    source_type: str
    mtime: float
    size: int


@dataclass(frozen=True)
class UnlistedRoot:
    """A root the walk could not list, and why: nothing indexed under it may be deleted."""

    root: Path
    reason: str


@dataclass(frozen=True)
class Discovery:
    """What a walk of the roots found, and what it could not see.

    A file missing from `found` is gone only where the walk really looked: not under a root
    that is missing or unreadable (a typo, an unmounted drive), nor under a folder it could
    not list (chmod 000). Files outside every root are gone only when every root was listed.
    """

    found: tuple[Found, ...]
    listed_roots: tuple[Path, ...] = ()
    unlisted_roots: tuple[UnlistedRoot, ...] = ()
    unreadable_folders: tuple[Path, ...] = ()
    empty_roots: tuple[Path, ...] = ()  # listed, but with nothing at all in them

    def may_delete(self, known: str) -> bool:
        """Whether an indexed file the walk did not see is gone, rather than unseen."""
        if any(is_under(known, folder) for folder in self.unreadable_folders):
            return False
        if any(is_under(known, r.root) for r in self.unlisted_roots):
            return False
        if any(is_under(known, root) for root in self.listed_roots):
            return True
        return not self.unlisted_roots

    def unseen(
        self,
        missing: Sequence[str],
        *,
        keep_under_empty_roots: bool,
        about: Sequence[Path] | None = None,
    ) -> tuple[list[str], list[tuple[str, str]]]:
        """Of the indexed files the walk did not see: those that are gone (to delete), and
        one (path, message) error per root or folder it could not see.

        `keep_under_empty_roots`: a root with nothing at all in it is what an unmounted
        drive's mount point looks like, so a reconcile keeps what was indexed under it.
        `about`: report only the roots and folders at, above or under these paths.
        """
        empty = self.empty_roots if keep_under_empty_roots else ()
        gone = [k for k in missing if self.may_delete(k) and not _under_any(k, empty)]
        errors = [
            (str(r.root), f"root {r.reason}; nothing indexed under it was deleted")
            for r in self.unlisted_roots
        ]
        for folder in self.unreadable_folders:
            kept = sum(is_under(k, folder) for k in missing)
            errors.append((str(folder), _unreadable_folder_message(kept)))
        for root in empty:
            if kept := sum(is_under(k, root) for k in missing):
                errors.append((str(root), _empty_root_message(root, kept)))
        if about is not None:
            errors = [e for e in errors if any(_related(Path(e[0]), p) for p in about)]
        return gone, errors


def _unreadable_folder_message(kept: int) -> str:
    return (
        "folder cannot be read, so nothing in it is indexed; "
        f"the {kept} file(s) indexed under it were kept"
    )


def _empty_root_message(root: Path, kept: int) -> str:
    return (
        f"root is empty, but {kept} file(s) were indexed under it (is the drive mounted?); "
        f"they were kept: 'memex reindex {root}' drops them"
    )


def _under_any(path: str, folders: Sequence[Path]) -> bool:
    return any(is_under(path, folder) for folder in folders)


def _related(one: Path, other: Path) -> bool:
    """Whether one of two paths lies at or under the other."""
    return is_under(str(one), other) or is_under(str(other), one)


def unlisted_roots_at(path: Path, settings: Settings) -> tuple[UnlistedRoot, ...]:
    """The roots at, above or under a path that no longer exists which are gone themselves
    (or empty, as a mount point without its drive): the path was not deleted, its root went
    missing."""
    target = path.absolute()
    related = [r for r in settings.roots if _related(target, r)]
    return tuple(UnlistedRoot(r, why) for r in related if (why := _absent_reason(r)))


def _absent_reason(root: Path) -> str:
    """Why a root is not there to delete from (missing, unlistable, empty), or ""."""
    if not root.is_dir():
        return _unlisted_reason(root)
    try:
        with os.scandir(root) as entries:
            empty = next(entries, None) is None
    except OSError as exc:
        return f"cannot be listed ({exc.strerror or type(exc).__name__})"
    return "is empty (is the drive mounted?)" if empty else ""


def root_errors(errors: Sequence[tuple[str, str]], settings: Settings) -> list[str]:
    """A run's errors about a root itself (missing, unlistable, empty), as `root: message`."""
    roots = {str(root) for root in settings.roots}
    return [f"{path}: {message}" for path, message in errors if path in roots]


@dataclass(frozen=True)
class RootWalk:
    """One root's routed files, its unreadable folders, and why it could not be listed."""

    found: tuple[Found, ...]
    unreadable: tuple[Path, ...]
    problem: str = ""
    empty: bool = False


def _unlisted_reason(root: Path) -> str:
    if not root.exists():
        return "does not exist (a typo, or a drive that is not mounted?)"
    return "is not a folder"


def walk_root(root: Path, settings: Settings) -> RootWalk:
    """Every routed file under one root, in a stable order; folders it could not list."""
    if not root.is_dir():
        return RootWalk((), (), _unlisted_reason(root))
    routes = effective_routes(settings)
    failed: list[OSError] = []
    found: list[Found] = []
    entries = 0
    for folder, dirs, files in os.walk(root, onerror=failed.append):
        entries += len(dirs) + len(files)
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_PARTS)
        found += _routed(Path(folder), sorted(files), root, routes, settings)
    unreadable = tuple(Path(str(e.filename)) for e in failed if e.filename is not None)
    if root in unreadable or (failed and not unreadable):
        reason = failed[0].strerror or type(failed[0]).__name__
        return RootWalk((), (), f"cannot be listed ({reason})")
    return RootWalk(tuple(found), unreadable, empty=entries == 0)


def _routed(
    folder: Path, names: Sequence[str], root: Path, routes: Sequence[Route], settings: Settings
) -> Iterator[Found]:
    for name in names:
        path = folder / name
        relative = path.relative_to(root).as_posix()
        source_type = route_for(relative, routes)
        if source_type is None or not link_allowed(path, settings):
            continue
        try:
            stat = path.stat()
        except OSError:
            continue
        yield Found(path, root, relative, source_type, stat.st_mtime, stat.st_size)


def scan(settings: Settings) -> Discovery:
    """Walk every root: the routed files, and the roots and folders that could not be listed."""
    found: list[Found] = []
    listed: list[Path] = []
    unlisted: list[UnlistedRoot] = []
    unreadable: list[Path] = []
    empty: list[Path] = []
    for root in settings.roots:
        walk = walk_root(root, settings)
        if walk.problem:
            unlisted.append(UnlistedRoot(root, walk.problem))
            continue
        listed.append(root)
        found += walk.found
        unreadable += walk.unreadable
        if walk.empty:
            empty.append(root)
    return Discovery(tuple(found), tuple(listed), tuple(unlisted), tuple(unreadable), tuple(empty))


def discover(settings: Settings) -> Iterator[Found]:
    """Every routed file under every root, in a stable order."""
    yield from scan(settings).found


def classify(path: Path, settings: Settings) -> Found | None:
    """The route of one path (for the watcher), or None if unrouted."""
    routes = effective_routes(settings)
    # The folder is resolved, not the file: a symlinked file is indexed where the link is,
    # as the walk of the roots sees it.
    located = path.parent.resolve() / path.name if path.parent.exists() else path.absolute()
    for root in settings.roots:
        try:
            relative = located.relative_to(root).as_posix()
        except ValueError:
            continue
        source_type = route_for(relative, routes)
        if source_type is None or not link_allowed(located, settings):
            return None
        try:
            stat = located.stat()
        except OSError:
            return Found(located, root, relative, source_type, 0.0, -1)
        return Found(located, root, relative, source_type, stat.st_mtime, stat.st_size)
    return None
