"""Each stage's `reads` and `writes` (engine/search/context.py) against what it does: every
stage of STAGES runs, inside real searches on the demo index, on a context that records
each field it reads, sets or adds to; a field touched but not declared, or declared but
never touched over the searches, fails."""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from engine.search import Searcher
from engine.search.context import SearchContext, Stage
from engine.search.hits import Hit
from engine.search.order import STAGES
from engine.search.pipeline import DRESS_READS, OUTCOME_READS
from engine.search.rerank import Reranker, RerankError
from engine.settings import Settings
from engine.store.opens import record_open

NOW = datetime(2026, 6, 30, 12, 0)
ARCHITECTURE = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"
FIELDS = {f.name for f in dataclasses.fields(SearchContext)}
# Properties of the context, read through the fields they are made of.
DERIVED = {"cfg": ("settings",), "limit": ("inputs",), "k": ("settings", "inputs")}
# Searches that between them take every branch that reads a field: a person's name (the
# profile stages), the query's own days (the date boost), a filter (no floor, no related),
# keywords alone, and an ordinary hybrid query.
SEARCHES: list[tuple[str, dict[str, Any]]] = [
    ("Priya", {}),
    ("the ferry to the islands", {}),
    ("standup moved yesterday", {}),
    ("standup", {"people": ["Ingrid"]}),
    ("bike", {"mode": "bm25", "source_types": ["journal"]}),
    ("standup", {"people": ["Nobody Known"]}),  # a filter leaving nothing: the outcome counts
]
# The phases around the stages, by the name `run_searches` notes them under.
PHASES = {"dress": DRESS_READS, "outcome": OUTCOME_READS}


class Recording:
    """A SearchContext that notes the fields read (`got`) and set (`put`)."""

    def __init__(self, ctx: SearchContext) -> None:
        object.__setattr__(self, "_ctx", ctx)
        object.__setattr__(self, "got", set())
        object.__setattr__(self, "put", set())

    def __getattr__(self, name: str) -> Any:
        self.got.update(DERIVED.get(name, (name,)))
        return getattr(self._ctx, name)

    def __setattr__(self, name: str, value: Any) -> None:
        self.put.add(name)
        setattr(self._ctx, name, value)


def snapshot(value: Any) -> Any:
    """A copy of a container (a stage may add to it in place), else the value itself."""
    return copy.copy(value) if isinstance(value, list | dict | set) else value


def differs(now: Any, before: Any) -> bool:
    """A container by its items, anything else by identity (set anew)."""
    return bool(now != before) if isinstance(before, list | dict | set) else now is not before


class Scores:
    """A re-rank backend that prefers shorter documents, and fails on "bike"."""

    name = "fake"

    def scores(self, query: str, documents: Sequence[str]) -> dict[int, float]:
        if query == "bike":
            raise RerankError("the re-ranker is down")
        return {i: -float(len(d)) for i, d in enumerate(documents)}


class Watched:
    """A stage run on a `Recording`; what it touched is added to `touched`."""

    def __init__(self, stage: Stage, touched: dict[str, tuple[set[str], set[str]]]) -> None:
        self.stage, self.name, self.touched = stage, stage.name, touched
        self.reads, self.writes = stage.reads, stage.writes

    def __call__(self, ctx: SearchContext, hits: list[Hit]) -> list[Hit]:
        if self.name == STAGES[0].name:  # a re-ranker that answers, so its stage runs whole
            on = ctx.settings.with_values(rerank__backend="http")
            ctx.reranker = Reranker(on, backends={"http": lambda _: Scores()})
        before = {name: snapshot(getattr(ctx, name)) for name in FIELDS}
        recording = Recording(ctx)
        out = self.stage(recording, hits)  # type: ignore[arg-type]
        changed = {name for name in FIELDS if differs(getattr(ctx, name), before[name])}
        got, put = self.touched.setdefault(self.name, (set(), set()))
        got.update(recording.got)
        put.update(recording.put | changed)
        return out


def run_searches(settings: Settings) -> dict[str, tuple[set[str], set[str]]]:
    found: dict[str, tuple[set[str], set[str]]] = {}
    on = settings.with_values(
        search__related=True,
        search__group_sections=True,
        search__frecency=True,
        search__query_dates="boost",
        search__name_aliases=True,
    )
    searcher = Searcher(on)
    picked = searcher.search("the ferry to the islands", 1, now=NOW).results[0]
    record_open(on.db_path, picked.id, picked.source_file, NOW)  # frecency has one to lift
    searcher.stages = tuple(Watched(stage, found) for stage in STAGES)
    watch_phases(searcher, found)
    try:
        for query, options in SEARCHES:
            searcher.search(query, 10, now=NOW, **options)
    finally:
        searcher.close()
    return found


def watch_phases(searcher: Searcher, touched: dict[str, tuple[set[str], set[str]]]) -> None:
    """`Searcher._dress` and `Searcher._outcome` run on a `Recording`, noted as `PHASES`."""
    for name in PHASES:
        method = getattr(searcher, f"_{name}")

        def watched(ctx: SearchContext, out: Any, method: Any = method, name: str = name) -> Any:
            recording = Recording(ctx)
            answer = method(recording, out)
            got, put = touched.setdefault(name, (set(), set()))
            got.update(recording.got)
            put.update(recording.put)
            return answer

        setattr(searcher, f"_{name}", watched)


def test_every_declared_field_is_a_field_of_the_context() -> None:
    for stage in STAGES:
        assert set(stage.reads) | set(stage.writes) <= FIELDS, stage.name
    assert set(DRESS_READS) | set(OUTCOME_READS) <= FIELDS


def test_each_stage_touches_what_it_declares_and_nothing_else(demo_index: Settings) -> None:
    found = run_searches(demo_index)
    assert set(found) == {s.name for s in STAGES} | set(PHASES)
    for stage in STAGES:
        got, put = found[stage.name]
        assert got == set(stage.reads), (stage.name, "reads", got ^ set(stage.reads))
        assert put == set(stage.writes), (stage.name, "writes", put ^ set(stage.writes))
    for name, reads in PHASES.items():  # the dressing and the outcome only read
        got, put = found[name]
        assert got == set(reads) and not put, (name, got ^ set(reads), put)


def test_the_recording_notices_an_undeclared_read(demo_index: Settings) -> None:
    class Sneaky:
        name, reads, writes = "sneaky", ("settings",), ()

        def __call__(self, ctx: SearchContext, hits: list[Hit]) -> list[Hit]:
            ctx.warnings.append("sneaky")  # neither read nor written by declaration
            return hits if ctx.cfg.limit else []

    found: dict[str, tuple[set[str], set[str]]] = {}
    searcher = Searcher(demo_index)
    searcher.stages = (*searcher.stages, Watched(Sneaky(), found))  # type: ignore[arg-type]
    try:
        searcher.search("standup", 5, now=NOW)
    finally:
        searcher.close()
    got, put = found["sneaky"]
    assert got == {"settings", "warnings"} and put == {"warnings"}


def test_the_documented_table_is_the_declared_one() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    block = text.split("<!-- reads-writes:", 1)[1].split("<!-- /reads-writes -->", 1)[0]
    rows = [line.split("|")[1:4] for line in block.splitlines() if line.startswith("| `")]
    names = lambda cell: tuple(re.findall(r"`([a-z_]+)`", cell))  # noqa: E731
    documented = [(names(a)[0], names(b), names(c)) for a, b, c in rows]
    assert documented == [(s.name, tuple(s.reads), tuple(s.writes)) for s in STAGES]
