"""The local model at this CPU's limit: texts/s by configuration, beside the indexer's embedder.

    .venv/bin/python -m bench.model_ceiling [--quick] [--quiet-load L] [--json FILE]
    # default bench/out/model_ceiling.json

Two workloads from bench/embedders.py (real chat text): short messages (~16 tokens) and
windows of ten `Name: text` lines (~145 tokens, the indexer's chat chunks). For each, a staged
sweep (bench/model_runner.py builds the sessions from the local embedder's own files):

1. around the baseline (the local embedder's own configuration: `embedder.batch_size`'s
   default, length-sorted, one run of one intra-op thread per core side by side, one shared
   session, onnxruntime's basic graph optimisations), vary one axis at a time: batch
   size (1–64); sorted or not; intra-op threads × runs side by side (1, 2 × 1, 2 and one per
   core); one run with the parallel execution
   mode on two inter-op threads (where a core would otherwise sit idle); the four graph
   optimisation levels; one session shared by both threads or one per thread;
2. combine each axis's best value, and try that combination at half and twice its batch.

That is about 20 configurations a workload instead of the cartesian product's ~900, and
takes about 10 minutes on 2 cores (`--quick`: tiny sizes, seconds, for a smoke run; its
figures mean nothing). Each figure is the best of `--repeat` runs after a warm-up. Then the
real `LocalEmbedder`, made by `create_embedder` from default settings and fed the indexer's
slices (engine/index/embedding.py's BATCH), embeds the same texts: its texts/s beside the best
configuration's is how close indexing runs to the model's ceiling. A single query's latency
(one short text, median of `--queries`) is measured for every set of session options the
baseline, the best configurations and the indexer use.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.common import OUT, add_quiet_load, bench_settings, machine, wait_for_quiet, write_record
from bench.model_runner import GRAPH_LEVELS, ModelConfig, ModelRunner, SessionCache, tokenizer
from engine.embedders import Embedder
from engine.settings.table import SETTINGS_BY_NAME

CORES = os.cpu_count() or 1
# The local embedder's own configuration (LocalEmbedder.configuration): the batch_size
# setting's default, one run per core, one shared session. Its short texts' larger batches
# (TOKENS_PER_BATCH) are the indexer's own and show in its row only.
BASELINE = ModelConfig(batch=int(SETTINGS_BY_NAME["embedder.batch_size"].default), runs=CORES)
BATCHES = (1, 2, 4, 8, 16, 32, 64)
Axis = Callable[[ModelConfig], list[ModelConfig]]
# Each axis: the configurations it tries around a base, and the fields its winner passes on.
AXES: dict[str, tuple[Axis, tuple[str, ...]]] = {
    "batch size": (lambda c: [replace(c, batch=b) for b in BATCHES], ("batch",)),
    "length-sorted batches": (lambda c: [replace(c, sorted=s) for s in (True, False)], ("sorted",)),
    "intra-op threads × runs side by side": (
        lambda c: [
            replace(c, intra=i, runs=r, sessions=1) for r in sorted({1, 2, CORES}) for i in (1, 2)
        ],
        ("intra", "runs"),
    ),
    "inter-op threads (one run)": (
        lambda c: [replace(c, runs=1, sessions=1, parallel=p) for p in (False, True)],
        ("parallel",),
    ),
    "graph optimisation level": (lambda c: [replace(c, graph=g) for g in GRAPH_LEVELS], ("graph",)),
    "sessions per thread": (lambda c: [replace(c, sessions=s) for s in (1, c.runs)], ("sessions",)),
}


class Sweep:
    """Measures configurations on one workload, each once (results kept by configuration)."""

    def __init__(self, texts: list[str], repeat: int, sessions: SessionCache, tok: Any) -> None:
        self.texts, self.repeat = texts, repeat
        self.sessions, self.tokenizer = sessions, tok
        self.measured: dict[ModelConfig, float] = {}
        self.stages: list[dict[str, Any]] = []

    def rate(self, config: ModelConfig) -> float:
        if config not in self.measured:
            runner = ModelRunner(config, self.sessions, self.tokenizer)
            try:
                self.measured[config] = texts_per_s(runner.embed, self.texts, self.repeat)
            finally:
                runner.close()
            print(f"  {config.label()}: {self.measured[config]:,.1f} texts/s", file=sys.stderr)
        return self.measured[config]

    def stage(self, name: str, configs: list[ModelConfig]) -> ModelConfig:
        """Measure the stage's configurations; the fastest."""
        rates = {c: self.rate(c) for c in dict.fromkeys(configs)}
        best = max(rates, key=rates.__getitem__)
        rows = [{"config": c.as_dict(), "texts_per_s": round(r, 1)} for c, r in rates.items()]
        self.stages.append({"stage": name, "results": rows, "best": best.as_dict()})
        return best

    def run(self) -> ModelConfig:
        """One axis at a time around the baseline, then the values that beat it combined;
        the fastest configuration measured."""
        combined = BASELINE
        for name, (axis, fields) in AXES.items():
            winner = self.stage(name, axis(BASELINE))
            if self.measured[winner] > self.measured[BASELINE]:
                combined = replace(combined, **{f: getattr(winner, f) for f in fields})
        if combined.runs == 1:
            combined = replace(combined, sessions=1)
        near = {max(1, combined.batch // 2), combined.batch, combined.batch * 2}
        self.stage("the axes' best combined", [replace(combined, batch=b) for b in sorted(near)])
        return max(self.measured, key=self.measured.__getitem__)


def texts_per_s(embed: Callable[[Sequence[str]], Any], texts: list[str], repeat: int) -> float:
    """Texts per wall second, best of `repeat` runs after a warm-up on a slice."""
    embed(texts[:64])
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        embed(texts)
        best = min(best, time.perf_counter() - started)
    return len(texts) / best


def query_ms(embed: Callable[[Sequence[str]], Any], queries: list[str]) -> float:
    """Median milliseconds to embed one short text alone (a search's query), after a warm-up."""
    for text in queries[:10]:
        embed([text])
    samples = []
    for text in queries:
        started = time.perf_counter()
        embed([text])
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def indexer_embedder(tmp: Path) -> Embedder:
    """The embedder indexing uses, from default settings (the user's config ignored)."""
    from engine.embedders import create_embedder

    return create_embedder(bench_settings([tmp], tmp / "x.db"))


def indexer_rate(embedder: Embedder, texts: list[str], repeat: int) -> float:
    """The embedder fed as the indexer feeds it: slices of BATCH chunks, one call each."""
    from engine.index.embedding import BATCH

    def embed(items: Sequence[str]) -> None:
        for start in range(0, len(items), BATCH):
            embedder.embed(items[start : start + BATCH])

    return texts_per_s(embed, texts, repeat)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--short", type=int, default=1000, help="short messages (~16 tokens)")
    p.add_argument("--chunks", type=int, default=150, help="chat windows (~145 tokens)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--queries", type=int, default=200, help="single queries timed per option set")
    p.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run, seconds")
    p.add_argument("--json", type=Path, default=OUT / "model_ceiling.json")
    add_quiet_load(p)
    return p


def sizes(args: argparse.Namespace) -> dict[str, int]:
    if args.quick:
        return {"short": 24, "chunks": 6, "repeat": 1, "queries": 8}
    return {"short": args.short, "chunks": args.chunks, "repeat": args.repeat}


def measure_workload(
    texts: list[str], repeat: int, sessions: SessionCache, tok: Any, embedder: Embedder
) -> dict[str, Any]:
    """The sweep on one workload, the indexer's embedder beside its best configuration."""
    sweep = Sweep(texts, repeat, sessions, tok)
    best = sweep.run()
    indexer = indexer_rate(embedder, texts, repeat)
    print(f"  the indexer's embedder: {indexer:,.1f} texts/s", file=sys.stderr)
    return {
        "texts": len(texts),
        "stages": sweep.stages,
        "baseline": round(sweep.measured[BASELINE], 1),
        "best": {"config": best.as_dict(), "texts_per_s": round(sweep.measured[best], 1)},
        "indexer": round(indexer, 1),
    }


def latencies(
    configs: list[ModelConfig], sessions: SessionCache, tok: Any, queries: list[str]
) -> list[dict[str, Any]]:
    """A single query's median ms for each distinct set of session options among `configs`."""
    rows = []
    for config in {c.session_key(): c for c in configs}.values():
        alone = replace(config, runs=1, sessions=1, batch=1)
        runner = ModelRunner(alone, sessions, tok)
        try:
            ms = query_ms(runner.embed, queries)
        finally:
            runner.close()
        rows.append({"config": alone.as_dict(), "query_ms": round(ms, 2)})
    return rows


def measure(args: argparse.Namespace) -> dict[str, Any]:
    from bench.embedders import mean_tokens, workloads

    n = sizes(args)
    count = n.get("queries", args.queries)
    work = workloads(max(n["short"], count), n["chunks"])
    short_name = next(iter(work))
    queries = work[short_name][:count]
    work[short_name] = work[short_name][: n["short"]]
    sessions, tok = SessionCache(), tokenizer()
    tmp = (args.json.parent if args.json else OUT) / "model_ceiling-run"  # the settings' files
    tmp.mkdir(parents=True, exist_ok=True)
    embedder = indexer_embedder(tmp)
    results = {}
    try:
        for name, texts in work.items():
            print(f"{name}:", file=sys.stderr)
            results[name] = measure_workload(texts, n["repeat"], sessions, tok, embedder)
        embedder_ms = query_ms(embedder.embed, queries)
    finally:
        getattr(embedder, "close", lambda: None)()
    bests = [ModelConfig(**r["best"]["config"]) for r in results.values()]
    return {
        "sizes": n,
        "tokens": {name: round(mean_tokens(texts), 1) for name, texts in work.items()},
        "baseline": BASELINE.as_dict(),
        "indexer_config": indexer_config(embedder),
        "workloads": results,
        "query": {
            "configs": latencies([BASELINE, *bests], sessions, tok, queries),
            "indexer_ms": round(embedder_ms, 2),
        },
    }


def indexer_config(embedder: Embedder) -> dict[str, Any]:
    """What the indexer's local embedder runs with, as it reports it."""
    describe = getattr(embedder, "configuration", None)
    return dict(describe()) if callable(describe) else {}


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.quiet_load:
        wait_for_quiet(args.quiet_load)
    before = machine()
    figures = measure(args)
    for name, result in figures["workloads"].items():
        best = result["best"]["texts_per_s"]
        print(
            f"{name}: baseline {result['baseline']:,.1f}, best {best:,.1f} "
            f"({ModelConfig(**result['best']['config']).label()}), indexer {result['indexer']:,.1f} "
            f"= {result['indexer'] / best:.2f}× the best"
        )
    if args.json:
        write_record(args.json, before, figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
