"""Extractors: one reader per source type (or family of types), pure, found in one registry.

An extractor takes a file's bytes, its path and its `Siblings` and returns `Extraction`: the
chunk drafts and the problems it stepped over (a bad JSONL line, a message without text). It
never touches the database, the embedder or the file system: what a reader needs from the
files beside the one it reads (a Slack export's `users.json`) is declared on its source type
(`SourceType.siblings`) and read by the indexer, which hands it over as `Siblings`.
The shared types live in `engine.extractors.base` (re-exported here), below every reader.
"""

from __future__ import annotations

from engine.extractors.base import NO_SIBLINGS as NO_SIBLINGS
from engine.extractors.base import ExtractError as ExtractError
from engine.extractors.base import Extraction as Extraction
from engine.extractors.base import Extractor as Extractor
from engine.extractors.base import Reader as Reader
from engine.extractors.base import Siblings as Siblings


def get_extractor(source_type: str) -> Extractor:
    """The extractor of a source type; ExtractError for a type no reader reads."""
    # Imported here, not at the top: binding imports every reader module.
    from engine.extractors.registry import REGISTRY

    try:
        return REGISTRY[source_type]
    except KeyError:
        raise ExtractError(f"no extractor for source type '{source_type}'") from None
