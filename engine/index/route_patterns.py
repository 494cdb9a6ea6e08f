"""Routes map path patterns, relative to a root, to source types; some names are never read.

A file takes the type of the first route that matches it (the config's routes first, then
each source type's defaults); a route to `ignore` (or a disabled pattern) keeps it out, as do
the ignored folders and names (`is_ignored`: editors' swap files, partial downloads,
databases but the ones a source type reads). Pure: paths in, a type's name out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from engine.settings import Route, Settings
from engine.sources import READ_DATABASES, SOURCE_TYPES

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
        not IGNORED_PARTS.isdisjoint(parts)
        or name.startswith((".#", "~$"))
        or (name.startswith(".") and name.endswith(".swp"))
        or (name.endswith(IGNORED_SUFFIXES) and name.lower() not in READ_DATABASES)  # chat.db
    )
