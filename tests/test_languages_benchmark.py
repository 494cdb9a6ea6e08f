"""The languages benchmark's data (bench/languages_data): its shape, and that its layer
indexes each language as that language."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

from bench import languages
from engine.language import analyze

REQUIRED = {"no", "sv", "de", "fr", "es", "ru", "zh", "ja", "ko"}


def scripts(text: str) -> set[str]:
    names = (unicodedata.name(ch, "") for ch in text if ch.isalpha())
    return {n.split()[0] for n in names if n}


def test_ten_languages_of_twenty_graded_queries_and_sixty_nonsense_ones() -> None:
    data = languages.load()
    codes = {lang["language"] for lang in data}
    assert len(codes) >= 10 and codes >= REQUIRED
    nonsense = [q for lang in data for q in lang["nonsense"]]
    assert len(nonsense) >= 60 and len(set(nonsense)) == len(nonsense)
    found = set().union(*(scripts(q) for q in nonsense))
    assert {"LATIN", "CYRILLIC", "CJK", "HANGUL"} <= found
    for lang in data:
        messages = [m[0] for m in lang["chat"]]
        assert len(lang["chat"]) >= 20 and len(set(messages)) == len(messages)
        for message, query, kind in lang["chat"]:
            assert kind in {"inflected", "compound", "cjk", "cjk-one"}
            words = message.lower().split()
            assert query.lower() not in words or kind.startswith("cjk"), query


def test_each_query_meets_its_message_in_some_language() -> None:
    """Every query, written in each of the benchmark's languages as a search writes it,
    shares a word with its message as indexed, but for the stem changes docs/languages.md
    names (the benchmark reports them)."""
    known = {"nøkkel", "nyckel", "fönster", "kind", "nounous", "vliegticket"}
    data = languages.load()
    codes = [lang["language"] for lang in data] + ["en"]
    for lang in data:
        for message, query, _ in lang["chat"]:
            held = {w for _, _, w in analyze.spans(message, lang["language"])}
            wanted = {w for code in codes for w in analyze.query_words(query, code)}
            assert (query in known) != bool(held & wanted), (lang["language"], query)


def test_the_layer_holds_chats_mail_and_notes(tmp_path: Path) -> None:
    data = languages.load()
    languages.write_layer(tmp_path / "layer", data[:2])
    code = data[0]["language"]
    chat = tmp_path / "layer" / "data" / "telegram" / f"{code}-work.jsonl"
    first = json.loads(chat.read_text(encoding="utf-8").splitlines()[0])
    assert set(first) == {"date", "chat", "from", "text"}
    assert (tmp_path / "layer" / "data" / "email" / f"{code}.jsonl").exists()
    assert list((tmp_path / "layer" / "notes" / code).glob("*.md"))
