"""Hostile arguments: the bytes a Latin-1 terminal sends, dates at the ends of the
calendar, huge limits, hundreds of filters, lone surrogates through the Python API and
`--json`. Each gives results or one sentence with exit code 2, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.index.runs import reindex
from engine.search import Searcher, SearchError
from engine.search.query.filters import Filters, any_of, chunk_filter_sql
from engine.search.query.inputs import MAX_LIMIT, MAX_PEOPLE
from engine.settings import Settings
from tests.conftest import cli_args
from tests.test_indexing import write_layer

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = "import sys; from desktop.launcher import main; sys.exit(main(sys.argv[1:]))"
DISTINCT_PEOPLE = [arg for i in range(500) for arg in (b"--person", f"p{i}".encode())]
HOSTILE: list[tuple[str, list[bytes], int]] = [
    ("latin-1 query", [b"--search", b"caf\xe9 beans"], 0),
    ("latin-1 query, json", [b"--search", b"caf\xe9 beans", b"--json"], 0),
    ("latin-1 person", [b"--search", b"beans", b"--person", b"Jos\xe9"], 0),
    ("latin-1 source", [b"--search", b"beans", b"--source", b"sl\xe4ck"], 0),
    ("surrogate bytes, json", [b"--search", b"\xed\xa0\x80 beans", b"--json"], 0),
    ("latin-1 date", [b"--search", b"beans", b"--since", b"2026-0\xe9-01"], 2),
    ("until the last day", [b"--search", b"battery", b"--until", b"9999-12-31"], 0),
    ("the whole calendar", [b"--search", b"beans", b"--since", b"0001-01-01"], 0),
    ("limit 2**62", [b"--search", b"beans", b"--limit", str(2**62).encode()], 2),
    ("limit 2**64", [b"--search", b"beans", b"--limit", str(2**64).encode()], 2),
    ("500 x the same person", [b"--search", b"beans", *[b"--person", b"Priya"] * 500], 0),
    ("500 people", [b"--search", b"beans", *DISTINCT_PEOPLE], 2),
    ("500 x one source", [b"--search", b"beans", *[b"--source", b"note"] * 500], 0),
]


@pytest.fixture
def indexed(settings_factory: Callable[..., Settings]) -> Settings:
    settings = settings_factory(embedder__name="hashing")
    write_layer(settings.roots[0])
    reindex(settings=settings)
    return settings


@pytest.mark.parametrize(("argv", "code"), [c[1:] for c in HOSTILE], ids=[c[0] for c in HOSTILE])
def test_hostile_arguments_give_results_or_one_sentence(
    indexed: Settings, argv: list[bytes], code: int
) -> None:
    # A UTF-8 terminal that refuses what is not UTF-8: a lone surrogate printed would raise.
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict"}
    common = [os.fsencode(a) for a in cli_args(indexed)]
    done = subprocess.run(
        [os.fsencode(sys.executable), b"-c", SCRIPT.encode(), *argv, *common],
        capture_output=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
    assert done.returncode == code, done.stderr.decode(errors="replace")
    done.stdout.decode("utf-8")  # whatever was printed is valid UTF-8
    if code:
        [line] = done.stderr.decode().splitlines()
        assert line.startswith("memex: ") and ("limit" in line or "date" in line or "50" in line)
    if b"--json" in argv:
        answer = json.loads(done.stdout)
        assert "\ufffd" in answer["query"] and answer["results"]  # the rest of it was searched


def test_lone_surrogates_through_the_python_api(indexed: Settings) -> None:
    searcher = Searcher(indexed, vector_cache=False)
    try:
        for mode in ("hybrid", "bm25", "vector"):
            response = searcher.search("beans \ud800 \udce9", mode=mode)
            assert response.results and response.query == "beans \ufffd \ufffd"
            json.dumps(response.as_json(), ensure_ascii=False).encode("utf-8")
        assert searcher.search("beans", people=["Jos\udce9"]).query == "beans"
        assert searcher.search("beans", source_types=["sl\ud800ck"]).results == []
        assert searcher.search("battery", until="9999-12-31").results  # dated chunks
        with pytest.raises(SearchError, match=f"from 1 to {MAX_LIMIT}, got 4611686018427387904"):
            searcher.search("beans", limit=2**62)
        with pytest.raises(SearchError, match=f"at most {MAX_PEOPLE} people"):
            searcher.search("beans", people=[f"p{i}" for i in range(MAX_PEOPLE + 1)])
        with pytest.raises(SearchError, match="date like") as raised:
            searcher.search("beans", since="2026\ud800")
        str(raised.value).encode("utf-8")  # the sentence itself is printable
    finally:
        searcher.close()


def test_hundreds_of_names_stay_a_shallow_sql_expression() -> None:
    """SQLite refuses an expression tree deeper than 1,000: 500 names in one flat OR chain
    would make one; nested in halves the depth is logarithmic, and two names stay `a OR b`."""
    assert any_of(["a", "b"]) == "a OR b"
    assert any_of(["a", "b", "c", "d"]) == "(a OR b) OR (c OR d)"
    deep = any_of([f"x{i}" for i in range(1000)])
    assert max_depth(deep) <= 11
    from engine.records import Person

    people = tuple(Person(name="Priya", slug="priya") for _ in range(3))
    sql, params = chunk_filter_sql(Filters(people=people))
    assert params == ["Priya", "Priya"]  # the same name once


def max_depth(text: str) -> int:
    depth = deepest = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        deepest = max(deepest, depth)
    return deepest


def run_memex(settings: Settings, *argv: bytes) -> subprocess.CompletedProcess[bytes]:
    """`memex ARGV… --root … --db … --config …` in a child process, with a strict UTF-8
    terminal, the one-shot path (no warm server)."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict", "MEMEX_NO_WARM": "1"}
    common = [os.fsencode(a) for a in cli_args(settings)]
    return subprocess.run(
        [os.fsencode(sys.executable), b"-c", SCRIPT.encode(), *argv, *common],
        capture_output=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )


def test_an_opened_id_in_latin1_bytes_is_one_sentence(indexed: Settings) -> None:
    done = run_memex(indexed, b"opened", b"caf\xe9")
    assert done.returncode == 2 and done.stdout == b""
    [line] = done.stderr.decode("utf-8").splitlines()  # printable: the byte is U+FFFD
    assert line == (
        "memex: the id 'caf\ufffd' is not valid UTF-8, so no result has it; copy the id "
        "from 'memex --search … --json'; nothing was recorded"
    )


def test_search_json_with_no_query_prints_no_text_for_a_json_reader(indexed: Settings) -> None:
    done = run_memex(indexed, b"--search", b"--json")
    assert done.returncode == 2 and done.stdout == b""
    [line] = done.stderr.decode().splitlines()
    assert line.startswith("memex: --search needs a query") and "Traceback" not in line
    searched = run_memex(indexed, b"--search", b"--", b"--json", b"--json")
    assert searched.returncode == 0 and json.loads(searched.stdout)["query"] == "--json"
