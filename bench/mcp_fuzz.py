"""MCP fuzz: every line sent to `memex mcp` answered, how fast, and whether the server grows.

    .venv/bin/python -m bench.mcp_fuzz [--lines 2000] [--seed 7] [--quiet-load 1.5]

On the demo layer (indexed once into bench/out/mcp-demo/ with the local model, shared with
bench.mcp_latency), starts the real `memex mcp` and writes raw lines to its stdin one at a
time, each after the previous one's answer: tool calls whose strings hold lone surrogates
(JSON's "\\ud800" escapes), control characters, FTS5 operators, 2,000-character queries and
arguments of the wrong type; unknown tools and methods; ids that are strings with
surrogates, huge integers, null, true or 2.5; lines that are not JSON or not JSON-RPC.
For each it checks that exactly one response came, with the id the request carried (null
where the line had no usable id), and times the round trip. The server's RSS is read from
/proc after a warm-up, every 500 lines and at the end (the model's buffers grow with the
longest query seen, then stay: "flat" is the growth over the second half). Writes
bench/out/mcp_fuzz.json.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from queue import Empty, Queue
from typing import Any

from bench import perf_index
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

TARGET = OUT / "mcp-demo"
WARMUP_LINES = 200
RSS_EVERY = 500
ANSWER_TIMEOUT_S = 60.0
NO_ID = object()  # the response's id must be null
WORDS = [*" ".join(QUERIES).split(), "AND", "OR", "NOT", "NEAR", '"', "*", "-", "c++", "é"]
ODD_CHARS = ["\ud800", "\udfff", "\udce9", "\x00", "\x1b[31m", "\u202e", "\ufeff", "🦀", "\n"]
IDS_WITHOUT_USE = [None, True, 2.5, {"a": 1}, [1]]


def hostile_text(rng: random.Random) -> str:
    parts = [rng.choice(WORDS) if rng.random() < 0.7 else rng.choice(ODD_CHARS) for _ in range(8)]
    text = " ".join(parts)
    return text * rng.randint(1, 250) if rng.random() < 0.05 else text


def hostile_value(rng: random.Random) -> Any:
    choices: list[Any] = [hostile_text(rng), rng.randint(-5, 60), 10**30, True, None, 1.5]
    choices += [[hostile_text(rng)], {"x": hostile_text(rng)}, ""]
    return rng.choice(choices)


def tool_call(rng: random.Random) -> tuple[str, dict[str, Any]]:
    tool = rng.choice(["search"] * 6 + ["get", "person", "status", "nonesuch\ud800"])
    arguments: dict[str, Any] = {}
    if tool == "search":
        arguments["query"] = hostile_text(rng)
    for name in rng.sample(["limit", "mode", "since", "source_types", "id", "name", "k"], 2):
        if rng.random() < 0.3:
            arguments[name] = hostile_value(rng)
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if rng.random() < 0.2:
        params["_meta"] = {"progressToken": hostile_text(rng)}
    return "tools/call", params


def request(rng: random.Random, n: int) -> dict[str, Any]:
    roll = rng.random()
    method, params = tool_call(rng) if roll < 0.8 else (rng.choice(METHODS), {})
    request_id: Any = rng.choice([n, f"req-{n}-\ud800", f"req-{n}", 10**30 + n])
    if rng.random() < 0.04:
        request_id = rng.choice(IDS_WITHOUT_USE)
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}


METHODS = ["tools/list", "ping", "resources/list", "no/such\udfff", "initialize"]
GARBAGE = [
    b"not json",
    b'{"jsonrpc": "2.0", "id": 1, "method"',
    b"[1, 2, 3]",
    b"NaN",
    b"\xff\xfe\xfd",
    b'{"jsonrpc": "1.0", "id": 9, "method": "ping"}',
    b"[" * 5000,
    b'"just a string"',
]


def line_and_expected_id(rng: random.Random, n: int) -> tuple[bytes, Any]:
    if rng.random() < 0.1:
        line = rng.choice(GARBAGE)
        return line, (9 if b'"id": 9' in line else NO_ID)
    line = json.dumps(request(rng, n), ensure_ascii=True).encode("ascii")
    sent_id = json.loads(line)["id"]  # as the wire carries it
    usable = isinstance(sent_id, str) or type(sent_id) is int
    return line, (sent_id if usable else NO_ID)


class Peer:
    """The server as a child process, one line in, one line out."""

    def __init__(self, target: Path, log: Path) -> None:
        self._log = log.open("wb")
        command = perf_index.memex_command()
        self.process = subprocess.Popen(
            [*command, "mcp", *perf_index.cli_args(target)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
        )
        self.lines: Queue[bytes] = Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def ask(self, line: bytes) -> dict[str, Any] | None:
        """The next line from the server after `line`, or None if none came in time."""
        self.send(line)
        try:
            answer: dict[str, Any] = json.loads(self.lines.get(timeout=ANSWER_TIMEOUT_S))
        except Empty:
            return None
        return answer

    def rss_mb(self) -> float:
        for row in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if row.startswith("VmRSS:"):
                return int(row.split()[1]) / 1024
        return float("nan")

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        code = self.process.wait(timeout=ANSWER_TIMEOUT_S)
        self._log.close()
        return code


def initialize(peer: Peer) -> None:
    client = {"name": "fuzz", "version": "1"}
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
    hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}
    opened = peer.ask(json.dumps(hello).encode())
    if opened is None or "result" not in opened:
        raise SystemExit(f"memex mcp did not initialize: {opened}")
    peer.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    # The first search waits for the model and the vectors to load: not a fuzz figure.
    search = {"name": "search", "arguments": {"query": "standup"}}
    first = {"jsonrpc": "2.0", "id": "warm", "method": "tools/call", "params": search}
    if peer.ask(json.dumps(first).encode()) is None:
        raise SystemExit("memex mcp did not answer its first search")


def fuzz(peer: Peer, lines: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    samples, searches, slowest, rss_samples = [], [], [], []
    unanswered = wrong_id = 0
    rss_after_warmup = 0.0
    for n in range(1, lines + 1):
        line, expected = line_and_expected_id(rng, n)
        sent = time.perf_counter()
        answer = peer.ask(line)
        took_ms = (time.perf_counter() - sent) * 1000
        if answer is None:
            unanswered += 1
            continue
        got = answer.get("id")
        wrong_id += got is not None if expected is NO_ID else got != expected
        samples.append(took_ms)
        slowest = sorted([*slowest, (took_ms, line[:100].decode(errors="replace"))])[-3:]
        if b'"search"' in line:
            searches.append(took_ms)
        if n == WARMUP_LINES:
            rss_after_warmup = peer.rss_mb()
        if n % RSS_EVERY == 0:
            rss_samples.append((n, round(peer.rss_mb(), 1)))
    alive = peer.ask(b'{"jsonrpc": "2.0", "id": "last", "method": "ping"}')
    return {
        "lines": lines,
        "seed": seed,
        "unanswered": unanswered,
        "wrong_id": wrong_id,
        "extra_lines": peer.lines.qsize(),
        "alive_after": alive == {"jsonrpc": "2.0", "id": "last", "result": {}},
        "round_trip_ms": percentiles(samples),
        "search_round_trip_ms": percentiles(searches),
        "rss_mb_after_warmup": rss_after_warmup,
        "rss_mb_end": peer.rss_mb(),
        "rss_mb_by_lines": rss_samples,
        "slowest": [{"ms": round(ms, 1), "line": text} for ms, text in reversed(slowest)],
    }


def second_half_growth(figures: dict[str, Any]) -> float:
    """RSS growth from the sample nearest half-way to the end: warm-up excluded."""
    samples = figures["rss_mb_by_lines"]
    if not samples:
        return float("nan")
    half = min(samples, key=lambda s: abs(s[0] - figures["lines"] / 2))
    return float(figures["rss_mb_end"] - half[1])


def figures_table(f: dict[str, Any]) -> str:
    trip, search = f["round_trip_ms"], f["search_round_trip_ms"]
    growth = f["rss_mb_end"] - f["rss_mb_after_warmup"]
    rows = [
        [
            "lines sent / unanswered / wrong id / extra",
            f"{f['lines']} / {f['unanswered']} / {f['wrong_id']} / {f['extra_lines']}",
        ],
        ["server alive after (ping answered), exit code", f"{f['alive_after']}, {f['exit_code']}"],
        [
            "round trip p50 / p95 / p99, all lines",
            f"{trip['p50']:.1f} / {trip['p95']:.1f} / {trip['p99']:.1f} ms",
        ],
        [
            f"round trip p50 / p95 / p99, {int(search['n'])} search calls",
            f"{search['p50']:.1f} / {search['p95']:.1f} / {search['p99']:.1f} ms",
        ],
        [
            f"RSS after {WARMUP_LINES} lines → end (growth)",
            f"{f['rss_mb_after_warmup']:.1f} → {f['rss_mb_end']:.1f} MB ({growth:+.1f})",
        ],
        ["RSS growth over the second half of the lines", f"{second_half_growth(f):+.1f} MB"],
    ]
    return markdown_table(["", "value"], rows)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.mcp_fuzz", description=__doc__.split("\n")[0])
    p.add_argument("--lines", type=int, default=2000, help="fuzz lines sent")
    p.add_argument("--seed", type=int, default=7, help="the random seed of the lines")
    p.add_argument("--rebuild", action="store_true", help="index the demo layer again")
    add_quiet_load(p)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.rebuild or not (TARGET / "memex.db").exists():
        build(TARGET)
    if args.quiet_load:
        wait_for_quiet(args.quiet_load)
    before = machine()
    peer = Peer(TARGET, TARGET / "mcp-fuzz-server.log")
    initialize(peer)
    figures = fuzz(peer, args.lines, args.seed)
    figures["exit_code"] = peer.close()
    log = (TARGET / "mcp-fuzz-server.log").read_text(errors="replace")
    figures["tracebacks_in_log"] = log.count("Traceback")
    print(figures_table(figures))
    print(
        "RSS (MB) by lines sent:", ", ".join(f"{n}: {mb}" for n, mb in figures["rss_mb_by_lines"])
    )
    write_figures("mcp_fuzz", before, figures)
    ok = not (figures["unanswered"] or figures["wrong_id"] or figures["extra_lines"])
    return 0 if ok and figures["alive_after"] else 1


if __name__ == "__main__":
    sys.exit(main())
