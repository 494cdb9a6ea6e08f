"""Extractors: one per source type (or family), pure, registered in one dict.

An extractor takes a file's bytes and its path and returns `Extraction`: the chunk drafts and
the problems it stepped over (a bad JSONL line, a message without text). It never touches
the database, the embedder or the file system beyond the bytes it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
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
REGISTRY: dict[str, Extractor] = {}


def register(*source_types: str) -> Callable[[Extractor], Extractor]:
    """Register one extractor function for one or more source types."""

    def add(func: Extractor) -> Extractor:
        for source_type in source_types:
            if source_type in REGISTRY:
                raise ValueError(f"two extractors for source type '{source_type}'")
            REGISTRY[source_type] = func
        return func

    return add


def register_each(
    source_types: Iterable[str], extract: Callable[[str, bytes, PurePath], Extraction]
) -> None:
    """Register one extractor per source type: `extract` with that source type as first argument.

    For a family of types read by one function (records, structured), so that each type
    needs no wrapper of its own.
    """
    for source_type in source_types:
        register(source_type)(partial(extract, source_type))


def get_extractor(source_type: str) -> Extractor:
    load_all()
    try:
        return REGISTRY[source_type]
    except KeyError:
        raise ExtractError(f"no extractor for source type '{source_type}'") from None


_LOADED = False


def load_all() -> None:
    """Import every extractor module once; each registers itself on import."""
    global _LOADED
    if _LOADED:
        return
    import importlib
    import pkgutil

    import engine.extractors as package

    for info in pkgutil.iter_modules(package.__path__):
        if not info.name.startswith("_") and info.name != "chunking":
            importlib.import_module(f"engine.extractors.{info.name}")
    _LOADED = True
