"""Did-you-mean warnings for filters that name nothing known (`--source slak`, a stranger)."""

from __future__ import annotations

import json

from engine.search.query.suggest import closest, unknown_person_warning, unknown_type_warning
from engine.settings import Settings
from tests.conftest import cli_args
from tests.test_cli import cli


def test_closest_ignores_case_and_gives_up_on_strangers() -> None:
    assert closest("slak", ["note", "slack", "signal"]) == "slack"
    assert closest("PRYA", ["Priya", "Jonas"]) == "Priya"
    assert closest("Nobody Here", ["Priya Raman", "Jonas Berg"]) is None
    assert closest("x", []) is None


def test_warnings_suggest_or_list_what_is_known() -> None:
    assert unknown_type_warning("slak", ["slack", "note"]) == (
        "no source type 'slak' in the index; did you mean 'slack'?"
    )
    assert unknown_type_warning("xyzzy", ["slack", "note"]) == (
        "no source type 'xyzzy' in the index; it holds: slack, note"
    )
    assert unknown_person_warning("Prya", ["Priya"]).endswith("did you mean 'Priya'?")


def test_a_typo_in_source_is_a_warning_in_text_and_json(demo_index: Settings) -> None:
    args = [*cli_args(demo_index), "--search", "standup", "--mode", "bm25"]
    code, out, err = cli(*args, "--source", "slak")
    assert code == 0, err
    assert "warning: no source type 'slak' in the index; did you mean 'slack'?\n" in out
    code, out, _ = cli(*args, "--source", "slak", "--source", "slack", "--json")
    warnings = json.loads(out)["warnings"]
    assert code == 0 and warnings == ["no source type 'slak' in the index; did you mean 'slack'?"]


def test_an_unknown_person_is_a_warning(demo_index: Settings) -> None:
    args = [*cli_args(demo_index), "--search", "standup", "--mode", "bm25", "--json"]
    code, out, _ = cli(*args, "--person", "Prya Raman")
    assert code == 0
    assert json.loads(out)["warnings"] == [
        "'Prya Raman' is not in the people file; searched for the name as written; "
        "did you mean 'Priya Raman'?"
    ]
    code, out, _ = cli(*args, "--person", "Nobody Here")
    assert json.loads(out)["warnings"] == [
        "'Nobody Here' is not in the people file; searched for the name as written"
    ]


def test_known_filters_warn_about_nothing(demo_index: Settings) -> None:
    args = [*cli_args(demo_index), "--search", "standup", "--mode", "bm25", "--json"]
    code, out, _ = cli(*args, "--source", "slack", "--person", "priya", "--person", "Jonte")
    response = json.loads(out)
    assert code == 0 and response["warnings"] == [] and response["results"]
