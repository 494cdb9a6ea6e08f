"""docs/benchmarks.md is the report of bench/out/, and the relevance part renders its records."""

from __future__ import annotations

import json
from pathlib import Path

from bench.report import relevance
from bench.report.__main__ import OUT, TARGET, render, render_section
from bench.report.sections import sections


def test_the_committed_report_is_the_render_of_the_committed_results() -> None:
    assert TARGET.read_text(encoding="utf-8") == render(), "run: python -m bench.report"


def test_every_result_file_has_a_section() -> None:
    claimed = {s.result for s in sections()}
    orphans = sorted(p.stem for p in OUT.glob("*.json") if p.stem not in claimed)
    assert orphans == []


def run_record() -> dict[str, object]:
    machine = {
        "cpu": "Test CPU",
        "cpu_flags": ["avx", "avx2"],
        "cpus": 2,
        "memory_gb": 8.0,
        "python": "3.11.7",
        "load_avg_1m": 0.4,
    }
    return {
        "command": ".venv/bin/python -m bench.quality",
        "date": "2026-12-02 10:00 UTC",
        "commit": "abc1234",
        "machine_before": machine,
        "machine_after": {**machine, "load_avg_1m": 1.2},
    }


def test_a_section_heads_its_tables_with_command_machine_and_load(tmp_path: Path) -> None:
    record = {
        "run": run_record(),
        "chunks": 2441,
        "questions": {"locomo": 760, "qmsum": 237},
        "results": {
            "hybrid": {
                "ms_per_query": 21.5,
                "locomo": {"nDCG@10": 0.7691, "MRR@10": 0.7624, "R@10": 0.866, "R@50": 0.938},
                "qmsum": {"nDCG@10": 0.2651, "MRR@10": 0.4131, "R@10": 0.278, "R@50": 0.421},
            }
        },
    }
    (tmp_path / "quality.json").write_text(json.dumps(record))
    section = next(s for s in sections() if s.result == "quality")
    text = render_section(section, tmp_path)
    assert ".venv/bin/python -m bench.quality" in text
    assert "Test CPU (avx, avx2), 2 cores" in text and "load average 0.4 → 1.2" in text
    assert "| hybrid | 0.769 | 0.762 | 0.866 | 0.938 | 21.500 |" in text
    assert "**QMSum** (237 questions)" in text


def test_a_missing_result_says_how_to_make_it(tmp_path: Path) -> None:
    section = next(s for s in sections() if s.result == "crossval")
    text = render_section(section, tmp_path)
    assert "Not recorded: `.venv/bin/python -m bench.crossval`" in text


def test_personal_shows_kinds_modes_and_both_floor_states() -> None:
    mean = {"ndcg@10": 0.585, "mrr@10": 0.685, "cases": 60}
    data = {
        "mean": mean,
        "per_kind": {"person": {"ndcg@10": 0.568, "mrr@10": 0.79, "cases": 9}},
        "modes": {"bm25": {"ndcg@10": 0.436, "mrr@10": 0.554, "cases": 60}},
        "beside": {
            "meaning": {
                "cases": 62,
                "floor_on": {"nDCG@10": 0.336, "MRR@10": 0.275, "Recall@3": 0.343},
                "floor_off": {"nDCG@10": 0.34, "MRR@10": 0.28, "Recall@3": 0.35},
            },
            "no_answer": {"demo": {"floor_on": 0.906, "floor_off": 0.031}},
        },
    }
    text = relevance.personal(data)
    assert "| person | 9 | 0.568 | 0.790 |" in text
    assert "| bm25 | 0.436 | 0.554 |" in text and "| hybrid | 0.585 | 0.685 |" in text
    assert "| floor on | 62 | 0.336 | 0.275 | 0.343 |" in text
    assert "Recall@3 with the floor ÷ without it: 0.980" in text
    assert "| demo | 0.906 | 0.031 |" in text


def test_crossval_shows_the_folds_and_the_choice() -> None:
    means = {"nDCG@10": 0.75, "MRR@10": 0.74, "R@10": 0.86}
    fold = {
        "questions": 150,
        "chosen": "k 10 · w 1.25 · shipped stages",
        "held_out": {"MRR@10": 0.731},
        "shipped_on_held_out": {"MRR@10": 0.729},
    }
    data = {
        "chunks": 2441,
        "grid": [{"name": "k 10", "changes": {}}],
        "analysis": {
            "LoCoMo": {
                "questions": 760,
                "rows": {"cross-validated hybrid": means, "bm25": {**means, "MRR@10": 0.7}},
                "in_sample_choice": "k 10 · w 1.25 · shipped stages",
                "folds": {"conv-26": fold},
            }
        },
    }
    text = relevance.crossval(data)
    assert "| cross-validated hybrid | 0.750 | 0.740 | 0.860 |" in text
    assert "| conv-26 | 150 | k 10 · w 1.25 · shipped stages | 0.731 | 0.729 |" in text
    assert "(1 of 1 folds)" in text
