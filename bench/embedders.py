"""Embedding throughput (texts/s) per embedder, on real chat text (chitchat-dataset).

    .venv/bin/python -m bench.embedders [--short 2000] [--chunks 300] [--json FILE]   # default bench/out/embedders.json

Workloads: short chat messages (one message each) and ~130-token chunks (windows of ten
consecutive "Name: text" lines, as the indexer makes them). Embedders: the local ONNX model,
sentence-transformers on the same MiniLM in fp32 (skipped when not installed) and the openai
embedder against a local OpenAI-compatible server on 127.0.0.1 (tests/fake_openai.py), which
measures the plumbing (batching, HTTP, JSON/base64, normalising), not OpenAI's latency.
Each figure is the best of `--repeat` runs after one warm-up batch.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import OUT, REPO, bench_settings, machine, markdown_table, write_record
from engine.embedders import Embedder, EmbedderError, create_embedder

sys.path.insert(0, str(REPO))
from tests.fake_openai import FakeOpenAI  # noqa: E402


def workloads(short: int, chunks: int) -> dict[str, list[str]]:
    from bench.perf_data import chitchat_conversations

    lines = [(line.sender, line.text) for conv in chitchat_conversations()[:3000] for line in conv]
    messages = [text for _, text in lines[:short]]
    windows = [
        "\n".join(f"{s}: {t}" for s, t in lines[i : i + 10]) for i in range(0, 10 * chunks, 10)
    ]
    return {"short chat messages": messages, "chat windows of 10 messages": windows}


def mean_tokens(texts: list[str]) -> float:
    from tokenizers import Tokenizer

    from engine.embedders.local import model_files

    tokenizer = Tokenizer.from_file(str(model_files()[1]))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return sum(len(e.ids) for e in tokenizer.encode_batch(texts)) / max(len(texts), 1)


def throughput(embedder: Embedder, texts: list[str], repeat: int) -> tuple[float, float]:
    """(texts per wall second, texts per CPU second of this process), best of `repeat`.

    CPU seconds count every thread of the process (onnxruntime's, torch's, the local server's),
    so the second figure stays meaningful on a machine that other work keeps busy.
    """
    embedder.embed(texts[:32])  # warm-up: sessions, connections, lazy imports
    wall = cpu = float("inf")
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        embedder.embed(texts)
        wall = min(wall, time.perf_counter() - started)
        cpu = min(cpu, time.process_time() - started_cpu)
    return len(texts) / wall, len(texts) / max(cpu, 1e-9)


def embedders(tmp: Path, server: FakeOpenAI) -> dict[str, Callable[[], Embedder]]:
    def make(**values: Any) -> Callable[[], Embedder]:
        return lambda: create_embedder(bench_settings([tmp], tmp / "x.db", **values))

    from engine.embedders.openai_embedder import OpenAIEmbedder

    def openai(encoding: str) -> Callable[[], Embedder]:
        def build() -> Embedder:
            emb = OpenAIEmbedder(
                "text-embedding-3-small",
                base_url=server.base_url,
                api_key="sk-bench",
                dimensions=1536,
            )
            emb._encoding = encoding
            return emb

        return build

    return {
        "local (ONNX int8, 384-d)": make(),
        "sentence-transformers (torch fp32, 384-d)": make(embedder__name="sentence-transformers"),
        "openai → local server, float JSON (1536-d)": openai("float"),
        "openai → local server, base64 (1536-d)": openai("base64"),
    }


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--short", type=int, default=2000)
    p.add_argument("--chunks", type=int, default=300)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--json", type=Path, default=OUT / "embedders.json")
    return p


def measure_one(
    label: str, build: Callable[[], Embedder], work: dict[str, list[str]], repeat: int
) -> tuple[list[Any], dict[str, Any]] | None:
    """(table row, JSON record) of one embedder; None when it cannot be created here."""
    try:
        started = time.perf_counter()
        embedder = build()
        load = time.perf_counter() - started
    except EmbedderError as exc:
        print(f"skip {label}: {exc}", file=sys.stderr)
        return None
    figures = {name: throughput(embedder, texts, repeat) for name, texts in work.items()}
    result = {
        "embedder": label,
        "load_seconds": round(load, 2),
        **{name: {"wall": round(w, 1), "cpu": round(c, 1)} for name, (w, c) in figures.items()},
    }
    row = [label, f"{load:.1f}", *(f"{w:,.0f} / {c:,.0f}" for w, c in figures.values())]
    return row, result


def measure_all(
    work: dict[str, list[str]], repeat: int
) -> tuple[list[list[Any]], list[dict[str, Any]]]:
    """Every embedder that can be created, with the local OpenAI-compatible server running."""
    server = FakeOpenAI().start()
    rows, results = [], []
    try:
        tmp = REPO / "bench" / "out" / "embedders"
        tmp.mkdir(parents=True, exist_ok=True)
        for label, build in embedders(tmp, server).items():
            measured = measure_one(label, build, work, repeat)
            if measured is not None:
                rows.append(measured[0])
                results.append(measured[1])
    finally:
        server.stop()
    return rows, results


def write_json(
    path: Path, before: dict[str, Any], tokens: dict[str, float], results: list[dict[str, Any]]
) -> None:
    """Each workload's mean tokens and each embedder's load time and throughputs."""
    write_record(path, before, {"tokens": tokens, "results": results})


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    work = workloads(args.short, args.chunks)
    tokens = {name: round(mean_tokens(texts), 1) for name, texts in work.items()}
    before = machine()
    rows, results = measure_all(work, args.repeat)
    headers = [
        "embedder",
        "load s",
        *(f"{name} ({tokens[name]} tok): texts/s wall / per CPU-s" for name in work),
    ]
    print(markdown_table(headers, rows))
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if args.json:
        write_json(args.json, before, tokens, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
