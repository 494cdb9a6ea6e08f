"""The command line at its edges: a free-text flag without its value, `--` before a query
that starts with a dash, `memex opened` / `memex frecency --clear` under another program's
write lock, ids that name nothing. Each is results or one sentence and an exit code."""

from __future__ import annotations

import io
import json
from collections.abc import Callable

import pytest

from engine.cli import run
from engine.cli.common import CliError
from engine.cli.search import search_parser
from engine.index.runs import reindex
from engine.settings import Settings
from engine.store import db, opens
from engine.warm.argv import glue_values, looks_like_option
from tests.conftest import cli_args
from tests.test_indexing import write_layer

PEOPLE = '{"people": [{"name": "Priya Raman", "relationship": "friend"}]}'


@pytest.fixture
def indexed(settings_factory: Callable[..., Settings]) -> Settings:
    settings = settings_factory(embedder__name="hashing")
    write_layer(settings.roots[0])
    (settings.roots[0] / "profile").mkdir()
    (settings.roots[0] / "profile" / "relationships.json").write_text(PEOPLE)
    reindex(settings=settings)
    return settings


def cli(settings: Settings, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run([*cli_args(settings), *argv], out, err)  # `--search --` may end it
    return code, out.getvalue(), err.getvalue()


def recorded(settings: Settings) -> list[tuple[str, int]]:
    conn = db.connect(settings.db_path, create=False)
    try:
        return [(o.result_id, o.count) for o in opens.opened(conn)]
    finally:
        conn.close()


def a_chunk_id(settings: Settings) -> str:
    code, out, err = cli(settings, "--search", "beans", "--json")
    assert code == 0, err
    return str(json.loads(out)["results"][0]["id"])


def test_glue_values_takes_the_next_argument_unless_it_is_an_option() -> None:
    assert glue_values(["--search", "-beans"]) == ["--search=-beans"]
    assert glue_values(["--search", "--json"]) == ["--search", "--json"]
    assert glue_values(["--search", "--", "--json", "--json"]) == ["--search=--json", "--json"]
    assert glue_values(["--search", "--"]) == ["--search", "--"]
    assert glue_values(["--person", "--", "-x", "--search", "a b"]) == [
        "--person=-x",
        "--search=a b",
    ]
    assert looks_like_option("--limit=5") and looks_like_option("--json")
    assert not any(map(looks_like_option, ["--", "---", "--two words", "-x", "--9"]))


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--search", "--json"], "--search"),
        (["--json", "--search"], "--search"),
        (["--search", "--"], "--search"),
        (["--search", "beans", "--person", "--json"], "--person"),
    ],
)
def test_a_free_text_flag_without_its_value_is_one_sentence(
    indexed: Settings, argv: list[str], flag: str
) -> None:
    code, out, err = cli(indexed, *argv)
    assert (code, out) == (2, "")  # nothing on stdout for a script to read as JSON
    [line] = err.splitlines()
    assert line.startswith(f"memex: {flag} needs a ")
    assert f"write {flag} -- TEXT" in line


def test_the_warm_server_reads_a_missing_query_in_the_same_words() -> None:
    # engine/cli/warm.py parses the client's argv with this parser and answers its CliError.
    with pytest.raises(CliError, match="--search needs a query after it") as raised:
        search_parser().parse_args(glue_values(["--search", "--json"]))
    assert raised.value.code == 2


def test_double_dash_makes_the_next_argument_the_query(indexed: Settings) -> None:
    code, out, err = cli(indexed, "--search", "--", "--json", "--json")
    assert code == 0, err
    assert json.loads(out)["query"] == "--json"
    code, out, err = cli(indexed, "--search", "--", "-beans", "--json")
    assert code == 0 and json.loads(out)["query"] == "-beans", err
    assert json.loads(out)["results"]  # the dash is not a keyword: beans are found
    code, out, _ = cli(indexed, "--search", "-beans", "--json")  # a single dash needs no --
    assert code == 0 and json.loads(out)["query"] == "-beans"


@pytest.fixture
def short_busy_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(db, "BUSY_TIMEOUT_MS", 50)  # the busy timeout, made tiny


@pytest.mark.usefixtures("short_busy_timeout")
def test_opened_and_frecency_clear_under_a_held_write_lock_exit_5(
    indexed: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    chosen = a_chunk_id(indexed)
    assert cli(indexed, "opened", chosen)[0] == 0
    holder = db.connect(indexed.db_path, create=False)
    holder.execute("BEGIN IMMEDIATE")  # another program holds the write lock
    try:
        for argv in (["opened", chosen], ["frecency", "--clear"]):
            code, out, err = cli(indexed, *argv)
            assert (code, out) == (5, ""), err
            [line] = err.splitlines()
            assert "is busy: another program has held its write lock" in line
            assert "try again" in line and "Error" not in line
        assert "waiting: another program holds the index's write lock" in capsys.readouterr().err
        assert cli(indexed, "frecency", "--json")[0] == 0  # reading needs no write lock
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert recorded(indexed) == [(chosen, 1)]  # neither the open nor the clear happened
    assert cli(indexed, "frecency", "--clear")[1] == "cleared 1 recorded opens\n"


def test_an_id_that_is_not_utf8_is_refused_and_nothing_recorded(indexed: Settings) -> None:
    chosen = a_chunk_id(indexed)
    code, out, err = cli(indexed, "opened", chosen, "caf\udce9")  # argv's surrogateescape
    assert (code, out) == (2, "")
    [line] = err.splitlines()
    assert "the id 'caf\ufffd' is not valid UTF-8" in line and "nothing was recorded" in line
    assert recorded(indexed) == []  # not even the good id before it


def test_a_profile_id_must_name_a_known_person(indexed: Settings) -> None:
    code, out, err = cli(indexed, "opened", "profile:nobody-at-all")
    assert (code, out) == (2, "")
    assert "no person with id 'profile:nobody-at-all' in profile/relationships.json" in err
    assert recorded(indexed) == []
    code, out, err = cli(indexed, "opened", "profile:priya-raman")
    assert (code, out) == (0, "recorded 1 open\n"), err
    assert recorded(indexed) == [("profile:priya-raman", 1)]


def test_opened_on_a_file_that_holds_no_index_exits_3(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(embedder__name="hashing")
    settings.db_path.write_bytes(b"")
    code, _, err = cli(settings, "opened", "some-id")
    assert code == 3 and "holds no Memex index yet" in err, err
