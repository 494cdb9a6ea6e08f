"""What every re-rank backend is: a query and documents in, a score per document out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from engine.settings import Settings

Scores = dict[int, float]  # document index -> relevance score, higher is better


class RerankError(RuntimeError):
    """The re-ranker cannot score now (server down, bad answer, missing model); the message
    is one clause, shown in the search's warnings."""


class Backend(Protocol):
    """A cross-encoder: scores each document against the query. A document left out of
    the scores (a server honouring `top_n`) keeps its place after the scored ones."""

    name: str

    def scores(self, query: str, documents: Sequence[str]) -> Scores: ...


BackendFactory = Callable[[Settings], Backend]
