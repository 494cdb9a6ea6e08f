"""MCP warm search latency: `search` through `memex mcp` beside one-shot `memex --search`.

    .venv/bin/python -m bench.mcp_latency [--queries 200] [--one-shot 20] [--quiet-load 1.5]

On the demo layer (indexed once into bench/out/mcp-demo/ with the local model, by a child
`memex reindex`), times:
- `search` through MCP: the SDK's stdio client calls the real `memex mcp` child process, one
  call after another, round trip measured at the client (JSON-RPC over the pipes, the
  client's check of the result against the tool's output schema included), after the first
  call and five warm-up calls; also the server's own `took_ms` and the first call's time;
- one-shot: `memex --search QUERY --json` as a new process per query (start-up, model load
  and a vec0 scan), wall time.
Both run hybrid searches (limit 10) over the same queries: the demo's five and real message
fragments (bench.perf.make_queries). Writes bench/out/mcp_latency.json.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

from bench import perf, perf_index
from bench.common import (
    OUT,
    add_quiet_load,
    machine,
    markdown_table,
    percentiles,
    wait_for_quiet,
    write_figures,
)
from bench.demo import QUERIES, build
from engine.store import db

TARGET = OUT / "mcp-demo"
WARMUP_CALLS = 5


def queries(target: Path, n: int) -> list[str]:
    conn = db.connect(target / "memex.db", create=False)
    texts = [r[0] for r in conn.execute("SELECT content FROM chunks")]
    conn.close()
    return (list(QUERIES) + perf.make_queries(texts, n))[:n]


async def mcp_samples(target: Path, texts: list[str]) -> dict[str, Any]:
    """Client round trips of `search` over one session, and the server's own times."""
    command = perf_index.memex_command()
    params = StdioServerParameters(
        command=command[0], args=[*command[1:], "mcp", *perf_index.cli_args(target)]
    )
    with (target / "mcp-server.log").open("w", encoding="utf-8") as log:
        started = time.perf_counter()
        async with (
            stdio_client(params, errlog=log) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            ready = time.perf_counter()
            await session.call_tool("search", {"query": texts[0]})
            first = time.perf_counter()
            for text in texts[:WARMUP_CALLS]:
                await session.call_tool("search", {"query": text})
            round_trips, engine_ms = await timed_calls(session, texts)
    return {
        "start_to_initialized_s": ready - started,
        "first_call_ms": (first - ready) * 1000,
        "round_trip_ms": percentiles(round_trips),
        "server_took_ms": percentiles(engine_ms),
    }


async def timed_calls(session: ClientSession, texts: list[str]) -> tuple[list[float], list[float]]:
    """Each call's round trip at the client, and the engine's own `took_ms`, in ms."""
    round_trips, engine_ms = [], []
    for text in texts:
        sent = time.perf_counter()
        result = await session.call_tool("search", {"query": text, "limit": 10})
        round_trips.append((time.perf_counter() - sent) * 1000)
        if result.is_error:
            raise SystemExit(f"search failed through MCP: {result.content}")
        engine_ms.append(float(result.structured_content["took_ms"]))
    return round_trips, engine_ms


def one_shot_samples(target: Path, texts: list[str]) -> dict[str, float]:
    """Wall time of `memex --search QUERY --json`, one new process per query."""
    base = [*perf_index.memex_command(), *perf_index.cli_args(target)]
    samples = []
    for text in texts:
        started = time.perf_counter()
        subprocess.run([*base, "--search", text, "--json"], check=True, capture_output=True)
        samples.append((time.perf_counter() - started) * 1000)
    return {**percentiles(samples), "mean": statistics.fmean(samples)}


def figures_table(figures: dict[str, Any]) -> str:
    mcp, one_shot = figures["mcp"], figures["one_shot_ms"]
    trip, took = mcp["round_trip_ms"], mcp["server_took_ms"]
    rows = [
        [
            f"`search` through MCP, warm ({int(trip['n'])} calls), client round trip",
            f"{trip['p50']:.1f} ms",
            f"{trip['p95']:.1f} ms",
        ],
        ["  of which the engine (`took_ms`)", f"{took['p50']:.1f} ms", f"{took['p95']:.1f} ms"],
        [
            f"`memex --search --json`, one-shot ({int(one_shot['n'])} processes)",
            f"{one_shot['p50']:.0f} ms",
            f"{one_shot['p95']:.0f} ms",
        ],
        ["`memex mcp` start → initialized", f"{mcp['start_to_initialized_s'] * 1000:.0f} ms", ""],
        ["first `search` call after initialize", f"{mcp['first_call_ms']:.0f} ms", ""],
    ]
    return markdown_table(["", "p50", "p95"], rows)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench.mcp_latency", description=__doc__.split("\n")[0]
    )
    p.add_argument("--queries", type=int, default=200, help="MCP calls timed")
    p.add_argument("--one-shot", type=int, default=20, help="one-shot processes timed")
    p.add_argument("--rebuild", action="store_true", help="index the demo layer again")
    add_quiet_load(p)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.rebuild or not (TARGET / "memex.db").exists():
        build(TARGET)
    texts = queries(TARGET, args.queries)
    if args.quiet_load:
        wait_for_quiet(args.quiet_load)
    before = machine()
    figures = {
        "mcp": anyio.run(mcp_samples, TARGET, texts),
        "one_shot_ms": one_shot_samples(TARGET, texts[: args.one_shot]),
    }
    print(figures_table(figures))
    write_figures("mcp_latency", before, figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
