"""What a folder holds, before it is indexed: the welcome's list of exports, in the user's
words ("Slack export · Downloads/acme-slack-export — 4 channels, 212 day files").

Pure over the engine's walk (`engine.index.routes.scan`) and its per-export grouping
(`engine.index.exports`), the same functions `memex discover` prints; no Qt. It runs on the
task manager's read pool (`Tasks.discover`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.index.exports import Export, exports, skipped_summary
from engine.index.routes import scan
from engine.settings import Settings
from engine.text import shown


@dataclass(frozen=True)
class FoundExport:
    """One export the folder holds: its type (for the icon) and its line."""

    source_type: str
    text: str


@dataclass(frozen=True)
class Survey:
    """A folder's exports, what the walk skipped, and why it could not look, if it could not."""

    folder: Path
    found: tuple[FoundExport, ...]
    files: int
    skipped: str = ""  # "120 file(s) of no known format; 2 excluded folder(s) (…)"
    problem: str = ""  # the folder could not be listed

    @property
    def source_types(self) -> tuple[str, ...]:
        """The types found, each once, in the order of the list."""
        return tuple(dict.fromkeys(f.source_type for f in self.found))

    def heading(self) -> str:
        if self.problem:
            return f"Memex cannot look in {shown(self.folder)}: {self.problem}."
        if not self.found:
            return f"Nothing Memex reads was found in {shown(self.folder)}."
        return f"In {shown(self.folder)}, Memex found {_count(len(self.found), 'export')}:"


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def where(path: Path, folder: Path) -> str:
    """An export's place, relative to the chosen folder (the folder itself: its `~/…` name)."""
    if path == folder:
        return shown(path)
    try:
        return path.relative_to(folder).as_posix()
    except ValueError:
        return shown(path)


def line(export: Export, folder: Path) -> FoundExport:
    """Its type first, then where it is, then what it holds: "Slack export ·
    Downloads/acme-slack-export — 1 channel(s), 2 DM(s)" (a long place is elided in the
    middle by the list, so the type and the counts stay in view)."""
    place = where(export.folder, folder)
    if export.files == 1 and not export.details:
        return FoundExport(export.source_type, f"{export.kind} · {place}")
    held = ", ".join(export.details or (f"{export.files} file(s)",))
    return FoundExport(export.source_type, f"{export.kind} · {place} — {held}")


def survey_folder(settings: Settings, folder: Path) -> Survey:
    """Walk `folder` as a root with the user's settings (routes, excludes) and tell its
    exports; reads only what recognition reads (a few KB of a candidate file)."""
    folder = folder.expanduser().resolve()
    discovery = scan(settings.with_values(roots=[str(folder)]))
    if discovery.unlisted_roots:
        return Survey(folder, (), 0, problem=discovery.unlisted_roots[0].reason)
    told = exports(discovery.found, settings.max_file_bytes)
    found = tuple(line(e, folder) for e in told)
    return Survey(folder, found, len(discovery.found), skipped_summary(discovery))
