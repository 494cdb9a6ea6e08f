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


# -- the meaning-only set -------------------------------------------------------------------

meaning = pytest.importorskip("bench.meaning")


def test_shared_words_stem_and_skip_stop_words() -> None:
    assert meaning.shared_words("the tired rides", ["Riding while tiring"]) == {"tir", "rid"}
    assert meaning.shared_words("an espresso appliance", ["The office coffee machine"]) == set()
    assert meaning.shared_words("the and of", ["the and of"]) == set()


def test_the_checker_refuses_a_case_sharing_a_content_word(demo_index: Settings) -> None:
    story = {"file": "data/identity/stories.jsonl", "contains": "The office coffee machine"}
    honest = personal.Case("ok", "short", "espresso appliance", ({**story, "grade": 3},))
    leaky = personal.Case("leak", "short", "the machines at the office", ({**story, "grade": 3},))
    conn = db.connect(demo_index.db_path, create=False)
    try:
        problems = meaning.check(conn, demo_index.roots[0], [honest, leaky])
    finally:
        conn.close()
    assert len(problems) == 1 and problems[0].startswith("leak:")
    assert "machin" in problems[0] and "offic" in problems[0]


def test_every_meaning_case_resolves_and_shares_no_content_word(demo_index: Settings) -> None:
    cases = meaning.load_cases()
    assert len(cases) >= 60 and len({c.id for c in cases}) == len(cases)
    assert {"short", "synonym", "description", "thing"} <= {c.kind for c in cases}
    conn = db.connect(demo_index.db_path, create=False)
    try:
        assert meaning.check(conn, demo_index.roots[0], cases) == []
    finally:
        conn.close()
