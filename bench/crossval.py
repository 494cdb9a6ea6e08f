"""Cross-validated fusion constants: the relevance headline on conversations not tuned on.

    .venv/bin/python -m bench.crossval [--data DIR] [--index DIR] [--quick N] [--fixed-fusion]
        [--json PATH]

Runs every question of `bench.quality` (LoCoMo chats, QMSum meetings; the same cached
index) once per combination of a small grid of the hybrid pipeline's constants (RRF k ×
vector weight × one of: the shipped stages, coverage weight 0.5, recency weight 0, no
relevance floor, vector-side pseudo-relevance feedback at three β/depth points), and bm25
and vector once; `--fixed-fusion` keeps the shipped RRF k and vector weight only. Then,
per data set, leave one group out: for each group (a LoCoMo conversation, a QMSum domain)
the combination with the best mean MRR@10 on the OTHER groups is scored on
the held-out group's questions. The cross-validated figure is the mean over all questions
of their held-out scores; the in-sample figure is the single best combination on all
questions, scored on all of them; `analysis_without_signals` repeats the analysis without
the feedback points, for the comparison. Writes bench/out/crossval.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import quality
from bench import quality_data as qd
from bench.common import (
    DEFAULT_DATA,
    OUT,
    CachedEmbedder,
    Qrels,
    Run,
    evaluate,
    machine,
    markdown_table,
    write_record,
)
from engine.embedders import create_embedder
from engine.search import Searcher
from engine.settings import Settings

Measures = dict[str, float]
Scores = Mapping[str, Mapping[str, Measures]]  # combination -> qid -> measure -> value

CHOOSE_BY = "recip_rank"
COLUMNS = (("nDCG@10", "ndcg_cut_10"), ("MRR@10", "recip_rank"), ("R@10", "recall_10"))
LIMIT = 10  # what a user sees, and what bench.quality scores its @10 measures on

RRF_K = (10.0, 5.0, 20.0)  # the shipped value first: ties go to the shipped combination
VECTOR_WEIGHT = (1.25, 1.0, 1.5)
# One constant at a time away from the shipped stages (a full product would be 72 points).
VARIANTS: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = (
    ("shipped stages", ()),
    ("coverage 0.5", (("search__coverage_weight", 0.5),)),
    ("recency 0", (("search__recency_weight", 0.0),)),
    ("no floor", (("search__floor", False),)),
)
# Retrieval signals under trial, off by default (each at the shipped fusion constants only:
# `--fixed-fusion`).
SIGNALS: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = tuple(
    (
        f"vector prf b={b:g} m={m}",
        (
            ("search__vector_prf", True),
            ("search__vector_prf_beta", b),
            ("search__vector_prf_depth", m),
        ),
    )
    for b, m in ((0.3, 3), (0.5, 3), (0.5, 5))
)
# Name aliases (search.name_aliases) are not in the grid: LoCoMo and QMSum have no people
# file, so the setting changes nothing there (bench.personal measures it).

# QMSum's three domains, told apart by their speaker labels (val.jsonl names no domain).
PRODUCT_ROLES = ("Project Manager", "Marketing", "Industrial Designer", "User Interface")
ACADEMIC_ROLES = ("Professor", "Grad", "PhD", "Postdoc", "Undergrad")


@dataclass(frozen=True)
class Combo:
    """One point of the grid: a name and its setting changes."""

    name: str
    changes: tuple[tuple[str, Any], ...]


def grid(fixed_fusion: bool = False) -> list[Combo]:
    """Every RRF k × vector weight × stage variant, the shipped combination first;
    `fixed_fusion`: the shipped RRF k and vector weight only, with each stage variant and
    each signal under trial once."""
    combos = []
    ks, weights = (RRF_K[:1], VECTOR_WEIGHT[:1]) if fixed_fusion else (RRF_K, VECTOR_WEIGHT)
    variants = VARIANTS + SIGNALS if fixed_fusion else VARIANTS
    for k, vw, (variant, extra) in itertools.product(ks, weights, variants):
        changes = (("search__rrf_k", k), ("search__vector_weight", vw), *extra)
        combos.append(Combo(f"k={k:g} vector={vw:g}, {variant}", changes))
    return combos


# -- the fold logic (pure) ------------------------------------------------------------------


def mean_of(per_question: Mapping[str, Measures], qids: Sequence[str], key: str) -> float:
    """The mean of one measure over `qids` (0 for none)."""
    return sum(per_question[q][key] for q in qids) / len(qids) if qids else 0.0


def best(scores: Scores, qids: Sequence[str], key: str = CHOOSE_BY) -> str:
    """The combination with the highest mean `key` over `qids`; ties go to the earlier one."""
    chosen, top = "", float("-inf")
    for combo, per_question in scores.items():
        value = mean_of(per_question, qids, key)
        if value > top:
            chosen, top = combo, value
    return chosen


def leave_one_group_out(
    scores: Scores, groups: Mapping[str, str], key: str = CHOOSE_BY
) -> tuple[dict[str, Measures], dict[str, str]]:
    """Each question's scores under the combination chosen without its group, and the
    combination chosen for each held-out group."""
    held_out: dict[str, Measures] = {}
    chosen: dict[str, str] = {}
    for group in sorted(set(groups.values())):
        others = [q for q, g in groups.items() if g != group]
        combo = chosen[group] = best(scores, others, key)
        for q in (q for q, g in groups.items() if g == group):
            held_out[q] = scores[combo][q]
    return held_out, chosen


def summary(per_question: Mapping[str, Measures], qids: Sequence[str]) -> dict[str, float]:
    return {label: round(mean_of(per_question, qids, key), 4) for label, key in COLUMNS}


# -- groups ---------------------------------------------------------------------------------


def qmsum_domain(speakers: Sequence[str]) -> str:
    """'product' (AMI), 'academic' (ICSI) or 'committee' (parliaments), by speaker labels."""
    if any(s.startswith(PRODUCT_ROLES) for s in speakers):
        return "product"
    if any(s.startswith(ACADEMIC_ROLES) for s in speakers):
        return "academic"
    return "committee"


def qmsum_domains(data_dir: Path) -> dict[str, str]:
    """Meeting number ('07') -> its domain, in val.jsonl order (as quality_data numbers them)."""
    lines = (data_dir / "qmsum" / "val.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line]
    return {
        f"{m:02d}": qmsum_domain([str(t["speaker"]) for t in row["meeting_transcripts"]])
        for m, row in enumerate(rows)
    }


def group_of(question: qd.Question, domains: Mapping[str, str], by_meeting: bool) -> str:
    """LoCoMo: its conversation; QMSum: its domain, or with `by_meeting` its meeting."""
    if question.dataset == "locomo":
        return question.qid.rsplit("-", 1)[0]
    meeting = question.qid.split("-")[1]
    return f"meeting {meeting}" if by_meeting else domains[meeting]


# -- runs -----------------------------------------------------------------------------------


def run_mode(searcher: Searcher, questions: Sequence[qd.Question], mode: str) -> Run:
    return {
        q.qid: [r.id for r in searcher.search(q.query, LIMIT, mode=mode).results] for q in questions
    }


def scored(qrels: Qrels, run: Run) -> dict[str, Measures]:
    return evaluate(qrels, run, LIMIT, {"ndcg_cut.10", "recip_rank", "recall.10"})


def measure(
    settings: Settings,
    questions: Sequence[qd.Question],
    qrels: Qrels,
    embedder: CachedEmbedder,
    combos: Sequence[Combo],
) -> tuple[dict[str, dict[str, Measures]], dict[str, dict[str, Measures]]]:
    """Per-question scores of bm25 and vector (at the shipped settings) and of each combo."""
    singles: dict[str, dict[str, Measures]] = {}
    searcher = Searcher(settings, embedder=embedder)
    for mode in ("bm25", "vector"):
        singles[mode] = scored(qrels, run_mode(searcher, questions, mode))
    searcher.close()
    hybrid: dict[str, dict[str, Measures]] = {}
    for n, combo in enumerate(combos, 1):
        started = time.perf_counter()
        searcher = Searcher(settings.with_values(**dict(combo.changes)), embedder=embedder)
        hybrid[combo.name] = scored(qrels, run_mode(searcher, questions, "hybrid"))
        searcher.close()
        ms = (time.perf_counter() - started) * 1000 / max(1, len(questions))
        print(f"  [{n}/{len(combos)}] {combo.name}: {ms:.1f} ms/query", file=sys.stderr)
    return singles, hybrid


# -- per data set ---------------------------------------------------------------------------


def evaluate_set(
    singles: Mapping[str, Mapping[str, Measures]],
    hybrid: Scores,
    groups: Mapping[str, str],
    default: str,
) -> dict[str, Any]:
    """The rows of one data set's table, and which combination each fold chose."""
    qids = sorted(groups)
    held_out, chosen = leave_one_group_out(hybrid, groups)
    in_sample = best(hybrid, qids)
    sizes = Counter(groups.values())
    return {
        "questions": len(qids),
        "rows": {
            "bm25": summary(singles["bm25"], qids),
            "vector": summary(singles["vector"], qids),
            "hybrid, shipped defaults": summary(hybrid[default], qids),
            "hybrid, in-sample best": summary(hybrid[in_sample], qids),
            "hybrid, cross-validated": summary(held_out, qids),
        },
        "in_sample_choice": in_sample,
        "folds": {
            g: {
                "questions": sizes[g],
                "chosen": c,
                "held_out": summary(held_out, [q for q in qids if groups[q] == g]),
                "shipped_on_held_out": summary(
                    hybrid[default], [q for q in qids if groups[q] == g]
                ),
            }
            for g, c in chosen.items()
        },
    }


def set_groups(
    questions: Sequence[qd.Question], dataset: str, domains: Mapping[str, str], by_meeting: bool
) -> dict[str, str]:
    return {q.qid: group_of(q, domains, by_meeting) for q in questions if q.dataset == dataset}


def analyse(
    questions: Sequence[qd.Question],
    singles: Mapping[str, Mapping[str, Measures]],
    hybrid: Scores,
    domains: Mapping[str, str],
    default: str,
) -> dict[str, Any]:
    """LoCoMo by conversation, QMSum by domain (the headline) and by meeting."""
    return {
        name: evaluate_set(
            singles, hybrid, set_groups(questions, dataset, domains, meeting), default
        )
        for name, dataset, meeting in (
            ("locomo", "locomo", False),
            ("qmsum", "qmsum", False),
            ("qmsum, by meeting", "qmsum", True),
        )
    }


FUSION_KEYS = frozenset({"search__rrf_k", "search__vector_weight", "search__coverage_weight"})


def fusion_only(hybrid: Scores, combos: Sequence[Combo]) -> dict[str, Mapping[str, Measures]]:
    """The combinations that keep recency and the floor as shipped: only the fusion
    constants (RRF k, vector weight, coverage weight) are chosen."""
    kept = {c.name for c in combos if {key for key, _ in c.changes} <= FUSION_KEYS}
    return {name: per_q for name, per_q in hybrid.items() if name in kept}


SIGNAL_KEYS = frozenset({"search__vector_prf"})


def without_signals(hybrid: Scores, combos: Sequence[Combo]) -> dict[str, Mapping[str, Measures]]:
    """The combinations that leave the retrieval signals under trial (vector PRF) off."""
    kept = {c.name for c in combos if not {key for key, _ in c.changes} & SIGNAL_KEYS}
    return {name: per_q for name, per_q in hybrid.items() if name in kept}


def per_question(scores: Scores) -> dict[str, dict[str, list[float]]]:
    """combination -> qid -> [nDCG@10, MRR@10, R@10], for analyses after the run."""
    return {
        combo: {q: [round(m[key], 4) for _, key in COLUMNS] for q, m in per_q.items()}
        for combo, per_q in scores.items()
    }


def all_combos(hybrid: Scores, questions: Sequence[qd.Question]) -> dict[str, Any]:
    """Every combination's in-sample means per data set (for the JSON)."""
    sets = {d: [q.qid for q in questions if q.dataset == d] for d in ("locomo", "qmsum")}
    return {
        combo: {d: summary(per_q, qids) for d, qids in sets.items()}
        for combo, per_q in hybrid.items()
    }


# -- report ---------------------------------------------------------------------------------


def report(analysis: Mapping[str, Any]) -> str:
    parts = []
    for name, result in analysis.items():
        rows = [[row, *values.values()] for row, values in result["rows"].items()]
        folds = [
            [
                g,
                f["questions"],
                f["chosen"],
                f["held_out"]["MRR@10"],
                f["shipped_on_held_out"]["MRR@10"],
            ]
            for g, f in result["folds"].items()
        ]
        stable = Counter(f["chosen"] for f in result["folds"].values()).most_common(1)[0]
        parts.append(
            f"**{name}** ({result['questions']} questions)\n\n"
            + markdown_table(["pipeline", *[c for c, _ in COLUMNS]], rows)
            + f"\n\nin-sample best: {result['in_sample_choice']}\n\n"
            + markdown_table(
                ["held-out group", "questions", "chosen on the others", "MRR@10", "shipped MRR@10"],
                folds,
            )
            + f"\n\nmost frequent choice: {stable[0]} ({stable[1]} of {len(folds)} folds)"
        )
    return "\n\n".join(parts)


# -- main -----------------------------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.crossval", description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, default=DEFAULT_DATA, help="evaluation data folder")
    p.add_argument(
        "--index",
        type=Path,
        default=None,
        metavar="DIR",
        help="a bench/out/quality-* folder to reuse (default: bench.quality's, built if missing)",
    )
    p.add_argument("--quick", type=int, default=0, metavar="N", help="only N questions per set")
    p.add_argument(
        "--fixed-fusion",
        action="store_true",
        help="only the shipped RRF k and vector weight, each stage variant and each signal "
        "under trial (vector PRF) once",
    )
    p.add_argument("--json", type=Path, default=OUT / "crossval.json")
    return p


def load_index(data_dir: Path, index: Path | None) -> tuple[Path, qd.Layer]:
    if index is None:
        return quality.build(data_dir, rebuild=False)
    manifest = index / "layer.json"
    if not manifest.exists():
        raise SystemExit(f"error: {index} holds no quality index (no layer.json)")
    return index, qd.Layer.from_json(json.loads(manifest.read_text()))


def results(
    questions: Sequence[qd.Question],
    singles: Mapping[str, Mapping[str, Measures]],
    hybrid: Scores,
    combos: Sequence[Combo],
    domains: Mapping[str, str],
) -> dict[str, Any]:
    """Both analyses, every combination's means and every question's scores."""
    shipped = combos[0].name
    return {
        "grid": [{"name": c.name, "changes": dict(c.changes)} for c in combos],
        "qmsum_domains": dict(domains),
        "analysis": analyse(questions, singles, hybrid, domains, shipped),
        "analysis_fusion_only": analyse(
            questions, singles, fusion_only(hybrid, combos), domains, shipped
        ),
        "analysis_without_signals": analyse(
            questions, singles, without_signals(hybrid, combos), domains, shipped
        ),
        "combinations": all_combos(hybrid, questions),
        "per_question": per_question({**singles, **hybrid}),
    }


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if not quality.has_data(args.data):
        print(f"skipped: no evaluation data at {args.data} (expects locomo/ and qmsum/val.jsonl)")
        return 0
    started, before = time.perf_counter(), machine()
    target, layer = load_index(args.data, args.index)
    settings = quality.base_settings(target, layer)
    mapping, chunks = quality.resolve_evidence(settings, layer)
    questions = quality.select_questions(layer.questions, mapping, args.quick)
    qrels = {q.qid: mapping.qrels[q.qid] for q in questions}
    embedder, combos = CachedEmbedder(create_embedder(settings)), grid(args.fixed_fusion)
    singles, hybrid = measure(settings, questions, qrels, embedder, combos)
    record = results(questions, singles, hybrid, combos, qmsum_domains(args.data))
    print("## The whole grid\n\n" + report(record["analysis"]))
    print("\n## Fusion constants only (recency and floor as shipped)\n")
    print(report(record["analysis_fusion_only"]))
    seconds = time.perf_counter() - started
    meta = {"index": Path(target).name, "chunks": chunks, "now": settings.now}
    runs = {"query_embeddings": len(embedder._cache), "seconds": round(seconds, 1)}
    # Every question's scores per combination, for later analyses: beside the result file,
    # as JSON lines (not kept in git: megabytes).
    scores = args.json.with_name(args.json.stem + "-questions.jsonl")
    scores.parent.mkdir(parents=True, exist_ok=True)
    with scores.open("w", encoding="utf-8") as out:
        for qid, row in record.pop("per_question").items():
            out.write(json.dumps({"qid": qid, "scores": row}) + "\n")
    write_record(args.json, before, {**meta, **runs, **record})
    print(
        f"\n{len(questions)} questions × {len(combos)} combinations; {len(embedder._cache)} query "
        f"embeddings computed; "
        f"{seconds:.0f} s; JSON in {args.json}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
