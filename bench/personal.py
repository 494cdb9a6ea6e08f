"""A graded benchmark of personal-data queries over the demo data layer.

    .venv/bin/python -m bench.personal [--update-baseline]

Reads bench/personal_cases.json: each case has a query, optional filters (source_types,
since, until, people) and graded relevant items, either a chunk (`file` relative to the
layer root + a `contains` substring unique among the file's chunks) or a person's profile
(`profile` name -> result id `profile:<slug>`). Prints nDCG@10 and MRR@10 per kind; the
test in tests/test_personal_benchmark.py holds the means to bench/personal_baseline.json.

Beside it, with the relevance floor on and off: the meaning-only set (bench/meaning.py:
nDCG@10, MRR@10, Recall@3) and the share of no-answer queries showing at most one hit
(bench/no_answer.py) on the demo layer and, when ../shared/data is there, the quality
layer (`--graded-only` skips both).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import apsw

from bench.common import (
    OUT,
    REPO,
    bench_settings,
    digest,
    engine_code_files,
    evaluate,
    machine,
    markdown_table,
    parse_sets,
    write_record,
)
from engine.index.runs import reindex
from engine.people import slugify
from engine.resources import demo_dir
from engine.search import Searcher
from engine.settings import Settings
from engine.store import db

CASES = REPO / "bench" / "personal_cases.json"
BASELINE = REPO / "bench" / "personal_baseline.json"
DEMO_TODAY = "2026-06-30T12:00:00"  # the demo layer's "today" (tests/conftest.py)
DEPTH = 10
MEASURES = {"ndcg_cut.10", "recip_rank"}


@dataclass(frozen=True)
class Case:
    id: str
    kind: str
    query: str
    relevant: tuple[dict[str, Any], ...]
    source_types: tuple[str, ...] = ()
    since: str | None = None
    until: str | None = None
    people: tuple[str, ...] = ()


@dataclass
class Resolution:
    qrels: dict[str, dict[str, int]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def load_cases(path: Path = CASES) -> list[Case]:
    raw = json.loads(path.read_text(encoding="utf-8"))
    items = raw["cases"] if isinstance(raw, dict) else raw
    return [
        Case(
            id=str(c["id"]),
            kind=str(c.get("kind", "other")),
            query=str(c["query"]),
            relevant=tuple(c["relevant"]),
            source_types=tuple(c.get("source_types") or ()),
            since=c.get("since"),
            until=c.get("until"),
            people=tuple(c.get("people") or ()),
        )
        for c in items
    ]


# -- relevant items -> result ids -----------------------------------------------------------


def resolve(conn: apsw.Connection, root: Path, cases: Sequence[Case]) -> Resolution:
    """Each relevant item to exactly one result id; anything else is a problem."""
    out = Resolution()
    for case in cases:
        grades: dict[str, int] = {}
        for item in case.relevant:
            found, problem = _resolve_item(conn, root, item)
            if problem:
                out.problems.append(f"{case.id}: {problem}")
            elif found:
                grades[found] = max(grades.get(found, 0), int(item.get("grade", 1)))
        out.qrels[case.id] = grades
    return out


def _resolve_item(conn: apsw.Connection, root: Path, item: dict[str, Any]) -> tuple[str, str]:
    if "profile" in item:
        return f"profile:{slugify(str(item['profile']))}", ""
    path = str((root / str(item["file"])).resolve())
    needle = str(item["contains"])
    ids = [
        r[0]
        for r in conn.execute(
            "SELECT id FROM chunks WHERE source_file = ? AND instr(content, ?) > 0", (path, needle)
        )
    ]
    if len(ids) != 1:
        return "", f"{item['file']} has {len(ids)} chunk(s) containing {needle!r} (want 1)"
    return ids[0], ""


# -- running and scoring --------------------------------------------------------------------


def run_cases(
    searcher: Searcher, cases: Sequence[Case], mode: str = "hybrid"
) -> dict[str, list[str]]:
    return {
        c.id: [
            r.id
            for r in searcher.search(
                c.query,
                DEPTH,
                c.source_types or None,
                since=c.since,
                until=c.until,
                people=c.people or None,
                mode=mode,
            ).results
        ]
        for c in cases
    }


def benchmark(
    settings: Settings, cases: Sequence[Case] | None = None, mode: str = "hybrid"
) -> dict[str, Any]:
    """Resolve, run and score every case on the index of `settings`, in one search mode."""
    cases = list(cases if cases is not None else load_cases())
    conn = db.connect(settings.db_path, create=False)
    try:
        resolution = resolve(conn, settings.roots[0], cases)
    finally:
        conn.close()
    searcher = Searcher(settings)
    try:
        runs = run_cases(searcher, cases, mode)
    finally:
        searcher.close()
    scored = [c for c in cases if resolution.qrels[c.id]]
    per_case = evaluate({c.id: resolution.qrels[c.id] for c in scored}, runs, DEPTH, MEASURES)
    return summarise(scored, per_case, resolution.problems, runs)


def summarise(
    cases: Sequence[Case],
    per_case: dict[str, dict[str, float]],
    problems: list[str],
    runs: dict[str, list[str]],
) -> dict[str, Any]:
    def means(ids: Sequence[str]) -> dict[str, float]:
        return {
            "ndcg@10": round(statistics.fmean(per_case[i]["ndcg_cut_10"] for i in ids), 4),
            "mrr@10": round(statistics.fmean(per_case[i]["recip_rank"] for i in ids), 4),
            "cases": len(ids),
        }

    kinds = sorted({c.kind for c in cases})
    return {
        "mean": means([c.id for c in cases]),
        "per_kind": {k: means([c.id for c in cases if c.kind == k]) for k in kinds},
        "per_case": {
            c.id: {
                "kind": c.kind,
                "query": c.query,
                "ndcg@10": round(per_case[c.id]["ndcg_cut_10"], 4),
                "mrr@10": round(per_case[c.id]["recip_rank"], 4),
                "top3": runs[c.id][:3],
            }
            for c in cases
        },
        "problems": problems,
    }


def report(summary: dict[str, Any]) -> str:
    rows = [[k, v["cases"], v["ndcg@10"], v["mrr@10"]] for k, v in summary["per_kind"].items()]
    m = summary["mean"]
    rows.append(["**all**", m["cases"], m["ndcg@10"], m["mrr@10"]])
    return markdown_table(["kind", "cases", "nDCG@10", "MRR@10"], rows)


# -- the meaning-only and no-answer sets, floor on and off ---------------------------------

FLOOR_OFF = {"search__floor": False}


def beside(settings: Settings, quality: bool) -> dict[str, Any]:
    """The meaning-only set and the no-answer shares, with the floor on and off."""
    from bench import meaning, no_answer  # both import this module

    layers = {"demo": settings}
    if quality and qb_data_present():
        layers["quality"] = no_answer.layers(False)["quality"]
    queries = no_answer.load_queries()
    shares = {
        name: {
            state: round(no_answer.share_at_most_one(no_answer.hits_shown(s, queries)), 3)
            for state, s in (("floor_on", layer), ("floor_off", layer.with_values(**FLOOR_OFF)))
        }
        for name, layer in layers.items()
    }
    return {"meaning": meaning.benchmark(settings), "no_answer": shares}


def qb_data_present() -> bool:
    from bench.common import DEFAULT_DATA

    return (DEFAULT_DATA / "locomo").is_dir() and (DEFAULT_DATA / "qmsum").is_dir()


def beside_report(extra: dict[str, Any]) -> str:
    from bench import meaning

    rows = [[name, v["floor_on"], v["floor_off"]] for name, v in extra["no_answer"].items()]
    shares = markdown_table(["no-answer (≤ 1 hit)", "floor on", "floor off"], rows)
    return meaning.report(extra["meaning"]) + "\n\n" + shares


# -- the demo index -------------------------------------------------------------------------


def demo_index(rebuild: bool = False) -> Settings:
    """The demo layer indexed once per demo-data + engine-code hash, under bench/out/."""
    files = [p for p in demo_dir().rglob("*") if p.is_file()]
    target = OUT / f"personal-{digest(files + engine_code_files())}"
    root, db_path = target / "demo", target / "memex.db"
    settings = bench_settings([root], db_path, now=DEMO_TODAY)
    if rebuild or not (target / "done").exists():
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(demo_dir(), root)
        settings = bench_settings([root], db_path, now=DEMO_TODAY)
        stats = reindex(settings=settings)
        print(
            f"indexed the demo layer: {stats.chunks} chunks in {stats.seconds:.1f} s",
            file=sys.stderr,
        )
        (target / "done").write_text("ok")
    return settings


def cases_digest(path: Path = CASES) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def write_baseline(summary: dict[str, Any]) -> None:
    mean = summary["mean"]
    BASELINE.write_text(
        json.dumps(
            {
                "ndcg@10": mean["ndcg@10"],
                "mrr@10": mean["mrr@10"],
                "cases": mean["cases"],
                "cases_sha256": cases_digest(),
            },
            indent=2,
        )
        + "\n"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.personal", description=__doc__.split("\n")[0])
    p.add_argument("--rebuild", action="store_true", help="rebuild the cached demo index")
    p.add_argument(
        "--update-baseline",
        action="store_true",
        help=f"write the means to {BASELINE.relative_to(REPO)}",
    )
    p.add_argument("--json", type=Path, default=OUT / "personal.json")
    p.add_argument(
        "--modes", action="store_true", help="also score bm25 and vector alone (a table of means)"
    )
    p.add_argument(
        "--graded-only",
        action="store_true",
        help="skip the meaning-only set and the no-answer queries",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="search.KEY=VALUE",
        help="change a setting for this run (a stage on or off), as bench.quality takes it",
    )
    args = p.parse_args(argv)
    if not CASES.exists():
        print(f"skipped: {CASES.relative_to(REPO)} does not exist yet")
        return 0
    before = machine()
    settings = demo_index(args.rebuild).with_values(**parse_sets(args.set))
    summary = benchmark(settings)
    print(report(summary))
    if args.modes:
        summary["modes"] = {m: benchmark(settings, mode=m)["mean"] for m in ("bm25", "vector")}
        rows = [[m, *mean.values()] for m, mean in summary["modes"].items()]
        rows.append(["hybrid", *summary["mean"].values()])
        print(markdown_table(["mode", "nDCG@10", "MRR@10", "cases"], rows))
    if not args.graded_only:
        summary["beside"] = beside(settings, quality=True)
        print(beside_report(summary["beside"]))
        summary["problems"] += summary["beside"]["meaning"]["problems"]
    for problem in summary["problems"]:
        print(f"problem: {problem}", file=sys.stderr)
    write_record(args.json, before, summary)
    if args.update_baseline and args.set:
        raise SystemExit("--update-baseline records the default settings: drop --set")
    if args.update_baseline:
        write_baseline(summary)
        print(f"baseline written to {BASELINE.relative_to(REPO)}")
    return 1 if summary["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
