"""bench.languages with another embedder: the same layer and queries with vectors from another
model (a multilingual one on an OpenAI-compatible server, say) and, in the same run, with the
local model.

    .venv/bin/python -m bench.languages --embedder openai --base-url http://127.0.0.1:PORT/v1 \
        --model multilingual-e5-small-q4 --input-type --json bench/out/languages-e5.json

The server is started by whoever runs it (nothing here starts or stops a process). Measured
for both models, each over its own index of the layer (cached per embedder settings):
- per language, the top-3 share and MRR@10 in keyword and default (hybrid) mode;
- the nonsense queries' hits (the floor's cosine cut was calibrated on MiniLM's cosines),
  and for the other model the floor's cut swept over CUTS;
- a query's embedding (median and 90th percentile ms; through the server for it);
- the first index's embedding rate: texts and chunks a second, the embedding calls alone
  timed around the embedder while the layer was indexed.
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import OUT, CachedEmbedder, bench_settings, digest, engine_code_files
from bench.languages import DATA, DEFAULT, load, score_queries, write_layer
from bench.personal import DEMO_TODAY
from engine.embedders import Embedder, Vectors, close_embedder, create_embedder
from engine.index.runs import reindex
from engine.resources import demo_dir
from engine.search import Searcher
from engine.settings import Settings

CUTS = (0.35, 0.8, 0.82, 0.84, 0.86, 0.88, 0.9)  # 0.35: the shipped cut, for MiniLM


class TimedEmbedder:
    """Wraps an embedder and keeps the texts it embedded and the seconds it took."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.model_id = inner.model_id
        self.config = getattr(inner, "config", {})
        self.texts: list[str] = []
        self.seconds = 0.0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        started = time.perf_counter()
        out = self.inner.embed(texts)
        self.seconds += time.perf_counter() - started
        self.texts += texts
        return out

    def embed_query(self, text: str) -> Vectors:
        return self.inner.embed_query(text)


def index(overrides: dict[str, Any], rebuild: bool) -> tuple[Settings, dict[str, Any]]:
    """The layer indexed with the embedder of `overrides` (none: the local model), and the
    rate it embedded at, cached per data + engine code + embedder settings under bench/out/."""
    files = [*DATA.glob("*.json"), *(p for p in demo_dir().rglob("*") if p.is_file())]
    extra = json.dumps({"embedder": overrides}, sort_keys=True)
    target = OUT / f"languages-{digest(files + engine_code_files(), extra)}"
    settings = bench_settings([target / "layer"], target / "memex.db", DEMO_TODAY, **overrides)
    rate_file = target / "embedding.json"
    if rebuild or not rate_file.exists():
        shutil.rmtree(target, ignore_errors=True)
        write_layer(target / "layer", load())
        settings = bench_settings([target / "layer"], target / "memex.db", DEMO_TODAY, **overrides)
        timed = TimedEmbedder(create_embedder(settings))
        try:
            stats = reindex(settings=settings, embedder=timed)
        finally:
            close_embedder(timed.inner)
        rate = {
            "chunks": stats.embedded,
            "texts": len(timed.texts),
            "mean_chars": round(statistics.fmean(len(t) for t in timed.texts), 1),
            "embed_seconds": round(timed.seconds, 1),
            "index_seconds": round(stats.seconds, 1),
            "texts_per_second": round(len(timed.texts) / timed.seconds, 1),
            "chunks_per_second": round(stats.embedded / timed.seconds, 1),
        }
        print(f"indexed {stats.chunks} chunks in {stats.seconds:.1f} s: {rate}", file=sys.stderr)
        rate_file.write_text(json.dumps(rate), encoding="utf-8")
    return settings, json.loads(rate_file.read_text(encoding="utf-8"))


def query_latency(embedder: Embedder, queries: Sequence[str]) -> dict[str, float]:
    """Median and 90th-percentile ms of one query's embedding, after one to warm up."""
    embedder.embed_query("warm up")
    times = []
    for query in queries:
        started = time.perf_counter()
        embedder.embed_query(query)
        times.append((time.perf_counter() - started) * 1000)
    deciles = statistics.quantiles(times, n=10)
    return {"median_ms": round(statistics.median(times), 1), "p90_ms": round(deciles[8], 1)}


def searched(
    settings: Settings, embedder: Embedder, languages: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """Per language the graded queries' figures; the nonsense queries' hit counts."""
    nonsense = [q for lang in languages for q in lang["nonsense"]]
    searcher = Searcher(settings, embedder=embedder)
    try:
        per = {lang["name"]: score_queries(searcher, settings, lang) for lang in languages}
        counts = [len(searcher.search(q, 10).results) for q in nonsense]
    finally:
        searcher.close()
    return {
        "languages": per,
        "nonsense": {
            "queries": len(nonsense),
            "this_layer": round(sum(1 for c in counts if c <= 1) / len(counts), 3),
            "hits": dict(zip(nonsense, counts, strict=True)),
        },
    }


def cut_sweep(
    settings: Settings, embedder: Embedder, languages: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The floor's cosine cut (`search.floor_cosine`, and `floor_cosine_low` with it, so the
    query-relative rule cannot go below it) tried over CUTS: another model's cosines sit
    elsewhere than MiniLM's, for which 0.35 was calibrated. All graded queries at once."""
    rows = []
    for cut in CUTS:
        tried = settings.with_values(search__floor_cosine=cut, search__floor_cosine_low=cut)
        result = searched(tried, embedder, languages)
        figures = [v[DEFAULT] for v in result["languages"].values()]
        rows.append({
            "floor_cosine": cut,
            "top3": round(statistics.fmean(f["top3"] for f in figures), 3),
            "mrr@10": round(statistics.fmean(f["mrr@10"] for f in figures), 3),
            "nonsense_at_most_one": result["nonsense"]["this_layer"],
        })  # fmt: skip
    return rows


def benchmark(overrides: dict[str, Any], rebuild: bool) -> dict[str, Any]:
    """The layer with the embedder of `overrides` and with the local model, in one run."""
    languages = load()
    queries = [query for lang in languages for _, query, _ in lang["chat"]]
    out: dict[str, Any] = {
        "embedder": {k.removeprefix("embedder__"): v for k, v in overrides.items()}
    }
    for label, chosen in (("local", {}), ("this", overrides)):
        settings, rate = index(chosen, rebuild)
        model = create_embedder(settings)
        try:
            latency = query_latency(model, queries)
            cached = CachedEmbedder(model)
            out[label] = {**searched(settings, cached, languages), "indexing": rate}
            out[label]["query_latency"] = latency
            if label == "this":
                out[label]["floor_cosine_sweep"] = cut_sweep(settings, cached, languages)
        finally:
            close_embedder(model)
    return out


def report(data: dict[str, Any]) -> str:
    from bench.report.relevance import languages_embedder

    return languages_embedder(data)


def run(args: Any, json_path: Path | None) -> dict[str, Any]:
    """The option's run: the embedder settings from the arguments; its own result file."""
    if json_path is None or json_path == OUT / "languages.json":
        sys.exit("--embedder needs its own --json (bench/out/languages.json is the local model's)")
    overrides: dict[str, Any] = {"embedder__name": args.embedder}
    if args.base_url:
        overrides["embedder__base_url"] = args.base_url
    if args.model:
        overrides["embedder__model"] = args.model
    if args.input_type:
        overrides["embedder__input_type"] = True
    return benchmark(overrides, args.rebuild)
