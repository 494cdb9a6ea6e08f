"""Lone surrogates: JSON's "\\ud800" escape, a file name that is not UTF-8. One such
character never fails the whole file nor stops the run: it becomes U+FFFD (or, for a name
no row can hold, one error of the run) and everything else is indexed."""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.cli import run
from engine.extractors import ExtractError
from engine.extractors.cleaning import clean_draft
from engine.extractors.registry import REGISTRY
from engine.index.runs import reindex
from engine.people import parse_people
from engine.search import Searcher
from engine.settings import Settings
from engine.store import db
from engine.text import clean_json, clean_text, has_surrogate_escape, is_clean
from tests.conftest import assert_consistent, cli_args

FIXTURES = Path(__file__).parent / "fixtures"


def slack_line(ts: int, text: str) -> str:
    return json.dumps({"ts": f"{ts}.000100", "channel": "eng", "user_name": "Ana", "text": text})


def test_clean_text_and_json() -> None:
    assert clean_text("caf\udce9 \ud800x") == "caf\ufffd \ufffdx"
    plain = "café 😀"
    assert clean_text(plain) is plain and is_clean(plain) and not is_clean("\udfff")
    value = json.loads('{"a\\ud800": ["x\\udc00y", 1, {"k": "\\ud83d\\ude00"}]}')
    assert clean_json(value) == {"a\ufffd": ["x\ufffdy", 1, {"k": "😀"}]}
    assert has_surrogate_escape('"\\uD83D"') and not has_surrogate_escape('"\\u00e9"')


def test_a_lone_surrogate_in_json_keeps_the_rest_of_the_file(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(embedder__name="hashing")
    slack = settings.roots[0] / "data" / "slack"
    slack.mkdir(parents=True)
    lines = [
        slack_line(1710150000, "the kiln is firing tonight"),
        slack_line(1710150060, "glaze test \\ud800 with cobalt").replace("\\\\ud800", "\\ud800"),
        slack_line(1710150120, "pots come out on friday"),
    ]
    assert "\\ud800" in lines[1]  # a JSON escape in the file, not an encoded character
    (slack / "eng.jsonl").write_text("\n".join(lines) + "\n")
    stats = reindex(settings=settings)
    assert stats.errors == () and stats.chunks >= 1
    conn = db.connect(settings.db_path, create=False)
    try:
        content = "\n".join(r[0] for r in conn.execute("SELECT content FROM chunks"))
    finally:
        conn.close()
    assert "kiln" in content and "friday" in content and "glaze test \ufffd with cobalt" in content
    searcher = Searcher(settings, vector_cache=False)
    try:
        assert searcher.search("cobalt").results  # the message itself is searchable
    finally:
        searcher.close()
    assert_consistent(settings.db_path)


def surrogate_variants(data: bytes) -> bytes:
    return re.sub(rb'(": ")', rb"\1\\ud800", data, count=3)


JSON_FIXTURES = sorted(
    p
    for p in FIXTURES.glob("*/*.json*")
    if not p.name.endswith(".golden.json") and surrogate_variants(p.read_bytes()) != p.read_bytes()
)


@pytest.mark.parametrize("path", JSON_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_json_extractor_survives_a_lone_surrogate(path: Path) -> None:
    extract = REGISTRY[path.parent.name]
    try:
        good = extract(path.read_bytes(), path)
    except ExtractError:
        pytest.skip("a fixture of a file that is refused as a whole")
    bad = extract(surrogate_variants(path.read_bytes()), path)
    drafts = [clean_draft(d) for d in bad.drafts]
    assert drafts or not good.drafts  # the rest of the file is kept
    for draft in drafts:
        for text in (draft.content, draft.title, draft.location, *draft.people):
            text.encode("utf-8")
        json.dumps(draft.metadata, ensure_ascii=False, default=str).encode("utf-8")


def test_a_people_file_with_a_lone_surrogate(tmp_path: Path) -> None:
    people = parse_people(b'{"people": [{"name": "Jos\\ud800", "aliases": ["J\\udce9"]}]}')
    assert people[0].name == "Jos\ufffd" and people[0].aliases == ("J\ufffd",)


def test_a_file_name_that_is_not_utf8_is_one_error_not_a_stopped_run(
    settings_factory: Callable[..., Settings],
) -> None:
    settings = settings_factory(embedder__name="hashing")
    notes = settings.roots[0] / "notes"
    notes.mkdir(parents=True)
    (notes / "good.md").write_text("# Good\nThe apricot tree.\n")
    bad_name = os.path.join(os.fsencode(notes), b"caf\xe9.md")
    with open(bad_name, "wb") as handle:
        handle.write(b"# Cafe\nEspresso notes.\n")
    args = cli_args(settings)
    for extra in ([], [os.fsdecode(bad_name)]):
        out, err = io.StringIO(), io.StringIO()
        code = run(["reindex", *args, *extra], out, err)
        assert code == 0, err.getvalue()
        assert "caf\ufffd.md: the file name is not valid UTF-8" in out.getvalue()
        assert "rename it" in out.getvalue()
    assert assert_consistent(settings.db_path).chunks == 1  # good.md, indexed
    record = json.loads(settings.log_path.read_text().splitlines()[-1])
    assert record["error_count"] == 1 and "\ufffd" in record["errors"][0]["file"]
