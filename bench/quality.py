"""Relevance on real data: LoCoMo chats and QMSum meetings, one index, every question.

    .venv/bin/python -m bench.quality [--data DIR] [--rebuild] [--quick N]
                                      [--only NAME]... [--set search.KEY=VALUE]...

Builds (or reuses, under bench/out/) an index of the converted data with the real local
model, runs each question through `Searcher.search` over the whole index, and reports
nDCG@10, MRR@10, Recall@10 and Recall@50 for bm25 / vector / hybrid and an ablation of
the hybrid pipeline, per data set. Writes bench/out/quality.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from bench import quality_data as qd
from bench.common import (
    DEFAULT_DATA,
    OUT,
    CachedEmbedder,
    Qrels,
    Run,
    bench_settings,
    digest,
    engine_code_files,
    evaluate,
    machine,
    markdown_table,
    mean,
    parse_sets,
    write_record,
)
from engine.embedders import create_embedder
from engine.index.runs import reindex
from engine.search import Searcher
from engine.settings import Settings
from engine.store import db

MEASURES = {"ndcg_cut.10", "recip_rank", "recall.10,50"}
COLUMNS = [
    ("nDCG@10", "ndcg_cut_10"),
    ("MRR@10", "recip_rank"),
    ("R@10", "recall_10"),
    ("R@50", "recall_50"),
]


@dataclass(frozen=True)
class Config:
    name: str
    mode: str
    changes: tuple[tuple[str, Any], ...] = ()


PLAIN = (
    ("search__recency", False),
    ("search__entity_injection", False),
    ("search__diversity", False),
)

CONFIGS = (
    Config("bm25", "bm25"),
    Config("vector", "vector"),
    Config("hybrid", "hybrid"),
    Config("bm25, no stages", "bm25", PLAIN),
    Config("vector, no stages", "vector", PLAIN),
    Config("hybrid, no stages (plain RRF)", "hybrid", PLAIN),
    Config("hybrid − recency", "hybrid", (("search__recency", False),)),
    Config("hybrid − entity injection", "hybrid", (("search__entity_injection", False),)),
    Config("hybrid − diversity", "hybrid", (("search__diversity", False),)),
    Config("hybrid, over-fetch 1", "hybrid", (("search__overfetch", 1),)),
    Config("hybrid − relevance floor", "hybrid", (("search__floor", False),)),
    Config("hybrid − coverage list", "hybrid", (("search__coverage_weight", 0.0),)),
    Config(
        "hybrid − coverage list, vector weight 1",
        "hybrid",
        (("search__coverage_weight", 0.0), ("search__vector_weight", 1.0)),
    ),
    Config("hybrid − entity first", "hybrid", (("search__entity_first", False),)),
    Config("hybrid + note-level grouping", "hybrid", (("search__group_sections", True),)),
    Config("hybrid + related context", "hybrid", (("search__related", True),)),
)


# -- the index ------------------------------------------------------------------------------

CHUNKING_CODE = (
    "extractors/chunking.py",
    "extractors/slack.py",
    "extractors/meeting.py",
    "extractors/markdown.py",
    "embedders/local.py",
    "engine/parts.py",
    "store/vectors.py",
)


def cache_dir(data_dir: Path) -> Path:
    """Keyed by the data, the converter and the engine code that decides these chunks."""
    code = [f for f in engine_code_files() if any(str(f).endswith(c) for c in CHUNKING_CODE)]
    key = digest(qd.data_files(data_dir) + code + [Path(qd.__file__)])
    return OUT / f"quality-{key}"


def build(data_dir: Path, rebuild: bool) -> tuple[Path, qd.Layer]:
    """The converted layer and its index, built once per data + engine-code hash."""
    target = cache_dir(data_dir)
    manifest = target / "layer.json"
    if manifest.exists() and not rebuild:
        print(f"reusing the index in {target}", file=sys.stderr)
        return target, qd.Layer.from_json(json.loads(manifest.read_text()))
    shutil.rmtree(target, ignore_errors=True)
    layer = qd.write_layer(data_dir, target / "layer")
    settings = bench_settings([target / "layer"], target / "memex.db")
    started = time.perf_counter()
    stats = reindex(settings=settings)
    seconds = time.perf_counter() - started
    if stats.errors:
        raise SystemExit(f"indexing reported errors: {stats.errors[:3]}")
    print(
        f"indexed {stats.files} files, {stats.chunks} chunks in {seconds:.1f} s "
        f"({stats.chunks / seconds:.0f} chunks/s)",
        file=sys.stderr,
    )
    # The text now lives in the index; keep only the people file the searcher reads.
    shutil.rmtree(target / "layer" / "data")
    manifest.write_text(
        json.dumps({**layer.to_json(), "index_seconds": seconds, "chunks": stats.chunks})
    )
    return target, layer


def base_settings(target: Path, layer: qd.Layer) -> Settings:
    """Recency measured from the day after the newest message: meaningful, deterministic."""
    now = (layer.newest + timedelta(days=1)).replace(hour=12, minute=0, second=0)
    return bench_settings([target / "layer"], target / "memex.db", now=now.isoformat())


# -- runs -----------------------------------------------------------------------------------


def run_config(
    searcher: Searcher, questions: list[qd.Question], mode: str, limit: int
) -> tuple[Run, float]:
    run: Run = {}
    started = time.perf_counter()
    for q in questions:
        response = searcher.search(q.query, limit, mode=mode)
        run[q.qid] = [r.id for r in response.results]
    return run, (time.perf_counter() - started) * 1000 / max(1, len(questions))


def score(qrels: Qrels, top10: Run, top50: Run) -> dict[str, dict[str, float]]:
    per_query = evaluate(qrels, top10, 10, {"ndcg_cut.10", "recip_rank", "recall.10"})
    deep = evaluate(qrels, top50, 50, {"recall.50"})
    return {q: {**per_query[q], "recall_50": deep[q]["recall_50"]} for q in qrels}


def measure(
    settings: Settings,
    questions: list[qd.Question],
    qrels: Qrels,
    embedder: CachedEmbedder,
    configs: Sequence[Config] = CONFIGS,
) -> dict[str, Any]:
    results: dict[str, Any] = {}
    datasets = {d: [q.qid for q in questions if q.dataset == d] for d in ("locomo", "qmsum")}
    for config in configs:
        searcher = Searcher(settings.with_values(**dict(config.changes)), embedder=embedder)
        top10, ms = run_config(searcher, questions, config.mode, 10)
        top50, _ = run_config(searcher, questions, config.mode, 50)
        searcher.close()
        per_query = score(qrels, top10, top50)
        results[config.name] = {
            "ms_per_query": round(ms, 2),
            **{
                name: {label: round(mean(per_query, key, qids), 4) for label, key in COLUMNS}
                for name, qids in datasets.items()
            },
        }
        print(f"  {config.name}: {ms:.1f} ms/query", file=sys.stderr)
    return results


# -- report ---------------------------------------------------------------------------------


def report(results: dict[str, Any], counts: dict[str, int]) -> str:
    parts = []
    for dataset, title in (("locomo", "LoCoMo"), ("qmsum", "QMSum")):
        rows = [[name, *[r[dataset][label] for label, _ in COLUMNS]] for name, r in results.items()]
        parts.append(
            f"**{title}** ({counts[dataset]} questions)\n\n"
            + markdown_table(["configuration", *[c for c, _ in COLUMNS]], rows)
        )
    return "\n\n".join(parts)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.quality", description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="evaluation data folder")
    p.add_argument("--rebuild", action="store_true", help="rebuild the cached index")
    p.add_argument("--quick", type=int, default=0, metavar="N", help="only N questions per set")
    p.add_argument("--json", type=Path, default=OUT / "quality.json")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change a setting for every configuration (search.rrf_k=20)",
    )
    p.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help="run only the configurations whose name starts with NAME",
    )
    return p


def has_data(data_dir: Path) -> bool:
    return (data_dir / "locomo").is_dir() and (data_dir / "qmsum" / "val.jsonl").exists()


def resolve_evidence(settings: Settings, layer: qd.Layer) -> tuple[qd.Mapping, int]:
    """The questions' evidence mapped to chunks of the index, and its chunk count."""
    conn = db.connect(settings.db_path, create=False)
    mapping = qd.build_qrels(conn, layer.questions)
    chunks = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
    conn.close()
    return mapping, chunks


def select_questions(
    questions: list[qd.Question], mapping: qd.Mapping, quick: int
) -> list[qd.Question]:
    """The questions with resolvable evidence; with `quick`, the first N of each data set."""
    kept = [q for q in questions if q.qid in mapping.qrels]
    if quick:
        kept = [q for d in ("locomo", "qmsum") for q in [x for x in kept if x.dataset == d][:quick]]
    return kept


def select_configs(only: Sequence[str]) -> list[Config]:
    """The configurations named exactly, or else those whose name starts with a NAME."""
    exact = [c for c in CONFIGS if c.name in only]
    return exact or [c for c in CONFIGS if not only or any(c.name.startswith(o) for o in only)]


def write_json(
    path: Path,
    *,
    settings: Settings,
    changed: list[str],
    chunks: int,
    counts: dict[str, int],
    mapping: qd.Mapping,
    started: float,
    results: dict[str, Any],
    before: dict[str, Any],
) -> None:
    write_record(
        path,
        before,
        {
            "now": settings.now,
            "settings_changed": changed,
            "chunks": chunks,
            "questions": counts,
            "unresolved_questions": len(mapping.unresolved),
            "evidence_probe_misses": mapping.missing_probe,
            "seconds": round(time.perf_counter() - started, 1),
            "results": results,
        },
    )


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if not has_data(args.data):
        print(f"skipped: no evaluation data at {args.data} (expects locomo/ and qmsum/val.jsonl)")
        return 0
    started, before = time.perf_counter(), machine()
    target, layer = build(args.data, args.rebuild)
    settings = base_settings(target, layer).with_values(**parse_sets(args.set))
    mapping, chunks = resolve_evidence(settings, layer)
    questions = select_questions(layer.questions, mapping, args.quick)
    qrels = {q.qid: mapping.qrels[q.qid] for q in questions}
    counts = {d: sum(1 for q in questions if q.dataset == d) for d in ("locomo", "qmsum")}
    embedder = CachedEmbedder(create_embedder(settings))
    results = measure(settings, questions, qrels, embedder, select_configs(args.only))
    print(report(results, counts))
    write_json(
        args.json,
        settings=settings,
        changed=args.set,
        chunks=chunks,
        counts=counts,
        mapping=mapping,
        started=started,
        results=results,
        before=before,
    )
    print(
        f"\n{chunks} chunks; {len(mapping.unresolved)} question(s) without resolvable evidence "
        f"skipped; {mapping.missing_probe} evidence probe(s) not found in their chunk; "
        f"now = {settings.now}; {time.perf_counter() - started:.0f} s; JSON in {args.json}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
