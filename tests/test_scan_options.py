"""bench/scan_options.py's non-timing logic: the switches, the tiling, the verdicts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from bench import scan_options as so
from engine.search.retrieve import bm25
from engine.search.retrieve import quantized as qz
from engine.search.retrieve.compute import Compute


def keyword_data(rows: int = 20_000, seed: int = 3) -> so.KeywordData:
    """Three queries over a rare, a middling and two common terms (the first one's top k
    provably the rare term's rows)."""
    rng = np.random.default_rng(seed)

    def postings(share: float) -> bm25.Postings:
        where = np.flatnonzero(rng.random(rows) < share).astype(np.int32)
        return where, rng.integers(1, 4, where.shape[0]).astype(np.float32)

    terms = [postings(0.004), postings(0.03), postings(0.3), postings(0.4)]
    found = [[terms[0], *terms[2:]], terms[2:], [terms[1], terms[3]]]
    norm = (bm25.K1 * (0.25 + 0.75 * rng.uniform(0.5, 1.5, rows))).astype(np.float64)
    seqs = np.arange(rows, dtype=np.int64) * 2 + 1
    return so.KeywordData(found, rows, norm, seqs)


def outputs(call: so.Call, n: int) -> list[np.ndarray]:
    return [call(i) for i in range(n)]


def test_keyword_switches_change_no_list() -> None:
    data = keyword_data()
    for arm in so.keyword_arms(data):
        for on, off in zip(outputs(arm.on, 3), outputs(arm.off, 3), strict=True):
            assert on.shape[0] == so.K
            np.testing.assert_array_equal(on, off)
    assert bm25.__dict__["np"] is np  # every switch put back


def test_tiled_keywords_offset_each_copy() -> None:
    data = keyword_data(rows=500)
    tiled = so.tiled_keywords(data, 3)
    where, freqs = tiled.found[0][0]
    first = data.found[0][0][0]
    np.testing.assert_array_equal(where, np.concatenate([first, first + 500, first + 1000]))
    assert freqs.shape == where.shape and tiled.rows == 1500
    assert tiled.norm.shape == (1500,) and np.unique(tiled.seqs).shape == (1500,)
    assert np.all(np.diff(tiled.seqs) > 0)
    assert so.tiled_keywords(data, 1) is data


def unit_rows(rows: int, dim: int = 32, seed: int = 1) -> so.FloatArray:
    matrix = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


def test_grown_copies_are_noisy_unit_rows() -> None:
    matrix, starts = unit_rows(100, dim=384), np.array([0, 3, 40], dtype=np.int64)
    out, grown_starts = so.grown(matrix, starts, 3)
    assert out.shape == (300, 384)
    np.testing.assert_array_equal(out[:100], matrix)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-5)
    cosines = np.sum(out[100:200] * matrix, axis=1)
    assert 0.7 < float(cosines.mean()) < 0.9  # σ = 0.038 at 384-d: cos ≈ 0.8
    np.testing.assert_array_equal(grown_starts, [0, 3, 40, 100, 103, 140, 200, 203, 240])


def test_vector_arms_restore_the_engine_and_agree() -> None:
    matrix = unit_rows(4000)
    layout = qz.Layout(np.arange(0, 4000, 2, dtype=np.int64), 4000)
    queries = unit_rows(3, seed=9)
    compute = Compute()
    arms, sizes = so.vector_arms(matrix, layout, queries, 400, compute)
    assert sizes["binary_bytes"] == 4000 * 8 and sizes["int8_bytes"] == 4000 * 32
    by_name = {arm.name: arm for arm in arms}
    for name in ("helper-thread split", "sampled binary cut", "narrow-filter gather"):
        arm = by_name[name]
        for on, off in zip(outputs(arm.on, 3), outputs(arm.off, 3), strict=True):
            np.testing.assert_array_equal(on, off)
    assert qz.SAMPLE_STRIDE == 16 and qz.NARROW_SHARE == 0.2
    assert qz.candidate_chunks is not so.every_candidate_chunk
    assert not by_name["binary scan (auto)"].applies  # 4,000 parts: auto scans exactly
    compute.close()


def test_every_candidate_chunk_holds_the_cut_ones() -> None:
    matrix = unit_rows(3000)
    layout = qz.Layout(np.arange(0, 3000, 3, dtype=np.int64), 3000)
    codes, query = qz.BinaryCodes.of(matrix), unit_rows(1, seed=4)[0]
    cut = qz.candidate_chunks(matrix, layout, codes, query, None, 300, 10)
    every = so.every_candidate_chunk(matrix, layout, codes, query, None, 300, 10)
    assert set(cut.tolist()) <= set(every.tolist())
    assert cut.shape[0] == qz.RESCORED_CHUNKS * 10 < every.shape[0]


def test_interleaved_alternates_which_arm_runs_first() -> None:
    order: list[str] = []

    def arm(label: str) -> so.Call:
        def call(i: int) -> np.ndarray:
            order.append(f"{label}{i}")
            return np.array([i])

        return call

    on_ms, off_ms, on_lists, off_lists = so.interleaved(arm("on"), arm("off"), 3, warmup=1)
    assert order == ["on0", "off0", "on0", "off0", "off1", "on1", "on2", "off2"]
    assert len(on_ms) == len(off_ms) == 3
    assert [int(x[0]) for x in on_lists] == [0, 1, 2] == [int(x[0]) for x in off_lists]


def test_verdict_needs_ten_percent_where_it_applies() -> None:
    assert so.verdict(0.9, 1.0, True) == "earns it"
    assert so.verdict(0.95, 1.0, True) == "does not"
    assert so.verdict(0.1, 1.0, False) == "not used here"


def test_recall_counts_the_shared_head() -> None:
    truth = [np.arange(10), np.arange(3)]
    got = [np.array([0, 1, 2, 3, 4, 99, 98, 97, 96, 95]), np.arange(3)]
    assert so.recall(truth, got, 10) == round(8 / 13, 4)


def arm_figures(verdict: str, applies: bool, **extra: Any) -> dict[str, Any]:
    timing = {"p50": 1.0, "p95": 2.0, "p99": 2.0, "n": 5.0}
    arm = {"on": timing, "off": {**timing, "p50": 2.0}, "same_lists": 1.0}
    return {**arm, "applies": applies, "verdict": verdict, **extra}


def figures() -> dict[str, Any]:
    def size(applies: bool, verdict: str) -> dict[str, Any]:
        return {
            "keyword": {
                "rows": 10,
                "scores_every_row": 0.5,
                "arms": {
                    "MaxScore pruning": arm_figures(
                        "earns it", True, subset={"n": 3, "on_p50": 0.1, "off_p50": 0.4}
                    )
                },
            },
            "vector": {
                "parts": 20,
                "rescore_depth": 30,
                "arms": {
                    "binary scan (auto)": arm_figures(
                        verdict, applies, recall10_on=0.98, recall10_off=1.0
                    )
                },
            },
            "load_before": 1.0,
            "load_after": 1.5,
            "peak_rss_mb": 300.0,
        }

    sizes = {"10000": size(False, "not used here"), "100000": size(True, "does not")}
    return {"k": 50, "queries": 5, "sizes": sizes, "verdicts": so.verdicts(sizes)}


def test_verdicts_judge_at_the_largest_size_that_uses_it() -> None:
    verdicts = figures()["verdicts"]
    assert verdicts["binary scan (auto)"] == {
        "side": "vector",
        "size": "100000",
        "verdict": "does not",
    }
    assert verdicts["MaxScore pruning"]["size"] == "100000"
    unused = {"keyword": {"arms": {}}, "vector": {"arms": {"x": arm_figures(so.NOT_USED, False)}}}
    assert so.verdicts({"10": unused, "20": unused})["x"]["size"] == "20"


def test_render_lists_every_arm_and_size() -> None:
    pytest.importorskip("bench.report.tables")
    from bench.report import scan

    text = scan.render(figures())
    assert "| binary scan (auto) | vector | 100k | does not |" in text
    assert "recall@10 0.980 ON, 1.000 OFF" in text
    assert text.count("| MaxScore pruning | 10k |") == 1
    assert "0.50×" in text and "on the 3 it prunes 0.10 vs 0.40 ms" in text
    assert scan.SECTIONS[0].result == "scan_options" and scan.SECTIONS[0].part == "Speed"


def test_fancy_add_is_numpy_with_a_fancy_indexed_add() -> None:
    fake = so.FancyAdd()
    scores = fake.zeros(4)
    fake.add.at(scores, np.array([1, 3]), np.array([0.5, 2.0]))
    np.testing.assert_array_equal(scores, [0.0, 0.5, 0.0, 2.0])
    assert fake.flatnonzero is np.flatnonzero


def test_measured_reports_the_subset_and_the_agreement() -> None:
    arm = so.Arm("x", lambda i: np.array([i]), lambda i: np.array([i, 1]), True)
    out = so.measured(arm, 4, subset=[True, False, True, False])
    assert out["subset"]["n"] == 2 and out["same_lists"] == 0.0
    assert out["verdict"] in ("earns it", "does not") and "recall10_on" not in out


def test_int8_scale_is_the_engines() -> None:
    matrix = unit_rows(200_000, dim=4)
    assert so.int8_scale(matrix) == qz.Int8Codes.of(matrix).scale
