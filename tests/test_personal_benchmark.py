"""The graded personal benchmark as a ratchet: fail when relevance drops below the baseline.

The cases live in bench/personal_cases.json, the recorded means in
bench/personal_baseline.json (`python -m bench.personal --update-baseline` rewrites them).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from engine.settings import Settings
from engine.store import db

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

pytest.importorskip("pytrec_eval")
personal = pytest.importorskip("bench.personal")

EPSILON = 0.005

pytestmark = pytest.mark.skipif(
    not personal.CASES.exists(), reason="bench/personal_cases.json is not written yet"
)


def test_demo_today_matches_the_fixture() -> None:
    from tests.conftest import DEMO_TODAY

    assert personal.DEMO_TODAY == DEMO_TODAY


def test_every_relevant_item_resolves_to_exactly_one_chunk(demo_index: Settings) -> None:
    cases = personal.load_cases()
    assert len({c.id for c in cases}) == len(cases), "case ids must be unique"
    conn = db.connect(demo_index.db_path, create=False)
    try:
        resolution = personal.resolve(conn, demo_index.roots[0], cases)
    finally:
        conn.close()
    assert resolution.problems == []
    assert all(resolution.qrels[c.id] for c in cases), "every case needs a relevant item"


def test_relevance_does_not_drop_below_the_baseline(demo_index: Settings) -> None:
    baseline = json.loads(personal.BASELINE.read_text())
    assert baseline.get("cases_sha256") == personal.cases_digest(), (
        "bench/personal_cases.json changed since the baseline was recorded: check the cases, "
        "then run 'python -m bench.personal --update-baseline'"
    )
    summary = personal.benchmark(demo_index)
    now = summary["mean"]
    print("\n" + personal.report(summary))
    for key in ("ndcg@10", "mrr@10"):
        assert now[key] >= baseline[key] - EPSILON, (
            f"mean {key} fell to {now[key]:.4f} from the baseline {baseline[key]:.4f}"
        )
        if now[key] > baseline[key] + EPSILON:
            print(
                f"mean {key} rose to {now[key]:.4f} (baseline {baseline[key]:.4f}): "
                "record it with 'python -m bench.personal --update-baseline'"
            )
