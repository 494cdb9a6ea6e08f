"""bench.model_ceiling: every kind of configuration it sweeps embeds as the local embedder
does, and a --quick run writes a record the report renders (no figure is asserted)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from bench.model_runner import ModelConfig, ModelRunner, SessionCache, tokenizer
from engine.embedders.local import LocalEmbedder

TEXTS = [
    "ok",
    "Priya sent the quarterly report.",
    "Marco: are we still on for the noodle bar at noon?\nPriya: yes, and bring the slides",
    "We hiked the ridge trail on Saturday and the view over the lake was worth the climb, "
    "though the last mile in the rain was not.",
    "Zürich café naïve 東京で会いましょう 🎉",
    "",
    "lunch?",
]

# One of each kind the sweep tries: batch sizes and order, threads and runs side by side,
# the inter-op parallel mode, every graph level, one session per thread.
KINDS = [
    ModelConfig(),
    ModelConfig(batch=1, sorted=False),
    ModelConfig(batch=64, runs=1),
    ModelConfig(intra=2, runs=2),
    ModelConfig(intra=1, runs=1, parallel=True),
    ModelConfig(graph="disabled"),
    ModelConfig(graph="basic"),
    ModelConfig(graph="extended", batch=2),
    ModelConfig(sessions=2, batch=1),
]


@pytest.fixture(scope="module")
def local_vectors() -> Iterator[np.ndarray]:
    embedder = LocalEmbedder()
    try:
        yield embedder.embed(TEXTS)
    finally:
        embedder.close()


@pytest.fixture(scope="module")
def sessions() -> SessionCache:
    return SessionCache()


@pytest.mark.parametrize("config", KINDS, ids=lambda c: c.label())
def test_each_configuration_embeds_as_the_local_embedder(
    config: ModelConfig, sessions: SessionCache, local_vectors: np.ndarray
) -> None:
    runner = ModelRunner(config, sessions, tokenizer())
    try:
        vectors = runner.embed(TEXTS)
    finally:
        runner.close()
    cosines = np.sum(vectors * local_vectors, axis=1)
    assert vectors.shape == local_vectors.shape
    assert cosines.min() > 0.999, cosines


def test_sessions_per_thread_are_distinct_and_shared_across_batching(
    sessions: SessionCache,
) -> None:
    two = sessions.get(ModelConfig(sessions=2), 2)
    assert two[0] is not two[1]
    assert sessions.get(ModelConfig(batch=32, sorted=False), 1)[0] is two[0]


# chitchat_dataset reads its JSON through an `open()` it never closes (the bench workloads'
# source, not Memex code): the file is dropped, warned about and collected at once.
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_quick_run_writes_every_stage_and_the_report_renders_it(tmp_path: Path) -> None:
    pytest.importorskip("chitchat_dataset")
    from bench import model_ceiling
    from bench.report.__main__ import render_section
    from bench.report.sections import sections

    out = tmp_path / "model_ceiling.json"
    assert model_ceiling.main(["--quick", "--json", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["run"]["machine_before"]["cpus"] >= 1
    for result in data["workloads"].values():
        names = [stage["stage"] for stage in result["stages"]]
        assert names == [*model_ceiling.AXES, "the axes' best combined"]
        rates = [r["texts_per_s"] for s in result["stages"] for r in s["results"]]
        assert result["best"]["texts_per_s"] == max(rates)
        assert result["indexer"] > 0
    assert data["indexer_config"] == model_ceiling.BASELINE.as_dict()
    section = next(s for s in sections() if s.result == "model_ceiling")
    text = render_section(section, tmp_path)
    assert "indexer ÷ best" in text and "one short query, median ms" in text
