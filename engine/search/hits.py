"""What travels through the ranking stages: a `Hit` (a chunk or a person's profile) and
the chunk's row, the part of it a result shows."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from engine.sources import PROFILE_TYPE

PROFILE_PREFIX = "profile:"  # a profile result's id: "profile:<slug>"


class ChunkRow(NamedTuple):
    """One chunk as the index holds it, the columns a result shows (a tuple: one is made
    for every candidate of every search)."""

    seq: int
    id: str
    source_file: str
    source_type: str
    content: str
    content_date: str | None
    title: str
    location: str
    metadata: str | None

    def meta(self) -> dict[str, Any]:
        """The metadata JSON as a dict ({} when absent or not an object)."""
        return self.meta_of(self.metadata)

    @staticmethod
    def meta_of(metadata: str | None) -> dict[str, Any]:
        try:
            data = json.loads(metadata or "{}")
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}


@dataclass(frozen=True, init=False)
class Hit:
    """A chunk (`seq`) or a person's profile (`person`, a slug) on its way through the
    stages: its score, each retriever's rank, each signal's value, and the notes
    `--explain` shows. Immutable; `evolve` makes a changed copy."""

    score: float
    seq: int | None = None
    person: str | None = None
    source_type: str = ""
    source_file: str = ""
    content_date: str | None = None
    row: ChunkRow | None = None
    ranks: Mapping[str, int] = field(default_factory=dict)  # retriever -> 0-based rank
    signals: Mapping[str, float] = field(default_factory=dict)  # signal -> its value
    notes: Mapping[str, Any] = field(default_factory=dict)
    sections: int = 1  # matching sections of its file it stands for (search/rank/sections.py)
    related: bool = False  # linked to a hit, not a match itself (search/rank/related.py)

    def __init__(
        self,
        score: float,
        seq: int | None = None,
        person: str | None = None,
        source_type: str = "",
        source_file: str = "",
        content_date: str | None = None,
        row: ChunkRow | None = None,
        ranks: Mapping[str, int] | None = None,
        signals: Mapping[str, float] | None = None,
        notes: Mapping[str, Any] | None = None,
        sections: int = 1,
        related: bool = False,
    ) -> None:
        # Every candidate of every search is made and copied a few times: one dict set at
        # once costs a fifth of a frozen dataclass's field-by-field __init__.
        fields = {
            "score": score,
            "seq": seq,
            "person": person,
            "source_type": source_type,
            "source_file": source_file,
            "content_date": content_date,
            "row": row,
            "ranks": {} if ranks is None else ranks,
            "signals": {} if signals is None else signals,
            "notes": {} if notes is None else notes,
            "sections": sections,
            "related": related,
        }
        object.__setattr__(self, "__dict__", fields)

    def evolve(self, **changes: Any) -> Hit:
        """A copy with `changes` (field -> value); `dataclasses.replace`, without its cost."""
        copy = object.__new__(Hit)
        object.__setattr__(copy, "__dict__", {**self.__dict__, **changes})
        return copy

    @classmethod
    def chunk(cls, seq: int, score: float = 0.0, **fields: Any) -> Hit:
        return cls(score, seq=seq, **fields)

    @classmethod
    def profile(cls, slug: str, score: float = 0.0) -> Hit:
        return cls(score, person=slug, source_type=PROFILE_TYPE)

    @property
    def key(self) -> tuple[str, int | str]:
        """What makes two hits the same: the chunk, or the person."""
        return ("chunk", self.seq) if self.seq is not None else ("person", self.person or "")

    @property
    def result_id(self) -> str:
        """The id its result carries: the chunk's id, or "profile:<slug>"."""
        if self.row is not None:
            return self.row.id
        return f"{PROFILE_PREFIX}{self.person}" if self.person is not None else str(self.seq)

    def noted(self, **notes: Any) -> Hit:
        return self.evolve(notes={**self.notes, **notes})

    def scaled(self, signal: str, factor: float) -> Hit:
        """The score times `factor`, which is kept as the signal's value."""
        value = round(factor, 4)
        return self.evolve(score=self.score * factor, signals={**self.signals, signal: value})

    def explain(self) -> dict[str, Any]:
        """Every signal, each retriever's rank (1-based) and every note, for --explain."""
        ranks = {f"{name}_rank": rank + 1 for name, rank in self.ranks.items()}
        return {**self.signals, **ranks, **self.notes}


def by_score(hits: list[Hit]) -> list[Hit]:
    """Best first; ties keep their order."""
    return sorted(hits, key=lambda h: h.score, reverse=True)
