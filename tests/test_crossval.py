"""The fold logic of bench/crossval.py on literal per-question scores."""

from __future__ import annotations

import pytest

from bench import crossval as cv
from bench import quality_data as qd


def measures(mrr: float) -> dict[str, float]:
    return {"recip_rank": mrr, "ndcg_cut_10": mrr / 2, "recall_10": 1.0 if mrr else 0.0}


# Groups of unequal size: a per-group mean and a per-question mean differ.
GROUPS = {"a1": "A", "b1": "B", "b2": "B", "c1": "C"}
BY_GROUP = {  # combination -> group -> MRR@10 of each of its questions
    "only-A": {"A": 1.0, "B": 0.0, "C": 0.0},
    "broad": {"A": 0.2, "B": 0.6, "C": 0.6},
    "flat": {"A": 0.45, "B": 0.45, "C": 0.45},
}
SCORES = {
    combo: {q: measures(per[g]) for q, g in GROUPS.items()} for combo, per in BY_GROUP.items()
}


def test_each_fold_chooses_on_the_other_groups_only() -> None:
    held_out, chosen = cv.leave_one_group_out(SCORES, GROUPS)
    # Held out A: "only-A" is the best on A alone (and on all questions), never chosen here.
    # On B and C: broad 0.6 > flat 0.45 > only-A 0.
    assert chosen["A"] == "broad"
    # On A and C: only-A (1 + 0) / 2 = 0.5 > flat 0.45 > broad 0.4.
    assert chosen["B"] == "only-A"
    # On A, B, B: broad (0.2 + 0.6 + 0.6) / 3 = 0.467 > flat 0.45 > only-A 0.333.
    assert chosen["C"] == "broad"
    assert held_out == {
        "a1": measures(0.2),
        "b1": measures(0.0),
        "b2": measures(0.0),
        "c1": measures(0.6),
    }


def test_the_cross_validated_figure_is_the_mean_over_questions() -> None:
    held_out, _ = cv.leave_one_group_out(SCORES, GROUPS)
    figure = cv.summary(held_out, sorted(GROUPS))
    assert figure["MRR@10"] == pytest.approx((0.2 + 0.0 + 0.0 + 0.6) / 4)  # not (0.2+0+0.6)/3
    assert figure["nDCG@10"] == pytest.approx(0.1)
    assert figure["R@10"] == pytest.approx(0.5)


def test_in_sample_best_sees_every_question() -> None:
    # broad (0.2 + 0.6 + 0.6 + 0.6) / 4 = 0.5 > flat 0.45 > only-A 0.25.
    assert cv.best(SCORES, sorted(GROUPS)) == "broad"


def test_a_tie_goes_to_the_earlier_combination() -> None:
    tied = {"shipped": SCORES["flat"], "other": SCORES["flat"]}
    assert cv.best(tied, sorted(GROUPS)) == "shipped"


def test_evaluate_set_reports_rows_and_folds() -> None:
    singles = {"bm25": SCORES["flat"], "vector": SCORES["only-A"]}
    result = cv.evaluate_set(singles, SCORES, GROUPS, default="flat")
    assert result["questions"] == 4
    assert result["in_sample_choice"] == "broad"
    assert result["rows"]["hybrid, shipped defaults"]["MRR@10"] == pytest.approx(0.45)
    assert result["rows"]["hybrid, cross-validated"]["MRR@10"] == pytest.approx(0.2)
    assert result["folds"]["B"] == {
        "questions": 2,
        "chosen": "only-A",
        "held_out": cv.summary({"b": measures(0.0)}, ["b"]),
        "shipped_on_held_out": cv.summary({"b": measures(0.45)}, ["b"]),
    }


def test_the_grid_is_small_and_starts_with_the_shipped_settings() -> None:
    from engine.settings.table import SETTINGS

    shipped = {s.name.replace(".", "__"): s.default for s in SETTINGS}
    combos = cv.grid()
    assert len(combos) <= 40
    assert len({c.name for c in combos}) == len(combos)
    assert all(shipped[key] == value for key, value in combos[0].changes)
    assert all(key in shipped for c in combos for key, _ in c.changes)


def test_questions_are_grouped_by_conversation_and_by_domain() -> None:
    domains = {"03": "product"}
    chat = qd.Question("locomo-26-14", "locomo", "q")
    meeting = qd.Question("qmsum-03-2", "qmsum", "q")
    assert cv.group_of(chat, domains, by_meeting=False) == "locomo-26"
    assert cv.group_of(meeting, domains, by_meeting=False) == "product"
    assert cv.group_of(meeting, domains, by_meeting=True) == "meeting 03"


@pytest.mark.parametrize(
    ("speakers", "domain"),
    [
        (["Project Manager", "Marketing"], "product"),
        (["Professor E", "Grad B", "PhD C"], "academic"),
        (["Lynne Neagle AM", "Kirsty Williams AM"], "committee"),
        (["The Chair (Hon. Anthony Rota (Nipissing—Timiskaming, Lib.))"], "committee"),
    ],
)
def test_qmsum_domain_by_speaker_labels(speakers: list[str], domain: str) -> None:
    assert cv.qmsum_domain(speakers) == domain


def test_fusion_only_keeps_the_shipped_stages() -> None:
    combos = cv.grid()
    kept = cv.fusion_only({c.name: {} for c in combos}, combos)
    assert len(kept) == 18  # RRF k × vector weight × coverage weight 1 / 0.5
    assert combos[0].name in kept
    assert not any("recency" in name or "floor" in name for name in kept)
