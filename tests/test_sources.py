"""The source-type registry: every declared type is complete, and every table that knows
about source types is derived from it (routes, extractors, settings, desktop, related)."""

from __future__ import annotations

import pkgutil
import re
import sys
from dataclasses import replace
from importlib import import_module
from pathlib import Path, PurePath

import pytest

import engine.extractors
from desktop.formatting import type_icon_name, type_label
from engine.extractors import ExtractError, Extraction, get_extractor, recognisers, slack
from engine.extractors.base import (
    FamilyReader,
    FileReader,
    SiblingReader,
    copy_reader,
    declared_reader,
)
from engine.extractors.registry import REGISTRY, bind, build
from engine.extractors.sniffing import no_siblings
from engine.index.databases import DATABASE_READERS
from engine.index.exports import exports
from engine.index.routes import DEFAULT_ROUTES, Found, route_for
from engine.resources import resource_dir
from engine.search.rank.related import RECORD_TYPES
from engine.settings import SETTINGS_BY_NAME, load_settings
from engine.settings.table import DEFAULT_HALF_LIVES, GROUPED_TYPES
from engine.sources import (
    NOT_CONVERSATIONS,
    PROFILE_TYPE,
    READ_DATABASES,
    SOURCE_TYPES,
    SOURCE_TYPES_BY_NAME,
    SourceType,
    source_type,
)

FIXTURES = Path(__file__).parent / "fixtures"
ICONS = resource_dir() / "icons" / "types"
NAMES = [t.name for t in SOURCE_TYPES]


@pytest.mark.parametrize("source", SOURCE_TYPES, ids=lambda t: t.name)
def test_every_declared_type_is_complete(source: SourceType) -> None:
    assert re.fullmatch(r"[a-z][a-z0-9_]*", source.name)  # config keys, filters, folders
    assert source.label and (source.label[0].isupper() or source.label[1:2].isupper())  # iMessage
    assert source.chunk_heading
    assert (ICONS / f"{source.icon_name}.svg").is_file()
    assert 0 < source.half_life_days <= (SETTINGS_BY_NAME["search.half_lives"].high or 0)
    assert source.routes, "a declared type is found by at least one default route"
    assert callable(REGISTRY[source.name])
    fixtures = [p for p in (FIXTURES / source.name).glob("*") if ".golden." not in p.name]
    assert any(p.with_name(p.name + ".golden.json").is_file() for p in fixtures)


def test_names_are_unique_and_looked_up_by_name() -> None:
    assert len(set(NAMES)) == len(NAMES)
    assert list(SOURCE_TYPES_BY_NAME) == NAMES
    assert source_type("slack") is SOURCE_TYPES_BY_NAME["slack"]
    assert source_type("bookmark") is None


def test_every_fixture_folder_is_a_declared_type() -> None:
    folders = {p.name for p in FIXTURES.iterdir() if p.is_dir()}
    assert folders == set(NAMES)


def test_the_extractor_registry_is_the_declared_types() -> None:
    assert list(REGISTRY) == NAMES
    modules = (m.name for m in pkgutil.iter_modules(engine.extractors.__path__))
    declaring = {m for m in modules if hasattr(import_module(f"engine.extractors.{m}"), "READER")}
    assert declaring == {t.reader for t in SOURCE_TYPES}, "a reader no type uses"
    family = {t.reader for t in SOURCE_TYPES if isinstance(declared_reader(t), FamilyReader)}
    assert {"markdown", "records", "structured", "meta_messages"} <= family
    assert all(get_extractor(name) is REGISTRY[name] for name in NAMES)
    with pytest.raises(ExtractError, match="no extractor for source type 'bookmark'"):
        get_extractor("bookmark")


def test_only_readers_of_siblings_declare_them() -> None:
    """A type names the files beside its own that its reader reads; no other type does."""
    for source in SOURCE_TYPES:
        reads_siblings = isinstance(declared_reader(source), SiblingReader)
        assert bool(source.siblings) == reads_siblings, source.name
        assert all(not PurePath(name).is_absolute() for name in source.siblings)
    assert SOURCE_TYPES_BY_NAME["slack"].siblings == slack.SIBLINGS


def test_a_family_reader_reads_with_its_types_row() -> None:
    text = b"# Plan\n[[Ana]] %% hidden %%\n"
    note = get_extractor("note")(text, PurePath("notes/plan.md")).drafts[0]
    code = get_extractor("codebase_doc")(text, PurePath("memory/codebase/plan.md")).drafts[0]
    assert note.content.startswith("Note: ") and "hidden" not in note.content
    assert code.content.startswith("Code doc: ") and "%% hidden %%" in code.content
    board = get_extractor("board_summary")(text, PurePath("data/board/q1.md")).drafts[0]
    assert board.content.startswith("Board summary: ")


def test_a_broken_declaration_fails_when_the_registry_is_built() -> None:
    slack = SOURCE_TYPES_BY_NAME["slack"]
    with pytest.raises(ValueError, match="no reader 'bookmarks'"):
        bind(SourceType("bookmark", "Bookmark", "bookmarks", 30))
    with pytest.raises(ValueError, match="'slack' is declared twice"):
        build([slack, slack])


def test_a_new_type_of_an_existing_reader_needs_one_row() -> None:
    wiki = SourceType("wiki", "Wiki", "markdown", 90, ("wiki/*.md",), heading="Wiki page")
    extract = build([wiki])["wiki"]
    result = extract(b"# Home\nWelcome.\n", PurePath("wiki/home.md"))
    assert isinstance(result, Extraction)
    assert result.drafts[0].content.startswith("Wiki page: ")


ONE_MODULE = """
from pathlib import PurePath

from engine.extractors.base import Extraction, FileReader
from engine.extractors.sniffing import Recogniser, SiblingCheck
from engine.records import Draft


def extract_bookmarks(data: bytes, path: PurePath) -> Extraction:
    return Extraction(drafts=[Draft(content=line) for line in data.decode().splitlines()])


def recognise(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    return head.startswith(b"<!DOCTYPE NETSCAPE-Bookmark-file-1>")


READER = FileReader(extract_bookmarks)
RECOGNISER = Recogniser((".html",), recognise, about="a browser's bookmarks file")
"""


def test_a_new_format_is_one_row_and_one_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module that declares READER and RECOGNISER, beside the readers, and a row naming
    it: bound by the registry and the recognisers with nothing else edited."""
    (tmp_path / "bookmarks_probe.py").write_text(ONE_MODULE, encoding="utf-8")
    monkeypatch.setattr(engine.extractors, "__path__", [*engine.extractors.__path__, str(tmp_path)])
    monkeypatch.delitem(sys.modules, "engine.extractors.bookmarks_probe", raising=False)
    row = SourceType("bookmark", "Bookmark", "bookmarks_probe", 365, ("bookmarks/*.html",))
    row = replace(row, recogniser="bookmarks_probe")
    try:
        extract = build([row])["bookmark"]
        [(name, recogniser)] = recognisers.bind([row])
        drafts = extract(b"one\ntwo\n", PurePath("bookmarks/b.html")).drafts
        assert [d.content for d in drafts] == ["one", "two"]
        assert name == "bookmark" and recogniser.suffixes == (".html",)
        assert recogniser.test("b.html", b"<!DOCTYPE NETSCAPE-Bookmark-file-1>", no_siblings)
    finally:
        sys.modules.pop("engine.extractors.bookmarks_probe", None)


def test_a_module_without_its_declaration_is_an_error() -> None:
    """`chunking` is a module of the package but declares no reader or recogniser."""
    with pytest.raises(ValueError, match="module 'chunking' declares no READER"):
        bind(SourceType("bookmark", "Bookmark", "chunking", 30))
    with pytest.raises(ValueError, match="module 'chunking' declares no RECOGNISER"):
        recognisers.bind([SourceType("b", "B", "markdown", 30, recogniser="chunking")])
    assert isinstance(declared_reader(SOURCE_TYPES_BY_NAME["voice"]), FileReader)


def test_default_routes_are_the_declared_routes_in_order() -> None:
    declared = [(p, t.name) for t in SOURCE_TYPES for p in t.routes]
    assert [(r.pattern, r.source_type) for r in DEFAULT_ROUTES] == declared
    assert route_for("data/slack/export/general/2024-03-11.json", DEFAULT_ROUTES) == "slack"
    assert route_for("memory/entities/topics/sleep.md", DEFAULT_ROUTES) == "entity_file"
    assert route_for("data/slack/notes.md", DEFAULT_ROUTES) is None


def test_setting_defaults_are_the_declared_half_lives_and_document_types() -> None:
    assert {t.name: t.half_life_days for t in SOURCE_TYPES} == DEFAULT_HALF_LIVES
    assert tuple(t.name for t in SOURCE_TYPES if t.groups_sections) == GROUPED_TYPES
    assert {"note", "meeting"} <= set(GROUPED_TYPES) and "slack" not in GROUPED_TYPES
    search = load_settings(env={}).search
    assert dict(search.half_lives) == DEFAULT_HALF_LIVES
    assert tuple(search.group_types) == GROUPED_TYPES


def test_the_desktop_shows_the_declared_labels_and_icons() -> None:
    for source in SOURCE_TYPES:
        assert type_label(source.name) == source.label.lower()
        assert type_icon_name(source.name) == source.icon_name
    assert type_label("email_catalog") == "email"
    assert type_label("reading_list") == "reading list"  # a type only a config route names
    assert type_icon_name("profile") == "profile"  # the person card, not a file type


def test_related_records_are_the_structured_types() -> None:
    structured = {t.name for t in SOURCE_TYPES if t.reader == "structured"}
    assert set(RECORD_TYPES) == structured
    assert {"interview", "interview_meta"} <= structured


def test_what_the_index_and_people_know_of_types_is_derived_from_the_rows() -> None:
    assert READ_DATABASES == {"chat.db"} == set(SOURCE_TYPES_BY_NAME["imessage"].databases)
    assert set(DATABASE_READERS) == {t.name for t in SOURCE_TYPES if t.databases}
    assert {"contact"} == NOT_CONVERSATIONS
    assert PROFILE_TYPE not in SOURCE_TYPES_BY_NAME  # a person's card, no file's type


def test_a_database_type_whose_reader_reads_no_copy_is_an_error() -> None:
    row = SourceType("ledger", "Ledger", "voice", 30, databases=("ledger.db",))
    with pytest.raises(ValueError, match="'voice' reads no database copy"):
        copy_reader(row)


def test_discover_groups_a_types_files_as_its_row_says(tmp_path: Path) -> None:
    """An export's root from `export_files`, a vault from `in_vaults`, else the folder."""
    chat = SourceType("chat", "Chat", "voice", 30, export_files="*/*.json")
    note = SourceType("note", "Note", "markdown", 30, in_vaults=True)
    (tmp_path / "vault" / ".obsidian").mkdir(parents=True)

    def found(relative: str, source: SourceType) -> Found:
        return Found(tmp_path / relative, tmp_path, relative, source.name, 0.0, 1)

    files = [
        found("export/general/2024-03-11.json", chat),
        found("export/random/2024-03-12.json", chat),
        found("export/all.jsonl", chat),
        found("vault/Ideas/plan.md", note),
        found("papers/a.md", note),
    ]
    rows = {"chat": chat, "note": note}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("engine.index.exports.source_type", rows.get)
        told = {(e.folder.relative_to(tmp_path).as_posix(), e.kind) for e in exports(files, 1)}
    assert told == {
        ("export", "Chat export"),
        ("export/all.jsonl", "Chat"),
        ("vault", "Obsidian vault"),
        ("papers/a.md", "Notes"),  # one file: told by its path
    }
