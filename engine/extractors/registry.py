"""The extractor of every source type: each `SourceType.reader` bound to its module's reader.

A row's `reader` names a module of `engine/extractors/`; the module declares its reader as
`READER` (`engine.extractors.base`): a `FileReader` (bytes and path in), a `SiblingReader`
(the files beside it too, `SourceType.siblings`, as `Siblings`) or a `FamilyReader` (a
family of types that differ only in their row: the row comes first). The module is imported
by its name, so a new format is one `SourceType` row and one module, and nothing here.
Every bound extractor takes (bytes, path, siblings). `REGISTRY` is built once, at import,
from `engine.sources.SOURCE_TYPES`; a type whose module or `READER` is missing is an import
error, not a file that fails later.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine.extractors.base import Extractor, declared_reader
from engine.sources import SOURCE_TYPES, SourceType


def bind(source: SourceType) -> Extractor:
    """The extractor of one source type; ValueError if its reader does not exist."""
    return declared_reader(source).bind(source)


def build(types: Iterable[SourceType]) -> dict[str, Extractor]:
    """Source type name → extractor; ValueError on a name declared twice."""
    registry: dict[str, Extractor] = {}
    for source in types:
        if source.name in registry:
            raise ValueError(f"source type '{source.name}' is declared twice")
        registry[source.name] = bind(source)
    return registry


REGISTRY: dict[str, Extractor] = build(SOURCE_TYPES)
