"""Vector-side pseudo-relevance feedback: the moved query vector."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from engine.core import Engine
from engine.search.retrieve.feedback import moved_query
from engine.settings import Settings


def unit(*values: float) -> np.ndarray:
    vector = np.asarray(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_the_moved_query_is_normalised_and_leans_toward_the_feedback() -> None:
    query, parts = unit(1, 0, 0), [unit(0, 1, 0), unit(0, 1, 1)]
    moved = moved_query(query, parts, 0.5)
    assert moved.dtype == np.float32
    assert abs(float(np.linalg.norm(moved)) - 1.0) < 1e-6
    assert float(moved @ unit(0, 1, 0)) > float(query @ unit(0, 1, 0))
    expected = query + 0.5 * (parts[0] + parts[1]) / 2
    assert np.allclose(moved, expected / np.linalg.norm(expected), atol=1e-6)


def test_beta_zero_or_no_feedback_keeps_the_query() -> None:
    query = unit(1, 2, 3)
    assert np.array_equal(moved_query(query, [unit(0, 1, 0)], 0.0), query)
    assert np.array_equal(moved_query(query, [], 0.5), query)


def notes_layer(settings: Settings) -> None:
    notes = settings.roots[0] / "notes"
    notes.mkdir(parents=True, exist_ok=True)
    for name, text in (
        ("ferry.md", "The ferry to the island leaves at nine."),
        ("boiler.md", "The old boiler was fixed on Tuesday."),
        ("garden.md", "Tomatoes and beans grow in the garden by the island road."),
    ):
        (notes / name).write_text(f"# {name}\n{text}\n")


def vector_ids(settings: Settings) -> list[str]:
    notes_layer(settings)
    with Engine(settings) as eng:
        eng.reindex()
        return [hit.id for hit in eng.search("ferry island", mode="vector").results]


def test_feedback_with_beta_zero_gives_the_first_scans_list(
    settings_factory: Callable[..., Settings],
) -> None:
    off = vector_ids(settings_factory(embedder__name="hashing", search__floor=False))
    zero = settings_factory(
        embedder__name="hashing",
        search__floor=False,
        search__vector_prf=True,
        search__vector_prf_beta=0.0,
    )
    assert off and vector_ids(zero) == off
