"""Routes map path patterns, relative to a root, to source types; discovery walks the roots."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from engine.settings import Route, Settings

DEFAULT_ROUTES: tuple[Route, ...] = (
    Route("data/slack/*.jsonl", "slack"),
    Route("data/slack/*/*/*.json", "slack"),
    Route("data/telegram/*.jsonl", "telegram"),
    Route("data/telegram/**/result.json", "telegram"),
    Route("data/signal/*.jsonl", "signal"),
    Route("data/meetings/processed/*.md", "meeting"),
    Route("data/meetings/processed/*.vtt", "meeting"),
    Route("data/meetings/processed/*.srt", "meeting"),
    Route("data/email/*.jsonl", "email_catalog"),
    Route("data/email/*.mbox", "email_catalog"),
    Route("data/email/*.eml", "email_catalog"),
    Route("data/events/*.jsonl", "event"),
    Route("data/garmin/*.json", "garmin"),
    Route("data/cgm/*.csv", "cgm"),
    Route("data/identity/observations.jsonl", "observation"),
    Route("data/identity/quotes.jsonl", "quote"),
    Route("data/identity/stories.jsonl", "story"),
    Route("data/identity/transcripts/*.md", "transcript"),
    Route("data/voice/*.json", "voice"),
    Route("data/checkins/*.jsonl", "checkin"),
    Route("data/experiments/*.jsonl", "experiment"),
    Route("data/interviews/*.jsonl", "interview"),
    Route("data/interviews/meta/*.json", "interview_meta"),
    Route("data/journal/*.md", "journal"),
    Route("data/scratch/*.md", "scratch"),
    Route("data/board/*.md", "board_summary"),
    Route("data/rwgps/*.md", "rwgps_memory"),
    Route("data/podcasts/*.jsonl", "podcast_digest"),
    Route("memory/entities/people/*.md", "entity_file"),
    Route("memory/entities/projects/*.md", "entity_file"),
    Route("memory/entities/topics/*.md", "entity_file"),
    Route("memory/codebase/*.md", "codebase_doc"),
    Route("notes/**/*.md", "note"),
)

IGNORED_PARTS = {".git", ".obsidian", ".trash", "node_modules", "__pycache__", ".memex"}
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


def discover(settings: Settings) -> Iterator[Found]:
    """Every routed file under every root, in a stable order."""
    routes = effective_routes(settings)
    for root in settings.roots:
        if not root.is_dir():
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in IGNORED_PARTS)
            for name in sorted(files):
                path = Path(folder) / name
                relative = path.relative_to(root).as_posix()
                source_type = route_for(relative, routes)
                if source_type is None:
                    continue
                try:
                    stat = path.stat()
                except OSError:
                    continue
                yield Found(path, root, relative, source_type, stat.st_mtime, stat.st_size)


def classify(path: Path, settings: Settings) -> Found | None:
    """The route of one path (for the watcher), or None if unrouted."""
    routes = effective_routes(settings)
    resolved = path.resolve() if path.exists() else path.absolute()
    for root in settings.roots:
        try:
            relative = resolved.relative_to(root).as_posix()
        except ValueError:
            continue
        source_type = route_for(relative, routes)
        if source_type is None:
            return None
        try:
            stat = resolved.stat()
        except OSError:
            return Found(resolved, root, relative, source_type, 0.0, -1)
        return Found(resolved, root, relative, source_type, stat.st_mtime, stat.st_size)
    return None
