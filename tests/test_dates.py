"""Dates the way people write them (engine/search/query/dates.py): in the query, in --since and
--until, and what a search does with them. Every clock is fixed: the demo layer's today."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from datetime import date, datetime

import pytest

from engine.cli import run
from engine.search import Searcher, SearchError
from engine.search.hits import Hit
from engine.search.query.dates import find_in_query, parse_range, span
from engine.search.query.inputs import date_bound
from engine.search.rank.stages import boost_dates
from engine.settings import Settings
from tests.conftest import cli_args, make_settings

NOW = datetime(2026, 6, 30, 12, 0)  # a Tuesday: tests/conftest.py DEMO_TODAY


def test_a_span_covers_the_whole_week_month_or_year() -> None:
    tuesday = date(2026, 6, 30)
    assert span(tuesday, "day") == (tuesday, tuesday)
    assert span(tuesday, "week") == (date(2026, 6, 29), date(2026, 7, 5))
    assert span(date(2024, 2, 10), "month") == (date(2024, 2, 1), date(2024, 2, 29))
    assert span(tuesday, "year") == (date(2026, 1, 1), date(2026, 12, 31))


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("2026-06", (date(2026, 6, 1), date(2026, 6, 30))),
        ("2025", (date(2025, 1, 1), date(2025, 12, 31))),
        ("yesterday", (date(2026, 6, 29), date(2026, 6, 29))),
        ("last week", (date(2026, 6, 22), date(2026, 6, 28))),
        ("2 weeks ago", (date(2026, 6, 15), date(2026, 6, 21))),
        ("March 2026", (date(2026, 3, 1), date(2026, 3, 31))),
        ("12 March", (date(2026, 3, 12), date(2026, 3, 12))),  # the March gone, not next
    ],
)
def test_date_texts_name_ranges_of_days(text: str, days: tuple[date, date]) -> None:
    assert parse_range(text, NOW) == days


@pytest.mark.parametrize("text", ["someday", "at 3pm", "15 minutes", "banana bread"])
def test_what_is_not_a_day_names_no_range(text: str) -> None:
    assert parse_range(text, NOW) is None


@pytest.mark.parametrize(
    ("query", "since", "until", "phrase", "rest"),
    [
        (
            "how many steps did I walk on 12 March",
            "2026-03-12",
            "2026-03-12",
            "on 12 March",
            "how many steps did I walk",
        ),
        ("what did I do last week", "2026-06-22", "2026-06-28", "last week", "what did I do"),
        ("trip in May 2025", "2025-05-01", "2025-05-31", "in May 2025", "trip"),
        ("what did I eat yesterday?", "2026-06-29", "2026-06-29", "yesterday", "what did I eat ?"),
        ("rides in the past 3 days", "2026-06-27", "2026-06-30", "3 days", "rides in the past"),
    ],
)
def test_the_query_s_date_words_become_a_range_and_leave_the_keywords(
    query: str, since: str, until: str, phrase: str, rest: str
) -> None:
    found = find_in_query(query, NOW)
    assert found is not None
    dated, keywords = found
    assert dated.as_json() == {"since": since, "until": until, "from_query": phrase}
    assert keywords == rest


@pytest.mark.parametrize(
    "query",
    [
        "sat in the car park",  # "sat" as Saturday
        "Romerike uplift 34%",  # "34%" as 1934
        "1:1 with Nadia",  # a time of day
        "slept 1 h 12 min",
        "you may want to march on",  # months that are everyday words
        "insomnia before investor meetings",
    ],
)
def test_words_a_person_would_not_read_as_dates_are_left_alone(query: str) -> None:
    assert find_in_query(query, NOW) is None


def test_since_and_until_take_the_first_and_last_day_of_what_they_name() -> None:
    assert date_bound("2026-06", "since", NOW) == "2026-06-01"
    assert date_bound("2026-06", "until", NOW) == "2026-06-30"
    assert date_bound("2026", "until", NOW) == "2026-12-31"
    assert date_bound("last week", "since", NOW) == "2026-06-22"
    assert date_bound("yesterday", "until", NOW) == "2026-06-29"
    assert date_bound("2026-05-31T23:59:00", "since", NOW) == "2026-05-31"
    assert date_bound("", "since", NOW) is None


@pytest.mark.parametrize("text", ["someday", "2026-13-45", "2026-13-01", "x" * 500])
def test_a_bound_that_names_no_day_is_one_clear_sentence(text: str) -> None:
    with pytest.raises(SearchError) as caught:
        date_bound(text, "until", NOW)
    message = str(caught.value)
    assert message.startswith("--until must be a date like 2026-05-31, 2026-05, 2026")
    assert "\n" not in message and len(message) < 200


def test_a_date_boost_lifts_only_the_days_in_range() -> None:
    candidates = [
        Hit.chunk(1, 0.03, content_date="2026-06-11T09:00:00"),
        Hit.chunk(2, 0.02, content_date="2026-06-12T23:00:00"),
        Hit.chunk(3, 0.01, content_date=None),
    ]
    boosted = boost_dates(candidates, "2026-06-12", "2026-06-12", 2.0)
    assert [c.seq for c in boosted] == [2, 1, 3]
    assert boosted[0].score == pytest.approx(0.04)
    assert boosted[0].explain() == {"date_boost": 2.0} and boosted[1].explain() == {}


def search(settings: Settings, query: str, **kwargs: object) -> dict[str, object]:
    searcher = Searcher(settings)
    try:
        return searcher.search(query, 10, now=NOW, **kwargs).as_json()  # type: ignore[arg-type]
    finally:
        searcher.close()


def test_a_day_in_the_query_filters_to_it_and_its_number_is_no_keyword(
    demo_index: Settings,
) -> None:
    # Garmin summaries hold "slept 7 h 12 min"; the 12th must win on its date, not its "12".
    payload = search(demo_index, "how many steps did I walk on 12 June")
    assert payload["dates"] == {
        "since": "2026-06-12",
        "until": "2026-06-12",
        "from_query": "on 12 June",
    }
    results = payload["results"]
    assert isinstance(results, list) and results
    assert results[0]["source_file"].endswith("garmin/2026-06-12.json")
    assert all(r["content_date"][:10] == "2026-06-12" for r in results)
    assert all("12" not in r["matched_terms"] for r in results)


def test_a_relative_date_counts_from_the_search_s_clock(demo_index: Settings) -> None:
    payload = search(demo_index, "what did I do yesterday")
    assert payload["dates"] == {
        "since": "2026-06-29",
        "until": "2026-06-29",
        "from_query": "yesterday",
    }
    assert payload["results"] and all(
        r["content_date"][:10] == "2026-06-29"
        for r in payload["results"]  # type: ignore[attr-defined]
    )


def test_given_dates_win_over_the_query_s_and_off_leaves_the_words_alone(
    demo_index: Settings,
) -> None:
    payload = search(demo_index, "steps on 12 June", since="2026-06", until="2026-06-20")
    assert payload["dates"] == {"since": "2026-06-01", "until": "2026-06-20", "from_query": None}
    off = make_settings(list(demo_index.roots), demo_index.db_path, search__query_dates="off")
    payload = search(off, "steps on 12 June")
    assert payload["dates"] is None
    assert any("12" in r["matched_terms"] for r in payload["results"])  # type: ignore[union-attr]


def test_the_cli_prints_the_understood_days(demo_index: Settings) -> None:
    argv = [*cli_args(demo_index), "--search", "my mood on 16 June 2026", "--mode", "bm25"]
    out, err = io.StringIO(), io.StringIO()
    assert run(argv, out, err) == 0, err.getvalue()
    assert "dates: 2026-06-16 (from 'on 16 June 2026')\n" in out.getvalue()
    out = io.StringIO()
    assert run([*argv, "--json"], out, err) == 0, err.getvalue()
    assert json.loads(out.getvalue())["dates"]["since"] == "2026-06-16"
    out = io.StringIO()
    assert run([*argv[:-2], "--since", "2026-06", "--until", "2026-06"], out, err) == 0
    assert "dates: 2026-06-01 – 2026-06-30\n" in out.getvalue()


def test_a_bad_since_on_the_cli_is_a_usage_error(demo_index: Settings) -> None:
    out, err = io.StringIO(), io.StringIO()
    argv = [*cli_args(demo_index), "--search", "standup", "--since", "someday"]
    assert run(argv, out, err) == 2
    assert "--since must be a date like 2026-05-31" in err.getvalue()


def test_the_clock_of_a_search_is_the_settings_clock_by_default(demo_index: Settings) -> None:
    later = replace(demo_index, now="2026-06-13T08:00:00")
    searcher = Searcher(later)
    try:
        dates = searcher.search("steps yesterday", 5).dates
    finally:
        searcher.close()
    assert dates == {"since": "2026-06-12", "until": "2026-06-12", "from_query": "yesterday"}
