"""Hits in people's words: one breadcrumb separator, an archive's member as
"archive › member", never the index's `.zip!` marker (desktop/formatting.py)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from desktop.results import ResultModel, meta_text
from engine.records import SearchResult

ZIPPED = "/home/lena/Downloads/Skye Easter trip.zip!/_chat.txt"


def hit(title: str, source_file: str, source_type: str = "whatsapp") -> SearchResult:
    return SearchResult("c1", "text", source_file, source_type, 1.0, title=title, location="")


def test_an_archived_chat_reads_as_archive_and_member() -> None:
    model = ResultModel()
    model.set_results([hit("Skye Easter trip.zip! · 2024-03-13", ZIPPED)])
    index = model.index(0)
    assert model.data(index, Qt.ItemDataRole.DisplayRole) == "Skye Easter trip · 2024-03-13"
    assert model.data(index, Qt.ItemDataRole.ToolTipRole).endswith(
        "Downloads/Skye Easter trip.zip › _chat.txt"
    )
    assert meta_text(model.results[0]) == "whatsapp  ·  Skye Easter trip.zip › _chat.txt"


def test_a_note_section_has_one_separator() -> None:
    model = ResultModel()
    model.set_results([hit("Pricing model › Current > Seats", "/notes/pricing.md", "note")])
    shown = model.data(model.index(0), Qt.ItemDataRole.DisplayRole)
    assert shown == "Pricing model › Current › Seats" and ">" not in shown
