"""Hostile re-rank and embedding servers: how long a search takes, how much memory it grows.

    .venv/bin/python -m bench.hostile_http          # writes bench/out/hostile_http.json

For each hostile answer (tests/fake_http.py: an endless chunked body, a byte trickle, a
header trickle, JSON nested 100,000 deep, a 50 MB body declared or not, a hang) one search
runs with the default settings against a fake server on 127.0.0.1: once with the HTTP
re-ranker on that server (its documented bound: `rerank.timeout_seconds`, 5 s, retries
included), once with the index embedded by the OpenAI-compatible embedder on that server
(the query's bound: 10 s, its retry included). Each row is the search's wall time, whether
it came back within the bound plus one second, and the growth of the process's resident
memory during it (sampled every 5 ms), which the target holds under 100 MB.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.common import OUT, REPO, bench_settings, machine, markdown_table, write_record
from engine.index.runs import reindex
from engine.search import Searcher
from engine.settings import Settings

sys.path.insert(0, str(REPO))
from tests.fake_http import HOSTILE, ScriptedServer  # noqa: E402
from tests.fake_openai import FakeOpenAI  # noqa: E402
from tests.fake_rerank import FakeRerank  # noqa: E402

KINDS = (*HOSTILE, "hang")
RERANK_BOUND = 5.0  # rerank.timeout_seconds' default: the whole call, retries included
QUERY_BOUND = 10.0  # the query embedding's bound (engine.embedders.openai_embedder)
RSS_LIMIT_MB = 100.0
NOTES = [f"Note {i}: dumplings at the night market, stall {i}, with Priya." for i in range(8)]


def rss_mb() -> float:
    """This process's resident memory now, in MB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@contextmanager
def peak_rss() -> Iterator[list[float]]:
    """Samples the resident memory every 5 ms; yields [baseline, peak] (peak filled after)."""
    found = [rss_mb(), 0.0]
    done = threading.Event()

    def sample() -> None:
        peak = found[0]
        while not done.wait(0.005):
            peak = max(peak, rss_mb())
        found[1] = max(peak, rss_mb())

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield found
    finally:
        done.set()
        thread.join()


def write_notes(root: Path) -> None:
    (root / "notes").mkdir(parents=True, exist_ok=True)
    for i, text in enumerate(NOTES):
        (root / "notes" / f"n{i}.md").write_text(f"# Lunch {i}\n{text}\n")


def measure(
    label: str, kind: str, server: ScriptedServer, settings: Settings, bound: float
) -> dict[str, Any]:
    """One search with `kind` scripted on `server` (twice: a retry meets it too)."""
    server.script(kind, kind)
    searcher = Searcher(settings)
    try:
        with peak_rss() as rss:
            started = time.perf_counter()
            response = searcher.search("dumplings night market", 10)
            seconds = time.perf_counter() - started
    finally:
        searcher.close()
        server._script.clear()
    growth = max(0.0, rss[1] - rss[0])
    return {
        "server": label,
        "answer": kind,
        "seconds": round(seconds, 3),
        "bound_s": bound,
        "within_bound_plus_1s": seconds <= bound + 1.0,
        "rss_growth_mb": round(growth, 1),
        "rss_ok": growth < RSS_LIMIT_MB,
        "results": len(response.results),
        "mode": response.mode,
        "warning": response.warnings[0] if response.warnings else "",
    }


def rerank_rows(tmp: Path) -> list[dict[str, Any]]:
    server = FakeRerank("llama").start()
    try:
        write_notes(tmp / "r")
        settings = bench_settings([tmp / "r"], tmp / "r.db", embedder__name="hashing")
        reindex(settings=settings)
        on = settings.with_values(rerank__backend="http", rerank__base_url=server.base_url)
        return [measure("re-rank", k, server, on, RERANK_BOUND) for k in KINDS]
    finally:
        server.stop()


def embedder_rows(tmp: Path) -> list[dict[str, Any]]:
    server = FakeOpenAI().start()
    try:
        write_notes(tmp / "e")
        settings = bench_settings(
            [tmp / "e"],
            tmp / "e.db",
            embedder__name="openai",
            embedder__base_url=server.base_url,
            embedder__dimensions=64,
        )
        reindex(settings=settings)
        return [measure("embedding", k, server, settings, QUERY_BOUND) for k in KINDS]
    finally:
        server.stop()


def table(rows: list[dict[str, Any]]) -> str:
    columns = ["server", "answer", "seconds", "bound_s", "within_bound_plus_1s"]
    columns += ["rss_growth_mb", "mode", "results"]
    return markdown_table(columns, ([row[c] for c in columns] for row in rows))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=OUT / "hostile_http.json")
    args = parser.parse_args(argv)
    runs: list[Callable[[Path], list[dict[str, Any]]]] = [rerank_rows, embedder_rows]
    before = machine()
    with tempfile.TemporaryDirectory() as folder:
        rows = [row for build in runs for row in build(Path(folder))]
    ok = all(r["within_bound_plus_1s"] and r["rss_ok"] and r["results"] for r in rows)
    print(table(rows))
    print(f"\nall within bound + 1 s, RSS growth < {RSS_LIMIT_MB:.0f} MB: {ok}")
    write_record(args.json, before, {"ok": ok, "rss_limit_mb": RSS_LIMIT_MB, "rows": rows})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
