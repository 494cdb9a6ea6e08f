"""Adversarial HTTP answer bodies: the depth check before and after the linear scan, and a
search against a server sending one.

    .venv/bin/python -m bench.hostile_bodies     # writes bench/out/hostile_bodies.json

For each body (64 KB and 1 MB: escaped quotes with no closing quote, backslashes, brackets
inside a string, deep nesting, a flat array) it times the depth check as it was (a regex
removing whole strings from the body, kept here as `OLD_STRING`; run in a child process
stopped after `OLD_CAP_S`) and as it is (`engine.jsonscan.scan` with the nesting limit), and
the whole read (`engine.net.parse_json`: the scan, then `json.loads`). Then one search with
the HTTP re-ranker, and one with the OpenAI-compatible embedder, against a fake server on
127.0.0.1 answering 1 MB of escaped quotes: its wall time beside its bound.
"""

from __future__ import annotations

import argparse
import multiprocessing
import re
import sys
import tempfile
import time
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path
from typing import Any

from bench.common import OUT, REPO, bench_settings, machine, markdown_table, write_record
from engine import jsonscan, net
from engine.index.runs import reindex
from engine.search import Searcher
from engine.settings import Settings

sys.path.insert(0, str(REPO))
from tests.fake_http import ScriptedServer  # noqa: E402
from tests.fake_openai import FakeOpenAI  # noqa: E402
from tests.fake_rerank import FakeRerank  # noqa: E402

KB, MB = 1024, 1024 * 1024
OLD_CAP_S = 60.0  # the old check is stopped here: at 1 MB it ran for about an hour
RERANK_BOUND, QUERY_BOUND = 5.0, 10.0  # as in bench.hostile_http
OLD_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}
NOTES = [f"Note {i}: dumplings at the night market, stall {i}, with Priya." for i in range(8)]


def bodies(size: int) -> dict[str, bytes]:
    """The adversarial bodies, each `size` bytes or a few more."""
    return {
        "escaped quotes, never closed": b'{"results": "' + b'\\"' * (size // 2),
        "backslashes, then a quote": b'["' + b"\\" * size + b'"]',
        "brackets inside a string": b'["' + b"[{" * (size // 2) + b'"]',
        "nested half its bytes deep": b"[" * (size // 2) + b"]" * (size // 2),
        "a flat array": b"[" + b"0," * (size // 2) + b"0]",
    }


def old_nested_deeper(raw: bytes, limit: int) -> bool:
    """The depth check as it was in engine/net.py."""
    brackets = OLD_STRING.sub(b"", raw).translate(None, _NOT_BRACKET)
    if brackets.count(b"[") + brackets.count(b"{") <= limit:
        return False
    return max(accumulate(map(_STEP.__getitem__, brackets))) > limit


def _old_in_child(raw: bytes) -> None:
    old_nested_deeper(raw, net.MAX_DEPTH)


def old_seconds(raw: bytes) -> float | None:
    """The old check's time in a child process, or None if it passed OLD_CAP_S."""
    child = multiprocessing.get_context("fork").Process(target=_old_in_child, args=(raw,))
    started = time.perf_counter()
    child.start()
    child.join(OLD_CAP_S)
    seconds = time.perf_counter() - started
    if child.is_alive():
        child.kill()
        child.join()
        return None
    return seconds


def timed(work: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    try:
        result = work()
    except net.NetError as exc:
        result = str(exc)
    return time.perf_counter() - started, result


def body_row(name: str, raw: bytes) -> dict[str, Any]:
    scan_s, shape = timed(lambda: jsonscan.scan(raw, limit=net.MAX_DEPTH))
    parse_s, parsed = timed(lambda: net.parse_json(raw))
    old = old_seconds(raw)
    return {
        "body": name,
        "bytes": len(raw),
        "old_check_s": None if old is None else round(old, 4),
        "old_cap_s": OLD_CAP_S,
        "scan_s": round(scan_s, 5),
        "scan_steps": shape.steps,
        "parse_json_s": round(parse_s, 5),
        "parse_json": parsed if isinstance(parsed, str) else "read",
    }


def searched(
    label: str, server: ScriptedServer, settings: Settings, bound: float
) -> dict[str, Any]:
    """One search with 1 MB of escaped quotes scripted on `server` (twice: for a retry)."""
    body = bodies(MB)["escaped quotes, never closed"]
    server.script(("raw", 200, body), ("raw", 200, body))
    searcher = Searcher(settings)
    try:
        seconds, response = timed(lambda: searcher.search("dumplings night market", 10))
    finally:
        searcher.close()
    return {
        "server": label,
        "seconds": round(seconds, 3),
        "bound_s": bound,
        "within_bound_plus_1s": seconds <= bound + 1.0,
        "results": len(response.results),
        "mode": response.mode,
        "warning": response.warnings[0] if response.warnings else "",
    }


def search_rows(tmp: Path) -> list[dict[str, Any]]:
    (tmp / "notes").mkdir(parents=True)
    for i, text in enumerate(NOTES):
        (tmp / "notes" / f"n{i}.md").write_text(f"# Lunch {i}\n{text}\n")
    rerank, openai = FakeRerank("llama").start(), FakeOpenAI().start()
    try:
        plain = bench_settings([tmp / "notes"], tmp / "r.db", embedder__name="hashing")
        reindex(settings=plain)
        on = plain.with_values(rerank__backend="http", rerank__base_url=rerank.base_url)
        embedded = bench_settings(
            [tmp / "notes"],
            tmp / "e.db",
            embedder__name="openai",
            embedder__base_url=openai.base_url,
            embedder__dimensions=64,
        )
        reindex(settings=embedded)
        return [
            searched("re-rank", rerank, on, RERANK_BOUND),
            searched("embedding", openai, embedded, QUERY_BOUND),
        ]
    finally:
        rerank.stop()
        openai.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=OUT / "hostile_bodies.json")
    args = parser.parse_args(argv)
    before = machine()
    rows = [body_row(name, raw) for size in (64 * KB, MB) for name, raw in bodies(size).items()]
    with tempfile.TemporaryDirectory() as folder:
        searches = search_rows(Path(folder))
    ok = all(s["within_bound_plus_1s"] and s["results"] for s in searches)
    columns = ["body", "bytes", "old_check_s", "scan_s", "scan_steps", "parse_json_s", "parse_json"]
    print(markdown_table(columns, ([r[c] for c in columns] for r in rows)))
    print(
        markdown_table(
            ["server", "seconds", "bound_s", "mode", "warning"],
            ([s[c] for c in ("server", "seconds", "bound_s", "mode", "warning")] for s in searches),
        )
    )
    write_record(args.json, before, {"ok": ok, "bodies": rows, "searches": searches})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
