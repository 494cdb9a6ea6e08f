"""What a walk found, told per export rather than per file (`memex discover`).

How a type's files are grouped is declared on its `SourceType`: an export is its root
folder (`export_files`: a Slack export's, the one holding `users.json`, with its channels,
DMs, users and day files); files kept in vaults (`in_vaults`: notes) are told by the
Obsidian vault holding them (the folder with `.obsidian/`), else by the root's top folder;
any other file is grouped with the files of its type in its folder. Pure over the walk's
`Found` records, but for the Slack export's listings, which are read to count users.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from engine.index.archives import SEPARATOR, Archives
from engine.index.discovery import Discovery, Found
from engine.sources import SourceType, source_type

SLACK_DM_LISTINGS = ("dms.json", "mpims.json")
OBSIDIAN_MARK = ".obsidian"
VAULT = "Obsidian vault"
ExportDetails = Callable[[Path, Sequence[Found], int], tuple[str, ...]]


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


def folder_details(folder: Path, files: Sequence[Found], max_bytes: int) -> tuple[str, ...]:
    """An export of any type: its folders and files."""
    folders = {f.path.parent for f in files}
    return (f"{len(folders)} folder(s)", f"{len(files)} file(s)")


def slack_details(folder: Path, files: Sequence[Found], max_bytes: int) -> tuple[str, ...]:
    """A Slack export: its channels and DMs (channel folders), users and day files."""
    folders = {f.path.parent.name for f in files}
    private = set().union(*(_names(_listing(folder, n, max_bytes)) for n in SLACK_DM_LISTINGS))
    dms = len(folders & private)
    users = len(_listing(folder, "users.json", max_bytes))
    details = [f"{len(folders) - dms} channel(s)"]
    details += [f"{dms} DM(s)"] if dms else []
    details += [f"{users} user(s)", f"{len(files)} day file(s)"]
    return tuple(details)


# What an export's line says beyond its folders and files, by source type: a format whose
# export needs no more than `folder_details` has no entry.
EXPORT_DETAILS: Mapping[str, ExportDetails] = {"slack": slack_details}


def vault_of(path: Path, root: Path) -> Path | None:
    """The Obsidian vault holding a note: the nearest folder, up to its root, holding
    `.obsidian/`."""
    for folder in path.parents:
        if (folder / OBSIDIAN_MARK).is_dir():
            return folder
        if folder == root:
            return None
    return None


def export_root(found: Found, source: SourceType) -> Path | None:
    """The root of the export a file belongs to, when its type groups exports
    (`SourceType.export_files`) and the file is one of an export's; else None."""
    pattern = source.export_files
    if not pattern or not PurePosixPath(found.relative).match(pattern):
        return None
    return found.path.parents[len(PurePosixPath(pattern).parts) - 1]


def _group_key(found: Found) -> tuple[Path, str]:
    """The folder (and kind) a file is told under."""
    source = source_type(found.source_type)
    if source is None:  # a type only a config route names
        return found.path.parent, found.source_type
    root = export_root(found, source)
    if root is not None:
        return root, f"{source.label} export"
    if source.in_vaults:
        vault = vault_of(found.path, found.root)
        if vault is not None:
            return vault, VAULT
        top = found.path.parent.relative_to(found.root).parts[:1]  # files in subfolders
        return found.root.joinpath(*top), f"{source.label}s"
    return found.path.parent, source.label


def exports(found: Sequence[Found], max_bytes: int) -> list[Export]:
    """The walk's files as exports, in path order."""
    groups: dict[tuple[Path, str], list[Found]] = {}
    for item in found:
        groups.setdefault(_group_key(item), []).append(item)
    return [
        _told(folder, kind, files, max_bytes)
        for (folder, kind), files in sorted(groups.items(), key=lambda g: str(g[0][0]))
    ]


def _told(folder: Path, kind: str, files: Sequence[Found], max_bytes: int) -> Export:
    """One group as `memex discover` tells it."""
    source_type = files[0].source_type
    if kind.endswith(" export"):
        details = EXPORT_DETAILS.get(source_type, folder_details)(folder, files, max_bytes)
        shown = Path(str(folder).removesuffix(SEPARATOR))  # an archive's root: the archive
        return Export(shown, kind, source_type, len(files), details)
    if kind == VAULT:
        return Export(folder, kind, source_type, len(files), (f"{len(files)} note(s)",))
    if len(files) == 1:
        return Export(files[0].path, kind, source_type, 1)
    return Export(folder, kind, source_type, len(files))


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
