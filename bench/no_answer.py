"""No-answer queries: how often a search about something the index does not hold shows
at most one hit, on the demo layer and on the quality layer (LoCoMo + QMSum).

    .venv/bin/python -m bench.no_answer [--set search.KEY=VALUE]... [--calibrate]

The queries (bench/no_answer_queries.json) name things neither layer holds. `--calibrate`
runs every no-answer query and every answerable quality question once with the floor
letting everything through, notes each shown hit's evidence (engine/search/rank/floor.py), and
replays a grid of thresholds on it: the no-answer share beside the answerable sets'
Recall@10 (the hits a threshold removes from the top 10, without refilling from below).
Writes bench/out/no_answer.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import personal
from bench import quality as qb
from bench.common import DEFAULT_DATA, OUT, CachedEmbedder, machine, write_record
from engine.embedders import create_embedder
from engine.search import Searcher
from engine.settings import Settings

QUERIES = Path(__file__).with_name("no_answer_queries.json")
OPEN = {"search__floor_keyword": 0.0, "search__floor_cosine": -1.0}
KEYWORD_GRID = (0.35, 0.4, 0.45, 0.5)
COSINE_GRID = (0.35, 0.375, 0.4, 0.425, 0.45)


def load_queries(path: Path = QUERIES) -> list[str]:
    return list(json.loads(path.read_text())["queries"])


def layers(rebuild: bool) -> dict[str, Settings]:
    target, layer = qb.build(DEFAULT_DATA, rebuild)
    return {"demo": personal.demo_index(rebuild), "quality": qb.base_settings(target, layer)}


def hits_shown(settings: Settings, queries: Sequence[str], limit: int = 10) -> list[int]:
    searcher = Searcher(settings, embedder=CachedEmbedder(create_embedder(settings)))
    try:
        return [len(searcher.search(q, limit).results) for q in queries]
    finally:
        searcher.close()


def share_at_most_one(counts: Sequence[int]) -> float:
    return sum(1 for c in counts if c <= 1) / max(1, len(counts))


def evidence_runs(settings: Settings, queries: Sequence[str]) -> list[list[dict[str, Any]]]:
    """For each query, the shown hits' id and evidence, with the floor letting all through."""
    searcher = Searcher(
        settings.with_values(**OPEN), embedder=CachedEmbedder(create_embedder(settings))
    )
    try:
        out = []
        for q in queries:
            hits = searcher.search(q, 10, explain=True).results
            out.append([{"id": h.id, **_evidence(h.explain)} for h in hits])
        return out
    finally:
        searcher.close()


def _evidence(explain: dict[str, Any] | None) -> dict[str, float]:
    notes = explain or {}
    return {"keyword": notes.get("keyword_share", 1.0), "cosine": notes.get("cosine", 1.0)}


def _passes(hit: dict[str, Any], keyword: float, cosine: float) -> bool:
    return bool(hit["keyword"] >= keyword or hit["cosine"] >= cosine)


def calibrate(rebuild: bool) -> dict[str, Any]:
    found = layers(rebuild)
    queries = load_queries()
    target, layer = qb.build(DEFAULT_DATA, False)
    mapping, _ = qb.resolve_evidence(found["quality"], layer)
    answerable = [q for q in layer.questions if q.qid in mapping.qrels]
    runs = {name: evidence_runs(s, queries) for name, s in found.items()}
    asked = evidence_runs(found["quality"], [q.query for q in answerable])
    grid = []
    for keyword in KEYWORD_GRID:
        for cosine in COSINE_GRID:
            row: dict[str, Any] = {"keyword": keyword, "cosine": cosine}
            for name, run in runs.items():
                counts = [sum(_passes(h, keyword, cosine) for h in hits) for hits in run]
                row[f"no_answer_{name}"] = round(share_at_most_one(counts), 3)
            for dataset in ("locomo", "qmsum"):
                row[f"recall10_{dataset}"] = _recall(
                    answerable, asked, mapping.qrels, dataset, keyword, cosine
                )
            grid.append(row)
    return {"grid": grid, "open": _recall_open(answerable, asked, mapping.qrels)}


def _recall(
    questions: Sequence[Any],
    runs: Sequence[list[dict[str, Any]]],
    qrels: dict[str, dict[str, int]],
    dataset: str,
    keyword: float,
    cosine: float,
) -> float:
    scores = []
    for q, hits in zip(questions, runs, strict=True):
        if q.dataset != dataset:
            continue
        shown = {h["id"] for h in hits if _passes(h, keyword, cosine)}
        relevant = set(qrels[q.qid])
        scores.append(len(shown & relevant) / len(relevant))
    return round(sum(scores) / max(1, len(scores)), 4)


def _recall_open(
    questions: Sequence[Any], runs: Sequence[list[dict[str, Any]]], qrels: dict[str, dict[str, int]]
) -> dict[str, float]:
    return {d: _recall(questions, runs, qrels, d, 0.0, -1.0) for d in ("locomo", "qmsum")}


def measure(rebuild: bool, changes: dict[str, Any]) -> dict[str, Any]:
    queries = load_queries()
    out: dict[str, Any] = {"queries": len(queries)}
    for name, settings in layers(rebuild).items():
        counts = hits_shown(settings.with_values(**changes), queries)
        out[name] = {
            "share_at_most_one_hit": round(share_at_most_one(counts), 3),
            "mean_hits": round(sum(counts) / len(counts), 2),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rebuild", action="store_true")
    p.add_argument("--calibrate", action="store_true")
    p.add_argument("--set", action="append", default=[], metavar="search.KEY=VALUE")
    p.add_argument("--json", type=Path, default=OUT / "no_answer.json")
    args = p.parse_args(argv)
    before = machine()
    result = (
        calibrate(args.rebuild)
        if args.calibrate
        else measure(args.rebuild, qb.parse_sets(args.set))
    )
    write_record(args.json, before, result)
    if args.calibrate:
        for row in result["grid"]:
            print(row)
        print("without the floor:", result["open"])
    else:
        print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
