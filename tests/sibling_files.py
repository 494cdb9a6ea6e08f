"""The siblings a reader declares, read straight from disk: for tests that call an extractor
directly, as the indexer would (`engine.index.siblings`), without settings or roots."""

from __future__ import annotations

from pathlib import Path

from engine.extractors import Siblings
from engine.index.siblings import sibling_path
from engine.sources import SOURCE_TYPES_BY_NAME


def siblings_on_disk(path: Path, source_type: str) -> Siblings:
    """The declared siblings of `path` that exist, by declared name."""
    declared = SOURCE_TYPES_BY_NAME.get(source_type)
    names = declared.siblings if declared else ()
    found = {name: sibling_path(path, name) for name in names}
    return Siblings({name: p.read_bytes() for name, p in found.items() if p.is_file()})
