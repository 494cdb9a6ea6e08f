"""A sweep of the relevance floor's query-relative cosine rule, replayed from one run.

    nice -n 10 .venv/bin/python -m bench.floor_sweep [--quality]

Runs every query once on the demo layer, recording at the floor what it weighs (the head
of the ranking, each hit's evidence, the vector candidates' cosines: engine/search/
floor.py), then replays the floor under each rule of a grid: the absolute cut alone, no
floor, and (search.floor_cosine_low, _margin, _spread) settings. The replay is the
pipeline's own `floor.passing` and `floor.cosine_cut` on the recorded lists, so it shows
what a search would show, at the cost of one run. Scored per rule: the meaning-only set
(bench/meaning.py: Recall@3, nDCG@10, MRR@10), the personal benchmark (the ratchet's
means) and the share of no-answer queries (bench/no_answer.py) showing at most one hit,
on the demo layer and, with --quality, the quality layer (LoCoMo + QMSum). Prints a table
and writes bench/out/floor_sweep.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bench import meaning, no_answer, personal
from bench import quality as qb
from bench.common import DEFAULT_DATA, OUT, CachedEmbedder, evaluate, markdown_table
from engine.embedders import create_embedder
from engine.search import Searcher
from engine.search.context import SearchContext
from engine.search.hits import Hit
from engine.search.rank import floor
from engine.settings import Settings
from engine.store import db

ABSOLUTE = 0.35
KEYWORD = 0.35
LOWS = (0.2, 0.26, 0.28, 0.3, 0.32)
MARGINS = (0.02, 0.03, 0.04, 0.06, 0.08)
SPREADS = (0.0, 0.08, 0.12, 0.13, 0.14, 0.15, 0.16, 0.18, 0.2)


def grid() -> dict[str, floor.CosineRule | None]:
    out: dict[str, floor.CosineRule | None] = {
        "no floor": None,
        "absolute 0.35": floor.CosineRule(ABSOLUTE, ABSOLUTE, 0.0, 0.0),
    }
    for low in LOWS:
        for margin in MARGINS:
            for spread in SPREADS:
                out[f"low {low} margin {margin} spread {spread}"] = floor.CosineRule(
                    ABSOLUTE, low, margin, spread
                )
    return out


@dataclass
class Weighed:
    """What the floor weighed for one search (None fields: the floor did not apply)."""

    candidates: list[Hit]
    found: dict[int, floor.Evidence] | None = None
    cosines: list[float] | None = None


class RecordingFloor:
    """The floor stage's stand-in: notes what the floor weighs and lets everything through."""

    name = "floor"

    def __init__(self) -> None:
        self.last = Weighed([])

    def __call__(self, ctx: SearchContext, hits: list[Hit]) -> list[Hit]:
        self.last = Weighed(list(hits))
        got = ctx.retrieved
        if got.qvec is None or not ctx.cfg.floor or not ctx.floored:
            return hits
        head = hits[: ctx.limit * 2]
        seqs = [h.seq for h in head if h.seq is not None]
        found = floor.evidence(
            ctx.conn, ctx.terms, seqs, got.qvec, got.cosines, ctx.prefix, got.shares, got.keywords
        )
        self.last = Weighed(head, found, list(got.cosines.values()))
        return hits


class RecordingSearcher(Searcher):
    """A Searcher whose floor stage notes what it weighs and lets everything through."""

    def __init__(self, settings: Settings, **options: Any) -> None:
        super().__init__(settings, **options)
        self.recorder = RecordingFloor()
        self.stages = tuple(self.recorder if s.name == "floor" else s for s in self.stages)

    @property
    def last(self) -> Weighed:
        return self.recorder.last


def key_of(hit: Hit) -> str:
    """A chunk's seq, or "profile:<slug>"."""
    return f"profile:{hit.person}" if hit.seq is None else str(hit.seq)


def record(settings: Settings, cases: Sequence[personal.Case]) -> dict[str, Weighed]:
    searcher = RecordingSearcher(settings, embedder=CachedEmbedder(create_embedder(settings)))
    out = {}
    try:
        for c in cases:
            searcher.search(
                c.query,
                personal.DEPTH,
                c.source_types or None,
                since=c.since,
                until=c.until,
                people=c.people or None,
            )
            out[c.id] = searcher.last
    finally:
        searcher.close()
    return out


def shown(weighed: Weighed, rule: floor.CosineRule | None) -> list[str]:
    if rule is None or weighed.found is None or weighed.cosines is None:
        return [key_of(c) for c in weighed.candidates[: personal.DEPTH]]
    cut = floor.cosine_cut(weighed.cosines, rule)
    return [key_of(c) for c in floor.passing(weighed.candidates, weighed.found, KEYWORD, cut)][
        : personal.DEPTH
    ]


def chunk_ids(settings: Settings) -> dict[str, str]:
    conn = db.connect(settings.db_path, create=False)
    try:
        return {str(seq): cid for seq, cid in conn.execute("SELECT seq, id FROM chunks")}
    finally:
        conn.close()


def qrels_of(settings: Settings, cases: Sequence[personal.Case]) -> dict[str, dict[str, int]]:
    conn = db.connect(settings.db_path, create=False)
    try:
        return personal.resolve(conn, settings.roots[0], cases).qrels
    finally:
        conn.close()


def graded(runs: dict[str, list[str]], qrels: dict[str, dict[str, int]]) -> dict[str, float]:
    per_case = evaluate(qrels, runs, personal.DEPTH, meaning.MEASURES)
    return {
        "ndcg@10": meaning._mean(per_case, "ndcg_cut_10"),
        "mrr@10": meaning._mean(per_case, "recip_rank"),
        "recall@3": meaning._mean(per_case, "recall_3"),
    }


def as_cases(queries: Sequence[str]) -> list[personal.Case]:
    return [personal.Case(f"q{i}", "no-answer", q, ()) for i, q in enumerate(queries)]


def sweep(quality: bool) -> list[dict[str, Any]]:
    demo = personal.demo_index()
    ids = chunk_ids(demo)
    sets = {"meaning": meaning.load_cases(), "personal": personal.load_cases()}
    qrels = {name: qrels_of(demo, cases) for name, cases in sets.items()}
    absent = as_cases(no_answer.load_queries())
    weighed = {name: record(demo, cases) for name, cases in sets.items()}
    weighed["no_answer_demo"] = record(demo, absent)
    if quality:
        weighed["no_answer_quality"] = record(
            qb.base_settings(*qb.build(DEFAULT_DATA, False)), absent
        )
    rows = []
    for name, rule in grid().items():
        row: dict[str, Any] = {"rule": name}
        for set_name in ("meaning", "personal"):
            runs = {
                cid: [ids.get(k, k) for k in shown(w, rule)] for cid, w in weighed[set_name].items()
            }
            for measure, value in graded(runs, qrels[set_name]).items():
                row[f"{set_name} {measure}"] = value
        for set_name in ("no_answer_demo", "no_answer_quality"):
            if set_name in weighed:
                counts = [len(shown(w, rule)) for w in weighed[set_name].values()]
                row[set_name] = round(no_answer.share_at_most_one(counts), 3)
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quality", action="store_true", help="also the quality layer")
    args = p.parse_args(argv)
    rows = sweep(args.quality)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "floor_sweep.json").write_text(json.dumps(rows, indent=1))
    print(markdown_table(list(rows[0]), [list(r.values()) for r in rows]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
