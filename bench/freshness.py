"""Freshness: the time from saving a file to finding it with a search while `memex watch` runs.

    .venv/bin/python -m bench.freshness [--chunks 3000] [--saves 12] [--debounce 2.0]

Builds a realistic data layer (bench.perf_data), indexes it, starts the real `memex watch` in
a child process, then saves files the way people and sync jobs do — a new note, an append to
a chat log, an editor's atomic save (temp file + rename) — each with a unique word. Right
after each save a warm searcher (the same `Searcher.search` that `memex --search` runs,
hybrid mode, the local model) polls every 20 ms until the word is found. Each save is also
confirmed once with a cold `memex --search … --json` process, whose own start-up time is
reported apart. The figures include the watcher's debounce (the quiet period a file must
keep before it is indexed), which is the main term. Writes
bench/out/freshness-debounce-<debounce>.json (e.g. freshness-debounce-2.json).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.common import REPO, bench_settings, machine, write_figures
from bench.perf_data import LayerWriter
from engine.index.runs import reindex
from engine.search import Searcher
from engine.settings import Settings

MEMEX = [sys.executable, "-c", "import sys; from engine.cli import main; sys.exit(main())"]
POLL_SECONDS = 0.02
TIMEOUT_SECONDS = 60.0


def save(root: Path, i: int, word: str) -> str:
    """Save one file in one of three ways; returns which."""
    kind = ("new note", "chat append", "atomic save")[i % 3]
    if kind == "new note":
        path = root / "notes" / "fresh" / f"fresh-{i:03d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Fresh note {i}\n\nToday I wrote about {word} and the garden.\n")
    elif kind == "chat append":
        path = next(iter(sorted((root / "data" / "slack").glob("*.jsonl"))))
        with path.open("a", encoding="utf-8") as handle:
            handle.write(
                json.dumps(
                    {
                        "ts": f"{time.time():.6f}",
                        "channel": "fresh",
                        "user": "maya",
                        "user_name": "Maya",
                        "text": f"did anyone see the {word} report?",
                    }
                )
                + "\n"
            )
    else:
        path = root / "notes" / "fresh" / "edited.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".edited.md.{i}.tmp")
        temp.write_text(f"# Edited\n\nRevision {i} mentions {word} once.\n")
        os.replace(temp, path)
    return kind


def found(searcher: Searcher, word: str) -> bool:
    return any(word in r.content for r in searcher.search(word, limit=5).results)


def wait_found(settings: Settings, word: str, started: float) -> float:
    searcher = Searcher(settings)
    try:
        while time.perf_counter() - started < TIMEOUT_SECONDS:
            if found(searcher, word):
                return time.perf_counter() - started
            time.sleep(POLL_SECONDS)
    finally:
        searcher.close()
    raise TimeoutError(f"'{word}' not found within {TIMEOUT_SECONDS}s")


def cold_search(args: list[str], word: str) -> float:
    started = time.perf_counter()
    out = subprocess.run(
        [*MEMEX, *args, "--search", word, "--json"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    ).stdout
    assert any(word in r["content"] for r in json.loads(out)["results"]), word
    return time.perf_counter() - started


class Child:
    """`memex watch` in a child process; its lines are read on a thread."""

    def __init__(self, args: list[str], debounce: float) -> None:
        self.proc = subprocess.Popen(
            [*MEMEX, "watch", *args, "--debounce", str(debounce)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def wait_line(self, needle: str, timeout: float = 600) -> None:
        deadline = time.monotonic() + timeout
        while not any(needle in line for line in self.lines):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError(f"memex watch never said '{needle}': {self.lines}")
            time.sleep(0.05)

    def stop(self) -> int:
        self.proc.terminate()
        return self.proc.wait(timeout=60)


def time_saves(
    child: Child, root: Path, settings: Settings, args: list[str], saves: int
) -> list[dict[str, Any]]:
    """Save `saves` files while `memex watch` runs; how long until each is found."""
    rows: list[dict[str, Any]] = []
    child.wait_line("watching")
    for i in range(saves):
        word = f"zq{i:02d}fresh{os.getpid() % 1000}"
        kind = save(root, i, word)
        started = time.perf_counter()
        seconds = wait_found(settings, word, started)
        rows.append(
            {
                "kind": kind,
                "seconds": round(seconds, 3),
                "cold_cli_seconds": round(cold_search(args, word), 3),
            }
        )
        time.sleep(0.5)
    return rows


def run(chunks: int, saves: int, debounce: float, work: Path) -> dict[str, Any]:
    root, db_path = work / "layer", work / "index" / "memex.db"
    LayerWriter(root, chunks).write()
    settings = bench_settings([root], db_path)
    started = time.perf_counter()
    stats = reindex(settings=settings)
    index_seconds = time.perf_counter() - started
    config = db_path.parent / "bench-config.toml"
    args = ["--root", str(root), "--db", str(db_path), "--config", str(config)]
    child = Child(args, debounce)
    try:
        rows = time_saves(child, root, settings, args, saves)
    finally:
        code = child.stop()
    times = [float(r["seconds"]) for r in rows]
    cold = [float(r["cold_cli_seconds"]) for r in rows]
    return {
        "chunks": stats.chunks,
        "initial_index_seconds": round(index_seconds, 1),
        "debounce": debounce,
        "saves": rows,
        "median_seconds": round(statistics.median(times), 3),
        "max_seconds": max(times),
        "median_cold_cli_seconds": round(statistics.median(cold), 3),
        "watch_exit_code": code,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--chunks", type=int, default=3000)
    parser.add_argument("--saves", type=int, default=12)
    parser.add_argument("--debounce", type=float, default=2.0)
    args = parser.parse_args()
    before = machine()
    with tempfile.TemporaryDirectory(prefix="memex-fresh-") as work:
        result = run(args.chunks, args.saves, args.debounce, Path(work))
    print(json.dumps(result, indent=2))
    write_figures(f"freshness-debounce-{args.debounce:g}", before, result)


if __name__ == "__main__":
    main()
