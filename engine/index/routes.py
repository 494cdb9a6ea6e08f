"""Routes map path patterns, relative to a root, to source types; discovery walks the roots.

A file takes the type of the first route that matches it (the config's routes first, then
each source type's defaults); a route to `ignore` (or a disabled pattern) keeps it out. A
file no route matches is recognised by its content (`engine.index.recognise`), or skipped.
"""

from __future__ import annotations

import os
import re
import stat as stat_mode
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engine.index import archives
from engine.index.files import OwnPaths, is_under, link_allowed
from engine.index.projects import CodeProjects, ProjectDocs
from engine.index.recognise import KnownTypes, Skipped, Sniffer, Verdict
from engine.settings import Route, Settings
from engine.sources import SOURCE_TYPES

# Each source type's default routes (engine/sources.py), in declaration order.
DEFAULT_ROUTES: tuple[Route, ...] = tuple(
    Route(pattern, source.name) for source in SOURCE_TYPES for pattern in source.routes
)

IGNORE = "ignore"  # a route's source type that keeps the files it matches out of the index
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
# The databases that are someone's data, read as a source type reads them (never an index).
READ_DATABASES = frozenset({"chat.db"})  # Messages (iMessage)


def _glob(pattern: str) -> str:
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
    return "".join(out)


def effective_routes(settings: Settings) -> tuple[Route, ...]:
    """Config routes first (they win), then the defaults not disabled by the config; last,
    each disabled pattern as a route to `ignore`, so that what it matched is not
    recognised by content instead."""
    user = settings.routes
    disabled_patterns = {r.pattern for r in user if not r.enabled}
    disabled_types = set(settings.desktop.disabled_types)
    routes = [r for r in user if r.enabled and r.source_type]
    routes += [r for r in DEFAULT_ROUTES if r.pattern not in disabled_patterns]
    routes += [Route(pattern, IGNORE) for pattern in sorted(disabled_patterns)]
    return tuple(r for r in routes if r.source_type not in disabled_types)


Matcher = Callable[[str], "str | None"]


def route_matcher(routes: Sequence[Route]) -> Matcher:
    """`route_match` over these routes, as one regex: the alternatives are tried in route
    order, so the first route that matches a path names its type."""
    if not routes:
        return lambda relative: IGNORE if is_ignored(relative) else None
    combined = re.compile(
        "|".join(f"(?P<r{n}>{_glob(r.pattern)}\\Z)" for n, r in enumerate(routes))
    )
    types = {f"r{n}": r.source_type for n, r in enumerate(routes)}
    endings = name_endings(routes)

    def match(relative: str) -> str | None:
        if is_ignored(relative):
            return IGNORE
        if endings is not None and not relative.endswith(endings):
            return None  # no route's last part can match this name: no regex to run
        found = combined.match(relative)
        return types[found.lastgroup] if found and found.lastgroup else None

    return match


def name_endings(routes: Sequence[Route]) -> tuple[str, ...] | None:
    """What every name a route matches ends with (`*.json` → `.json`), so that a name
    ending otherwise needs no regex; None when a route's last part has no fixed ending."""
    endings = []
    for route in routes:
        last = route.pattern.rsplit("/", 1)[-1]
        tail = re.split(r"[*?\[\]]", last)[-1]
        if not tail:
            return None
        endings.append(tail)
    return tuple(sorted(set(endings)))


def route_match(relative: str, routes: Sequence[Route]) -> str | None:
    """The source type of the first route matching a root-relative POSIX path (`IGNORE`
    for an ignored one), or None if no route matches."""
    return route_matcher(routes)(relative)


def route_for(relative: str, routes: Sequence[Route]) -> str | None:
    """The source type of a root-relative POSIX path, or None if no route takes it."""
    source_type = route_match(relative, routes)
    return None if source_type == IGNORE else source_type


def is_ignored(relative: str) -> bool:
    parts = relative.split("/")
    name = parts[-1]
    return (
        any(p in IGNORED_PARTS for p in parts)
        or name.startswith((".#", "~$"))
        or (name.startswith(".") and name.endswith(".swp"))
        or (name.endswith(IGNORED_SUFFIXES) and name.lower() not in READ_DATABASES)
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
    recognised: bool = False  # found by its content, not by a route


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
    skipped: Skipped = field(default_factory=Skipped)  # what the walk left out, and why
    verdicts: tuple[Verdict, ...] = ()  # the files it read, or knew, to be of no known format
    problems: tuple[tuple[str, str], ...] = ()  # (path, message): archives and members refused
    unreadable_archives: tuple[Path, ...] = ()  # archives none of which could be read
    project_docs: ProjectDocs = ProjectDocs()  # code projects' Markdown left out

    def may_delete(self, known: str) -> bool:
        """Whether an indexed file the walk did not see is gone, rather than unseen."""
        if any(is_under(known, folder) for folder in self.unreadable_folders):
            return False
        if any(known.startswith(f"{a}{archives.SEPARATOR}") for a in self.unreadable_archives):
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


def walk_root(
    root: Path,
    settings: Settings,
    sniffer: Sniffer | None = None,
    projects: CodeProjects | None = None,
) -> RootWalk:
    """Every routed or recognised file under one root, in a stable order; folders it could
    not list. What it left out is counted in the sniffer's `skipped`, and the code projects'
    Markdown it left out in `projects`."""
    if not root.is_dir():
        return RootWalk((), (), _unlisted_reason(root))
    sniffer = sniffer or Sniffer(settings)
    projects = projects or CodeProjects()
    routes = route_matcher(effective_routes(settings))
    failed: list[OSError] = []
    found: list[Found] = []
    entries = 0
    own = OwnPaths.of(settings)  # never entered nor counted, in any root
    for folder, dirs, files in os.walk(root, onerror=failed.append):
        entries += len(dirs) + len(files)
        here = Path(folder)
        projects.enter(here, [*dirs, *files])  # before .git and .obsidian are pruned
        dirs[:] = sorted(d for d in dirs if not _skip_folder(here / d, root, sniffer, own))
        names = sorted(f for f in files if not own.holds_file(here, f))
        found += _routed(here, names, root, routes, sniffer, projects)
    unreadable = tuple(Path(str(e.filename)) for e in failed if e.filename is not None)
    if root in unreadable or (failed and not unreadable):
        reason = failed[0].strerror or type(failed[0]).__name__
        return RootWalk((), (), f"cannot be listed ({reason})")
    return RootWalk(tuple(found), unreadable, empty=entries == 0)


def _skip_folder(folder: Path, root: Path, sniffer: Sniffer, own: OwnPaths | None = None) -> bool:
    if own is not None and folder in own.folders:
        return True  # Memex's own: not walked, not counted
    if folder.name in IGNORED_PARTS:
        sniffer.count_excluded(folder.name)
        return True
    return sniffer.excluded(folder.relative_to(root).as_posix(), folder)


def _routed(
    folder: Path,
    names: Sequence[str],
    root: Path,
    routes: Matcher,
    sniffer: Sniffer,
    projects: CodeProjects,
) -> Iterator[Found]:
    inside = folder.relative_to(root).as_posix()
    prefix = "" if inside == "." else inside + "/"
    read_archives = sniffer.settings.discovery.read_archives
    for name in names:
        relative = prefix + name
        if read_archives and name.lower().endswith(archives.SUFFIXES):
            yield from archive_members(folder / name, root, relative, routes, sniffer)
            continue
        source_type = routes(relative)
        if source_type is None and projects.leaves_out(folder, name):
            continue  # a code project's docs, not notes: counted in `projects`
        if source_type is None and not sniffer.worth_reading(name):
            sniffer.skipped.unknown += 1  # no route, no recogniser reads such names: no stat
            continue
        item = _found(folder / name, root, relative, source_type, sniffer)
        if item is not None and item.size >= 0:
            yield item


def archive_members(
    path: Path, root: Path, relative: str, routes: Matcher, sniffer: Sniffer
) -> Iterator[Found]:
    """The members of an archive that a route or their content types, as files of their
    own (`<archive>!/<member>`, the archive's mtime); what it refused, in the sniffer.

    An archive that holds no export (most `.zip` files in a Downloads folder), or that
    cannot be read and holds nothing indexed, gets a verdict as a file of no known format
    does: it is not opened again, nor its error told again, while it is unchanged."""
    if routes(relative) == IGNORE or not link_allowed(path, sniffer.settings):
        return
    try:
        stat = path.stat()
    except OSError:
        return
    if not stat_mode.S_ISREG(stat.st_mode) or sniffer.known_unknown(path, stat):
        return
    listing = archives.list_archive(path)
    sniffer.problems += listing.problems
    if not listing.readable:
        sniffer.unreadable_archives.append(path)
    claimed = 0
    for member in listing.members:
        inside = f"{relative}{archives.SEPARATOR}/{member.name}"
        where = archives.member_path(path, member.name)
        source_type = routes(inside)
        if source_type == IGNORE:
            sniffer.skipped.ignored += 1
            continue
        recognised = source_type is None
        if recognised:
            source_type = sniffer.source_type(where, stat.st_mtime, member.size)
        if source_type is None:
            continue
        claimed += 1
        yield Found(where, root, inside, source_type, stat.st_mtime, member.size, recognised)
    if not claimed and (listing.readable or not sniffer.holds_indexed(path)):
        sniffer.unknown_archive(path, stat)


def _found(
    path: Path, root: Path, relative: str, source_type: str | None, sniffer: Sniffer
) -> Found | None:
    """The file as its route (`source_type`) or its content types it (size -1: it cannot be
    stat'ed), or None."""
    if source_type == IGNORE or not link_allowed(path, sniffer.settings):
        sniffer.skipped.ignored += source_type == IGNORE
        return None
    try:
        stat = path.stat()
    except OSError:
        return Found(path, root, relative, source_type, 0.0, -1) if source_type else None
    if source_type is not None:
        return Found(path, root, relative, source_type, stat.st_mtime, stat.st_size)
    if not stat_mode.S_ISREG(stat.st_mode):
        return None
    recognised = sniffer.source_type(path, stat.st_mtime, stat.st_size)
    if recognised is None:
        return None
    return Found(path, root, relative, recognised, stat.st_mtime, stat.st_size, True)


def scan(
    settings: Settings,
    known: KnownTypes | None = None,
    unknown: Mapping[str, Verdict] | None = None,
) -> Discovery:
    """Walk every root: the routed and recognised files, the roots and folders that could
    not be listed, and what was left out. `known`: the types earlier runs found, and
    `unknown` the files they found of no known format, so that an unchanged file is not
    read again to recognise it."""
    sniffer = Sniffer(settings, known or {}, unknown or {})
    projects = CodeProjects()
    found: list[Found] = []
    listed: list[Path] = []
    unlisted: list[UnlistedRoot] = []
    unreadable: list[Path] = []
    empty: list[Path] = []
    try:
        for root in settings.roots:
            walk = walk_root(root, settings, sniffer, projects)
            if walk.problem:
                unlisted.append(UnlistedRoot(root, walk.problem))
                continue
            listed.append(root)
            found += walk.found
            unreadable += walk.unreadable
            if walk.empty:
                empty.append(root)
    finally:
        sniffer.siblings.archives.close()
    return Discovery(
        tuple(found),
        tuple(listed),
        tuple(unlisted),
        tuple(unreadable),
        tuple(empty),
        sniffer.skipped,
        tuple(sniffer.verdicts),
        tuple(sniffer.problems),
        tuple(sniffer.unreadable_archives),
        projects.summary(),
    )


def discover(settings: Settings) -> Iterator[Found]:
    """Every routed or recognised file under every root, in a stable order."""
    yield from scan(settings).found


@dataclass(frozen=True)
class Located:
    """One path as a walk of the roots would see it: where, under which root, and how."""

    path: Path
    root: Path
    relative: str  # root-relative, POSIX


def locate(path: Path, settings: Settings, sniffer: Sniffer) -> Located | None:
    """The path under the first root holding it, unless that root's walk would never
    reach it (an excluded folder on the way); None outside every root."""
    # The folder is resolved, not the file: a symlinked file is indexed where the link is,
    # as the walk of the roots sees it.
    located = path.parent.resolve() / path.name if path.parent.exists() else path.absolute()
    own = OwnPaths.of(settings)  # Memex's own files: its index, config and run log
    if own.holds_file(located.parent, located.name) or any(
        is_under(str(located), folder) for folder in own.folders
    ):
        return None
    for root in settings.roots:
        try:
            relative = located.relative_to(root).as_posix()
        except ValueError:
            continue
        if _in_excluded_folder(root, relative, sniffer):
            return None
        return Located(located, root, relative)
    return None


def classify(path: Path, settings: Settings) -> Found | None:
    """The type of one path (for the watcher), by route or content, or None."""
    sniffer = Sniffer(settings)
    where = locate(path, settings, sniffer)
    if where is None:
        return None
    routes = route_matcher(effective_routes(settings))
    source_type = routes(where.relative)
    if source_type is None and CodeProjects().leaves_out_path(where.path, where.root):
        return None  # a code project's docs, as the walk leaves them out
    return _found(where.path, where.root, where.relative, source_type, sniffer)


def scan_archive(path: Path, settings: Settings) -> Discovery:
    """The members of one archive under a root (for the watcher and `index_paths`), as a
    walk of the roots finds them; what it refused in `problems`."""
    sniffer = Sniffer(settings)
    where = locate(path, settings, sniffer)
    if where is None:
        return Discovery(())
    routes = route_matcher(effective_routes(settings))
    try:
        found = tuple(archive_members(where.path, where.root, where.relative, routes, sniffer))
    finally:
        sniffer.siblings.archives.close()
    return Discovery(
        found,
        problems=tuple(sniffer.problems),
        unreadable_archives=tuple(sniffer.unreadable_archives),
    )


def _in_excluded_folder(root: Path, relative: str, sniffer: Sniffer) -> bool:
    parts = relative.split("/")[:-1]
    return any(
        _skip_folder(root.joinpath(*parts[: n + 1]), root, sniffer) for n in range(len(parts))
    )
