"""The meaning-only set: queries whose answer shares no content word with them.

    .venv/bin/python -m bench.meaning

Reads bench/meaning_cases.json (the graded-case format of bench/personal_cases.json) and
scores it on the demo layer with the relevance floor on and off: nDCG@10, MRR@10 and
Recall@3. Only the vector side can find these answers, so the set measures what the floor
costs the queries the vector side exists for. Before scoring, the checker resolves every
relevant item to its chunk and refuses any case whose query shares a content word with it
(after lowercasing and simple stemming, stop words aside), so the set stays honest.
"""

from __future__ import annotations

import re
import statistics
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import apsw

from bench import personal
from bench.common import REPO, evaluate, markdown_table
from engine.search import Searcher
from engine.settings import Settings
from engine.store import db

CASES = REPO / "bench" / "meaning_cases.json"
MEASURES = {"ndcg_cut.10", "recip_rank", "recall.3"}
FLOOR_OFF = {"search__floor": False}

_STOP_TEXT = """a about above after again against all am an and any are as at be been before being
    below between both but by can could did didn do does doesn don down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is isn it its itself just like me more most my myself no nor not now of off on once
    only or other our ours ourselves out over own same she should so some such than that the
    their theirs them themselves then there these they this those through to too under until
    up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves s t d ll m re ve"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
SUFFIXES = ("ingly", "edly", "ing", "ies", "ied", "ed", "es", "ly", "s")
WORD = re.compile(r"[^\W_]+")


def stem(word: str) -> str:
    """A deliberately crude stemmer: strip one common suffix (keeping a stem of at least
    three letters), then a final "e", so "tired", "tire" and "tiring" meet."""
    for suffix in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def content_words(text: str) -> set[str]:
    """The stems of the words of `text` that are not stop words."""
    words = (w for w in WORD.findall(text.lower().replace("'", " ").replace("’", " ")))
    return {stem(w) for w in words if w not in STOP_WORDS}


def shared_words(query: str, texts: Iterable[str]) -> set[str]:
    """The query's content words that any of `texts` also holds."""
    asked = content_words(query)
    return set().union(*(asked & content_words(t) for t in texts)) if asked else set()


def load_cases(path: Path = CASES) -> list[personal.Case]:
    return personal.load_cases(path)


def chunk_texts(conn: apsw.Connection, ids: Iterable[str]) -> list[str]:
    """The text a query could match for each chunk: its title and its content."""
    out = []
    for chunk_id in ids:
        for title, content in conn.execute(
            "SELECT coalesce(title, ''), content FROM chunks WHERE id = ?", (chunk_id,)
        ):
            out.append(f"{title}\n{content}")
    return out


def check(conn: apsw.Connection, root: Path, cases: Sequence[personal.Case]) -> list[str]:
    """One problem per case that does not resolve or that shares a content word."""
    resolution = personal.resolve(conn, root, cases)
    problems = list(resolution.problems)
    for case in cases:
        shared = shared_words(case.query, chunk_texts(conn, resolution.qrels[case.id]))
        if shared:
            problems.append(f"{case.id}: {case.query!r} shares {sorted(shared)} with its answer")
    return problems


def scored(
    settings: Settings, cases: Sequence[personal.Case], qrels: dict[str, dict[str, int]]
) -> dict[str, float]:
    """The means of nDCG@10, MRR@10 and Recall@3 over `cases` on `settings`."""
    searcher = Searcher(settings)
    try:
        runs = personal.run_cases(searcher, cases)
    finally:
        searcher.close()
    per_case = evaluate(qrels, runs, personal.DEPTH, MEASURES)
    return {
        "ndcg@10": _mean(per_case, "ndcg_cut_10"),
        "mrr@10": _mean(per_case, "recip_rank"),
        "recall@3": _mean(per_case, "recall_3"),
    }


def _mean(per_case: dict[str, dict[str, float]], measure: str) -> float:
    return round(statistics.fmean(v[measure] for v in per_case.values()), 4)


def benchmark(settings: Settings, cases: Sequence[personal.Case] | None = None) -> dict[str, Any]:
    """Check the cases, then score the honest ones with the floor on and off."""
    cases = list(cases if cases is not None else load_cases())
    conn = db.connect(settings.db_path, create=False)
    try:
        problems = check(conn, settings.roots[0], cases)
        qrels = personal.resolve(conn, settings.roots[0], cases).qrels
    finally:
        conn.close()
    refused = {p.split(":", 1)[0] for p in problems}
    honest = [c for c in cases if c.id not in refused and qrels[c.id]]
    kept = {c.id: qrels[c.id] for c in honest}
    return {
        "cases": len(honest),
        "floor_on": scored(settings, honest, kept),
        "floor_off": scored(settings.with_values(**FLOOR_OFF), honest, kept),
        "problems": problems,
    }


def report(summary: dict[str, Any]) -> str:
    rows = [
        [name, summary["cases"], *summary[key].values()]
        for name, key in (("floor on", "floor_on"), ("floor off", "floor_off"))
    ]
    return markdown_table(["meaning-only", "cases", "nDCG@10", "MRR@10", "Recall@3"], rows)


def main() -> int:
    summary = benchmark(personal.demo_index())
    print(report(summary))
    for problem in summary["problems"]:
        print(f"problem: {problem}", file=sys.stderr)
    return 1 if summary["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
