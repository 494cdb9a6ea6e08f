"""What a walk found, told per export rather than per file (`memex discover`).

A Slack export is its root folder (the one holding `users.json`), with its channels, DMs,
users and day files; an Obsidian vault the folder holding `.obsidian/`, with its notes; other
notes are told by the root's top folder that holds them; any other file is grouped with the
files of its type in its folder. Pure over the walk's
`Found` records, but for the Slack export's listings, which are read to count users.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.index.archives import SEPARATOR, Archives
from engine.index.routes import Discovery, Found
from engine.sources import source_type

SLACK_DM_LISTINGS = ("dms.json", "mpims.json")
OBSIDIAN_MARK = ".obsidian"


@dataclass(frozen=True)
class Export:
    """One export (or folder of one type's files) as `memex discover` tells it."""

    folder: Path  # the export's root, or the one file
    kind: str  # "Slack export", "Obsidian vault", a type's label
    source_type: str
    files: int
    details: tuple[str, ...] = ()  # "4 channels", "3 users"

    def describe(self) -> str:
        if self.files == 1 and not self.details:
            return self.kind
        return f"{self.kind} — {', '.join(self.details or (f'{self.files} file(s)',))}"


def _label(name: str) -> str:
    declared = source_type(name)
    return declared.label if declared else name


def _listing(folder: Path, name: str, max_bytes: int) -> list[object]:
    """A Slack listing's entries; [] when missing or unreadable."""
    archives = Archives()  # an export still in its .zip: `<archive>!/users.json`
    try:
        data = json.loads(archives.read_file(folder / name, max_bytes))
    except (OSError, ValueError, RecursionError):  # ValueError: ExtractError, bad JSON
        return []
    finally:
        archives.close()
    return data if isinstance(data, list) else []


def _names(entries: Iterable[object]) -> set[str]:
    keys = ("name", "id")
    return {str(e[k]) for e in entries if isinstance(e, dict) for k in keys if e.get(k)}


def slack_export(folder: Path, files: Sequence[Found], max_bytes: int) -> Export:
    """A Slack export: its channels and DMs (channel folders), users and day files."""
    folders = {f.path.parent.name for f in files}
    private = set().union(*(_names(_listing(folder, n, max_bytes)) for n in SLACK_DM_LISTINGS))
    dms = len(folders & private)
    users = len(_listing(folder, "users.json", max_bytes))
    details = [f"{len(folders) - dms} channel(s)"]
    details += [f"{dms} DM(s)"] if dms else []
    details += [f"{users} user(s)", f"{len(files)} day file(s)"]
    shown = Path(str(folder).removesuffix(SEPARATOR))  # an archive's root: the archive
    return Export(shown, "Slack export", "slack", len(files), tuple(details))


def vault_of(path: Path, root: Path) -> Path | None:
    """The Obsidian vault holding a note: the nearest folder, up to its root, holding
    `.obsidian/`."""
    for folder in path.parents:
        if (folder / OBSIDIAN_MARK).is_dir():
            return folder
        if folder == root:
            return None
    return None


def _group_key(found: Found) -> tuple[Path, str]:
    """The folder (and kind) a file is told under."""
    if found.source_type == "slack" and found.path.suffix == ".json":  # a day file
        return found.path.parent.parent, "Slack export"
    if found.source_type == "note":
        vault = vault_of(found.path, found.root)
        if vault is not None:
            return vault, "Obsidian vault"
        top = found.path.parent.relative_to(found.root).parts[:1]  # notes in subfolders
        return found.root.joinpath(*top), "Notes"
    return found.path.parent, _label(found.source_type)


def exports(found: Sequence[Found], max_bytes: int) -> list[Export]:
    """The walk's files as exports, in path order."""
    groups: dict[tuple[Path, str], list[Found]] = {}
    for item in found:
        groups.setdefault(_group_key(item), []).append(item)
    told = []
    for (folder, kind), files in sorted(groups.items(), key=lambda g: str(g[0][0])):
        if kind == "Slack export":
            told.append(slack_export(folder, files, max_bytes))
        elif kind == "Obsidian vault":
            told.append(Export(folder, kind, "note", len(files), (f"{len(files)} note(s)",)))
        elif len(files) == 1:
            told.append(Export(files[0].path, kind, files[0].source_type, 1))
        else:
            told.append(Export(folder, kind, files[0].source_type, len(files)))
    return told


def skipped_summary(discovery: Discovery) -> str:
    """What the walk left out and why, as counts, or "" when nothing was."""
    skipped = discovery.skipped
    parts = []
    if skipped.unknown:
        parts.append(f"{skipped.unknown} file(s) of no known format")
    if skipped.excluded:
        rules = sorted(skipped.excluded_names.items(), key=lambda r: (-r[1], r[0]))
        listed = ", ".join(f"{rule} {count}" for rule, count in rules[:6])
        parts.append(f"{skipped.excluded} excluded folder(s) ({listed})")
    if skipped.too_large:
        parts.append(f"{skipped.too_large} file(s) too large")
    if skipped.ignored:
        parts.append(f"{skipped.ignored} file(s) ignored by a route")
    if discovery.project_docs.files:
        parts.append(discovery.project_docs.describe())
    return "; ".join(parts)
