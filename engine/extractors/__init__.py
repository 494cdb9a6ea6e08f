"""Extractors: one reader per source type (or family of types), pure, found in one registry.

An extractor takes a file's bytes, its path and its `Siblings` and returns `Extraction`: the
chunk drafts and the problems it stepped over (a bad JSONL line, a message without text). It
never touches the database, the embedder or the file system: what a reader needs from the
files beside the one it reads (a Slack export's `users.json`) is declared on its source type
(`SourceType.siblings`) and read by the indexer, which hands it over as `Siblings`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Protocol, TypeVar, cast

from engine.records import Draft, Mention

T = TypeVar("T")


class ExtractError(ValueError):
    """The whole file cannot be read as its source type."""


@dataclass
class Extraction:
    """What an extractor made of one file."""

    drafts: list[Draft] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # Harmless, nothing was lost (an unknown charset read as UTF-8/cp1252): not an error.
    notes: list[str] = field(default_factory=list)
    # The people the file names, with what it says of them (engine.records.Mention).
    mentions: list[Mention] = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class Siblings:
    """The declared files beside a file that its reader reads too, as read by the indexer:
    each one's declared name (`"../users.json"`) → its bytes; a missing one is absent."""

    files: Mapping[str, bytes] = field(default_factory=dict)
    _parsed: dict[object, object] = field(default_factory=dict, init=False, repr=False)

    def get(self, name: str) -> bytes | None:
        return self.files.get(name)

    def parsed(self, parse: Callable[[Siblings], T]) -> T:
        """`parse(self)`, made once per `Siblings`: the indexer hands one object to every
        file that reads the same sibling files (every day file of one export)."""
        if not self.files:
            return parse(self)
        if parse not in self._parsed:
            self._parsed[parse] = parse(self)
        return cast(T, self._parsed[parse])


NO_SIBLINGS = Siblings()


class Extractor(Protocol):
    """A source type's reader as the indexer calls it: pure, bytes and siblings in."""

    def __call__(
        self, data: bytes, path: PurePath, siblings: Siblings = NO_SIBLINGS, /
    ) -> Extraction: ...


Reader = Callable[[bytes, PurePath], Extraction]  # a reader that needs nothing beside the file


def get_extractor(source_type: str) -> Extractor:
    """The extractor of a source type; ExtractError for a type no reader reads."""
    # Imported here, not at the top: the readers import this package's records.
    from engine.extractors.registry import REGISTRY

    try:
        return REGISTRY[source_type]
    except KeyError:
        raise ExtractError(f"no extractor for source type '{source_type}'") from None
