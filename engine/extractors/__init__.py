"""Extractors: one reader per source type (or family of types), pure, found in one registry.

An extractor takes a file's bytes and its path and returns `Extraction`: the chunk drafts and
the problems it stepped over (a bad JSONL line, a message without text). It never touches
the database, the embedder or the file system beyond the bytes it is given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePath

from engine.records import Draft


class ExtractError(ValueError):
    """The whole file cannot be read as its source type."""


@dataclass
class Extraction:
    """What an extractor made of one file."""

    drafts: list[Draft] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # Harmless, nothing was lost (an unknown charset read as UTF-8/cp1252): not an error.
    notes: list[str] = field(default_factory=list)


Extractor = Callable[[bytes, PurePath], Extraction]


def get_extractor(source_type: str) -> Extractor:
    """The extractor of a source type; ExtractError for a type no reader reads."""
    # Imported here, not at the top: the readers import this package's records.
    from engine.extractors.registry import REGISTRY

    try:
        return REGISTRY[source_type]
    except KeyError:
        raise ExtractError(f"no extractor for source type '{source_type}'") from None
