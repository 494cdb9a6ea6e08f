"""Searching in ten languages: inflected forms, compounds and words inside runs of Han, Kana and
Hangul, nonsense in three scripts, and how well each chunk's language is told.

    .venv/bin/python -m bench.languages [--rebuild]

The data is written for this benchmark (bench/languages_data/<code>.json): per language 22
short messages of everyday life (chats, a mail catalog, notes), each with a query in another
form of one of its words (kind `inflected`; `compound`: the whole compound in another
inflection; `cjk`: a word inside a run; `cjk-one`: one character), and six nonsense queries.
The layer holds them beside the demo layer (English), so every query is searched in an index
of eleven languages, as a person's would be. Per language:
- keyword mode and the default (hybrid) mode: the share of queries whose message is in the
  top 3, and MRR@10;
- the nonsense queries: the share showing at most one hit (default mode, floor on), on this
  layer and on the demo layer alone (English, which the local model reads);
- language detection: the share of the language's chunks told right, and of its messages
  told right one by one (too short alone: why a chunk's window decides), with the time per
  message;
- each top-3 share again with the as-written order of keyword hits off (an ablation:
  engine/search/retrieve/as_written.py);
and bench.personal's 60 English queries on this index, with the as-written order and without.
Writes bench/out/languages.json. With --embedder (another model's vectors beside the local
model's): bench/languages_embedder.py, into the file --json names.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from bench import personal
from bench.common import (
    OUT,
    CachedEmbedder,
    bench_settings,
    digest,
    engine_code_files,
    machine,
    write_record,
)
from bench.personal import DEMO_TODAY, demo_index
from bench.report import relevance
from engine.embedders import create_embedder
from engine.index.runs import reindex
from engine.language.detect import Detector
from engine.resources import demo_dir
from engine.search import Searcher
from engine.search.query import forms
from engine.settings import Settings
from engine.store import db

DATA = Path(__file__).with_name("languages_data")
KEYWORD, DEFAULT = "bm25", "hybrid"


def load() -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(DATA.glob("*.json"))]


def write_layer(root: Path, languages: Sequence[dict[str, Any]]) -> None:
    """The demo layer, and each language's messages as two chats, a mail catalog and notes."""
    shutil.copytree(demo_dir(), root)
    for lang in languages:
        code, lines = lang["language"], [m[0] for m in lang["chat"]]
        chats: dict[str, list[str]] = {"family": [], "work": []}
        mail, notes = [], []
        for i, line in enumerate(lines):
            if i % 5 == 4:
                notes.append(line)
            elif i % 5 == 3:
                mail.append(line)
            else:
                chats["family" if i % 2 else "work"].append(line)
        for name, messages in chats.items():
            _write_lines(root / "data" / "telegram" / f"{code}-{name}.jsonl", [
                {"date": f"2026-05-{i + 1:02d}T{8 + i % 12:02d}:30:00", "chat": f"{code}-{name}",
                 "from": "Ana" if i % 2 else "Bo", "text": text}
                for i, text in enumerate(messages)
            ])  # fmt: skip
        _write_lines(root / "data" / "email" / f"{code}.jsonl", [
            {"date": f"2026-04-{i + 1:02d}", "from": "ana@example.org", "to": "bo@example.org",
             "subject": " ".join(text.split()[:3]), "summary": text}
            for i, text in enumerate(mail)
        ])  # fmt: skip
        for i, text in enumerate(notes):
            note = root / "notes" / code / f"{code}-{i}.md"
            note.parent.mkdir(parents=True, exist_ok=True)
            note.write_text(f"# {' '.join(text.split()[:2])}\n\n{text}\n", encoding="utf-8")


def _write_lines(path: Path, records: list[dict[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    path.write_text(text, encoding="utf-8")


def index(languages: Sequence[dict[str, Any]], rebuild: bool) -> Settings:
    """The layer indexed once per data + engine-code hash, under bench/out/."""
    files = [*DATA.glob("*.json"), *(p for p in demo_dir().rglob("*") if p.is_file())]
    target = OUT / f"languages-{digest(files + engine_code_files())}"
    settings = bench_settings([target / "layer"], target / "memex.db", now=DEMO_TODAY)
    if rebuild or not (target / "done").exists():
        shutil.rmtree(target, ignore_errors=True)
        write_layer(target / "layer", languages)
        settings = bench_settings([target / "layer"], target / "memex.db", now=DEMO_TODAY)
        stats = reindex(settings=settings)
        print(f"indexed {stats.chunks} chunks in {stats.seconds:.1f} s", file=sys.stderr)
        (target / "done").write_text("ok")
    return settings


def found_at(searcher: Searcher, query: str, wanted: set[str], mode: str) -> int | None:
    """The rank (1-based) of the first result holding the message, within 10; else None."""
    results = searcher.search(query, 10, mode=mode).results
    return next((i for i, r in enumerate(results, 1) if r.id in wanted), None)


def holding(settings: Settings, text: str) -> set[str]:
    """The ids of the chunks holding a message."""
    conn = db.connect(settings.db_path, create=False)
    try:
        rows = conn.execute("SELECT id FROM chunks WHERE instr(content, ?) > 0", (text,))
        return {str(r[0]) for r in rows}
    finally:
        conn.close()


def score_queries(searcher: Searcher, settings: Settings, lang: dict[str, Any]) -> dict[str, Any]:
    """Top-3 share and MRR@10 per mode, and the queries missed."""
    out: dict[str, Any] = {"queries": len(lang["chat"]), "missed": []}
    for mode in (KEYWORD, DEFAULT):
        ranks = []
        for text, query, kind in lang["chat"]:
            rank = found_at(searcher, query, holding(settings, text), mode)
            ranks.append(rank)
            if rank is None or rank > 3:
                out["missed"].append({"mode": mode, "query": query, "kind": kind, "rank": rank})
        out[mode] = {
            "top3": round(sum(1 for r in ranks if r and r <= 3) / len(ranks), 3),
            "mrr@10": round(sum(1 / r for r in ranks if r) / len(ranks), 3),
        }
    return out


def nonsense_shares(settings: Settings, queries: Sequence[str]) -> tuple[float, list[int]]:
    searcher = Searcher(settings, embedder=CachedEmbedder(create_embedder(settings)))
    try:
        counts = [len(searcher.search(q, 10).results) for q in queries]
    finally:
        searcher.close()
    return round(sum(1 for c in counts if c <= 1) / max(1, len(counts)), 3), counts


def detection(settings: Settings, lang: dict[str, Any]) -> dict[str, Any]:
    """Chunks told right (as stored), messages told right alone, µs per message."""
    conn = db.connect(settings.db_path, create=False)
    try:
        stored = conn.execute(
            "SELECT json_extract(metadata, '$.language') FROM chunks "
            "WHERE source_file LIKE ? OR source_file LIKE ?",
            (f"%/{lang['language']}-%", f"%/email/{lang['language']}.jsonl"),
        ).fetchall()
    finally:
        conn.close()
    detector = Detector()
    detector.judge("warm up the model")
    lines = [m[0] for m in lang["chat"]]
    started = time.perf_counter()
    alone = [detector.judge(line)[0] for line in lines]
    micros = (time.perf_counter() - started) / len(lines) * 1e6
    code = lang["language"]
    return {
        "chunks": len(stored),
        "chunks_right": round(sum(1 for (s,) in stored if s == code) / max(1, len(stored)), 3),
        "messages_right": round(sum(1 for a in alone if a == code) / len(alone), 3),
        "us_per_message": round(micros, 1),
    }


def benchmark(rebuild: bool) -> dict[str, Any]:
    languages = load()
    settings = index(languages, rebuild)
    searcher = Searcher(settings, embedder=CachedEmbedder(create_embedder(settings)))
    per: dict[str, Any] = {}
    nonsense = [q for lang in languages for q in lang["nonsense"]]
    try:
        for lang in languages:
            per[lang["name"]] = {
                **score_queries(searcher, settings, lang),
                "detection": detection(settings, lang),
            }
        with as_written_off():
            for lang in languages:
                scored = score_queries(searcher, settings, lang)
                per[lang["name"]]["as_written_off"] = {m: scored[m] for m in (KEYWORD, DEFAULT)}
    finally:
        searcher.close()
    here, counts = nonsense_shares(settings, nonsense)
    demo, demo_counts = nonsense_shares(demo_index(False), nonsense)
    return {
        "languages": per,
        "english": english(settings),
        "nonsense": {
            "queries": len(nonsense),
            "this_layer": here,
            "demo_layer": demo,
            "hits": dict(zip(nonsense, counts, strict=True)),
            "demo_hits": dict(zip(nonsense, demo_counts, strict=True)),
        },
    }


@contextmanager
def as_written_off() -> Iterator[None]:
    """Searches without the as-written order of keyword hits (engine/search/retrieve/
    as_written.py): the ablation beside each figure."""
    saved = forms.WRITTEN_WORDS
    forms.WRITTEN_WORDS = 0
    try:
        yield
    finally:
        forms.WRITTEN_WORDS = saved


def english(settings: Settings) -> dict[str, Any]:
    """bench.personal's English queries on this eleven-language index, per mode, with the
    as-written order and without it: what the languages cost a person's English searches."""
    out: dict[str, Any] = {}
    for label, off in (("as_written", False), ("as_written_off", True)):
        with as_written_off() if off else nullcontext():
            out[label] = {
                m: personal.benchmark(settings, mode=m)["mean"] for m in (DEFAULT, KEYWORD)
            }
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m bench.languages", description=__doc__.split("\n")[0]
    )
    p.add_argument("--rebuild", action="store_true", help="rebuild the cached index")
    p.add_argument("--json", type=Path, default=None, help="default: bench/out/languages.json")
    p.add_argument("--embedder", help="another embedder's name (bench/languages_embedder.py)")
    p.add_argument("--base-url", help="with --embedder openai: the server's URL")
    p.add_argument("--model", help="with --embedder: the model's id")
    p.add_argument(
        "--input-type", action="store_true", help="with --embedder openai: query/passage"
    )
    args = p.parse_args(argv)
    before = machine()
    if args.embedder:
        from bench import languages_embedder

        data = languages_embedder.run(args, args.json)
        print(languages_embedder.report(data))
        write_record(args.json, before, data)
        return 0
    data = benchmark(args.rebuild)
    print(relevance.languages(data))  # as docs/benchmarks.md shows it
    for name, v in data["languages"].items():
        for miss in v["missed"]:
            print(f"missed ({name}): {miss}", file=sys.stderr)
    write_record(args.json or OUT / "languages.json", before, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
