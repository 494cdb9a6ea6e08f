"""What every reader module shares: the result of reading a file, the files beside it, and
how a module declares the reader the registry binds to its source types.

A reader module names itself to the registry by two module-level values: `READER` (one of
`FileReader`, `SiblingReader`, `FamilyReader`: how its function is called) and, when it
knows its files by their content, `RECOGNISER` (`engine.extractors.sniffing.Recogniser`).
A `SourceType` row names the module (`reader`, `recogniser`); `declared` finds the value
by that name, so a new format is one row and one module. This module sits below every
reader and imports none of them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path, PurePath
from typing import Protocol, TypeVar, cast

from engine.records import Draft, Mention
from engine.sources import SourceType

T = TypeVar("T")
PACKAGE = "engine.extractors"  # where the modules a `SourceType` row names lie


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
# A database's reader from a consistent copy of it: (the copy, the original's path).
CopyReader = Callable[[Path, PurePath], Extraction]
ReadsRow = Callable[[SourceType, bytes, PurePath], Extraction]


@dataclass(frozen=True)
class WithoutSiblings:
    """A reader that needs only the file, called as every extractor is."""

    read: Reader

    def __call__(
        self, data: bytes, path: PurePath, siblings: Siblings = NO_SIBLINGS, /
    ) -> Extraction:
        return self.read(data, path)


@dataclass(frozen=True)
class FileReader:
    """A module's reader of one type that needs only the file: `extract(bytes, path)`; a
    type whose files are databases (`SourceType.databases`) is read from a copy of the file
    and its WAL by `read_copy` instead (`engine.index.databases`)."""

    extract: Reader
    read_copy: CopyReader | None = None

    def bind(self, source: SourceType) -> Extractor:
        return WithoutSiblings(self.extract)


@dataclass(frozen=True)
class SiblingReader:
    """A module's reader of one type that reads the files beside it too (the type's
    `siblings`): `extract(bytes, path, siblings)`."""

    extract: Extractor

    def bind(self, source: SourceType) -> Extractor:
        return self.extract


@dataclass(frozen=True)
class FamilyReader:
    """A module's reader of a family of types that differ only in their row (Markdown's
    notes, journals, code docs): `extract(row, bytes, path)`."""

    extract: ReadsRow

    def bind(self, source: SourceType) -> Extractor:
        return WithoutSiblings(partial(self.extract, source))


ReaderDeclaration = FileReader | SiblingReader | FamilyReader


def declared(source: SourceType, module: str, attribute: str) -> object:
    """The `attribute` (`READER`, `RECOGNISER`) of the reader module a row names, imported
    by its name; ValueError when the module, or its declaration, does not exist."""
    missing = ValueError(f"source type '{source.name}': no {attribute.lower()} '{module}'")
    if not module.isidentifier():
        raise missing
    try:
        found = importlib.import_module(f"{PACKAGE}.{module}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{PACKAGE}.{module}":
            raise  # the module is there; something it imports is not
        raise missing from None
    if not hasattr(found, attribute):
        raise ValueError(f"source type '{source.name}': module '{module}' declares no {attribute}")
    return getattr(found, attribute)


def declared_reader(source: SourceType) -> ReaderDeclaration:
    """The `READER` of the module a row's `reader` names; ValueError if there is none."""
    reader = declared(source, source.reader, "READER")
    if not isinstance(reader, FileReader | SiblingReader | FamilyReader):
        raise ValueError(f"source type '{source.name}': '{source.reader}.READER' is no reader")
    return reader


def copy_reader(source: SourceType) -> CopyReader:
    """How a type whose files are databases reads them from a copy; ValueError if its
    reader does not say (`FileReader.read_copy`)."""
    reader = declared_reader(source)
    if not isinstance(reader, FileReader) or reader.read_copy is None:
        raise ValueError(f"source type '{source.name}': '{source.reader}' reads no database copy")
    return reader.read_copy
