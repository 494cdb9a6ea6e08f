"""Every recogniser, by the name a `SourceType.recogniser` gives it: how files are known by
their content wherever they lie under a root (`engine.extractors.sniffing`).

A row's `recogniser` names a module of `engine/extractors/` that declares `RECOGNISER`; the
module is imported by its name (`engine.extractors.base.declared`), so nothing here changes
for a new format. `CONTENT_TYPES` is built once, at import, from
`engine.sources.SOURCE_TYPES`, in declaration order (the first type whose recogniser claims
a file takes it); a type naming a recogniser that does not exist is an import error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from engine.extractors.base import declared
from engine.extractors.sniffing import Recogniser
from engine.sources import SOURCE_TYPES, SourceType


def recogniser_of(source: SourceType) -> Recogniser:
    """The `RECOGNISER` of the module a row's `recogniser` names; ValueError if none."""
    found = declared(source, source.recogniser, "RECOGNISER")
    if not isinstance(found, Recogniser):
        raise ValueError(f"source type '{source.name}': '{source.recogniser}' is no recogniser")
    return found


def bind(types: Iterable[SourceType]) -> tuple[tuple[str, Recogniser], ...]:
    """(source type, recogniser) of every type that recognises by content, in order;
    ValueError for a recogniser that does not exist."""
    return tuple((source.name, recogniser_of(source)) for source in types if source.recogniser)


CONTENT_TYPES: tuple[tuple[str, Recogniser], ...] = bind(SOURCE_TYPES)
# Each recogniser by its name (a row's `recogniser`).
RECOGNISERS: Mapping[str, Recogniser] = {
    source.recogniser: recogniser_of(source) for source in SOURCE_TYPES if source.recogniser
}
# Every name ending some recogniser looks at: a file ending otherwise is never read.
SUFFIXES: tuple[str, ...] = tuple(sorted({s for _, r in CONTENT_TYPES for s in r.suffixes}))
