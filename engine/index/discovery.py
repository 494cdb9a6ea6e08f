"""What a walk of the roots found (`Discovery`: each `Found` file) and what it could not see,
and so which indexed files it did not see are gone rather than unseen."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engine.index import archives
from engine.index.files import is_under
from engine.index.projects import ProjectDocs
from engine.index.recognise import Skipped, Verdict
from engine.settings import Settings


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
        return unlisted_reason(root)
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


def unlisted_reason(root: Path) -> str:
    if not root.exists():
        return "does not exist (a typo, or a drive that is not mounted?)"
    return "is not a folder"
