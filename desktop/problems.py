"""The files with a problem, for the Status dialog: which, what in words, and what to do.

The index records one sentence per file (`index_state.error`, what `memex status` lists);
a file whose text was indexed all the same (a note with broken front matter, a chat with
one unreadable line) is a warning, one that was not is an error. What to do is chosen by
what the sentence is about; a sentence this table does not know gets the general advice.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from engine.index.reports import IndexStatus
from engine.text import shown

LISTED = 8  # files shown in the dialog; the rest are counted

# (words the recorded sentence holds, what to do about it), the first that matches.
ADVICE: tuple[tuple[tuple[str, ...], str], ...] = (
    (("pip install",), "Install the extra it names, then choose Reindex now."),
    (
        ("front matter",),
        "Fix the note's front matter (the YAML between its first two --- lines); "
        "its text is searchable meanwhile.",
    ),
    (
        ("password", "encrypted"),
        "Save a copy without the password (or export it again unprotected) into a data folder.",
    ),
    (
        ("too large", "larger than", "max_file_bytes"),
        "Raise the size limit in Settings, or split the file.",
    ),
    (("permission", "not allowed"), "Let your user read the file, then choose Reindex now."),
)
GENERAL = "Check that the file opens in its own program; Memex reads it again at the next reindex."


@dataclass(frozen=True)
class FileProblem:
    """One file with a problem: its path, the recorded sentence, what to do, and whether
    its text is in the index all the same (a warning) or not (an error)."""

    path: str
    what: str
    todo: str
    indexed: bool

    def line(self, whole_path: bool = False) -> str:
        """The file by its name (by its whole path, `~/…`, when another listed file has the
        same name), what happened, and what to do."""
        kind = "Indexed with a problem" if self.indexed else "Not indexed"
        named = shown(Path(self.path)) if whole_path else Path(self.path).name
        return f"{kind}: {named} — {self.what}\n    {self.todo}"


def advice(what: str) -> str:
    """What to do about a file's recorded problem."""
    lowered = what.lower()
    for words, todo in ADVICE:
        if any(word in lowered for word in words):
            return todo
    return GENERAL


def file_problems(status: IndexStatus) -> list[FileProblem]:
    """Every file with a problem: errors first, then warnings, each by path."""
    found = [
        FileProblem(path, what, advice(what), path in status.indexed_with_errors)
        for path, what in status.errors
    ]
    return sorted(found, key=lambda p: (p.indexed, p.path))


def problem_lines(status: IndexStatus) -> list[str]:
    """The dialog's lines: a count of each kind, then the first `LISTED` files in words."""
    problems = file_problems(status)
    if not problems:
        return []
    errors = sum(not p.indexed for p in problems)
    warned = len(problems) - errors
    counts = [f"{errors} file(s) not indexed"] if errors else []
    counts += [f"{warned} file(s) indexed with a problem"] if warned else []
    listed = problems[:LISTED]
    names = Counter(Path(p.path).name for p in listed)
    lines = ["", " · ".join(counts)] + [p.line(names[Path(p.path).name] > 1) for p in listed]
    if len(problems) > LISTED:
        lines.append(f"… and {len(problems) - LISTED} more (memex status lists every one)")
    return lines
