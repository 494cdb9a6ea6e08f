"""Discovery walks the roots: each file takes the type of the first route that matches it
(`engine.index.route_patterns`), else of its content (`engine.index.recognise`), or is
skipped; archives are walked as folders. What it found is a `Discovery`
(`engine.index.discovery`). The names of both modules are importable from here, where the
CLI, the indexer and the desktop have always found them.
"""

from __future__ import annotations

import os
import stat as stat_mode
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.index import archives
from engine.index.discovery import Discovery as Discovery
from engine.index.discovery import Found as Found
from engine.index.discovery import UnlistedRoot as UnlistedRoot
from engine.index.discovery import root_errors as root_errors
from engine.index.discovery import unlisted_reason
from engine.index.discovery import unlisted_roots_at as unlisted_roots_at
from engine.index.files import OwnPaths, is_under, link_allowed
from engine.index.projects import CodeProjects
from engine.index.recognise import KnownTypes, Sniffer, Verdict
from engine.index.route_patterns import DEFAULT_ROUTES as DEFAULT_ROUTES
from engine.index.route_patterns import IGNORE, IGNORED_PARTS, Matcher, effective_routes
from engine.index.route_patterns import name_endings as name_endings
from engine.index.route_patterns import route_for as route_for
from engine.index.route_patterns import route_matcher as route_matcher
from engine.settings import Settings


@dataclass(frozen=True)
class RootWalk:
    """One root's routed files, its unreadable folders, and why it could not be listed."""

    found: tuple[Found, ...]
    unreadable: tuple[Path, ...]
    problem: str = ""
    empty: bool = False


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
        return RootWalk((), (), unlisted_reason(root))
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
    if source_type == IGNORE:
        sniffer.skipped.ignored += 1
        return None
    try:
        stat = _allowed_stat(path, sniffer.settings)
    except OSError:
        return Found(path, root, relative, source_type, 0.0, -1) if source_type else None
    if stat is None:
        return None
    if source_type is not None:
        return Found(path, root, relative, source_type, stat.st_mtime, stat.st_size)
    if not stat_mode.S_ISREG(stat.st_mode):
        return None
    recognised = sniffer.source_type(path, stat.st_mtime, stat.st_size)
    if recognised is None:
        return None
    return Found(path, root, relative, recognised, stat.st_mtime, stat.st_size, True)


def _allowed_stat(path: Path, settings: Settings) -> os.stat_result | None:
    """The file's stat (one `lstat` when it is no symlink: a walk stats every candidate),
    or None for a symlink `link_allowed` refuses."""
    found = os.lstat(path)
    if not stat_mode.S_ISLNK(found.st_mode):
        return found
    return path.stat() if link_allowed(path, settings) else None


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
    found = classify_path(path, settings).found
    return found[0] if found else None


def classify_path(path: Path, settings: Settings) -> Discovery:
    """One path as a walk of the roots finds it (`memex reindex FILE`, the watcher's
    batches): the file, when a route or its content types it, and the problems of the
    recognisers' checks that failed on its bytes, to be reported as the walk's are."""
    sniffer = Sniffer(settings)
    where = locate(path, settings, sniffer)
    if where is None:
        return Discovery(())
    routes = route_matcher(effective_routes(settings))
    source_type = routes(where.relative)
    if source_type is None and CodeProjects().leaves_out_path(where.path, where.root):
        return Discovery(())  # a code project's docs, as the walk leaves them out
    item = _found(where.path, where.root, where.relative, source_type, sniffer)
    return Discovery(() if item is None else (item,), problems=tuple(sniffer.problems))


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
