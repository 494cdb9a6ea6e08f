"""One chunk per JSONL record: identity records (observation, quote, story) and friends."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from engine.extractors.base import Extraction, FamilyReader
from engine.extractors.chunking import jsonl_drafts, parse_date
from engine.records import Draft
from engine.sources import SourceType


def record_draft(record: dict[str, Any], number: int, label: str) -> Draft | None:
    text = str(record.get("text") or "").strip()
    if not text:
        return None
    parts = [f"{label}: {text}"]
    if record.get("context"):
        parts.append(f"Context: {record['context']}")
    tags = record.get("tags") or []
    if isinstance(tags, list) and tags:
        parts.append("Tags: " + ", ".join(str(t) for t in tags))
    first_words = " ".join(text.split()[:8])
    return Draft(
        content="\n".join(parts),
        title=f"{label}: {first_words}" + ("…" if len(text.split()) > 8 else ""),
        content_date=parse_date(record.get("date")),
        location=f"line:{number}",
        metadata={"record_id": record.get("id"), "tags": tags if isinstance(tags, list) else []},
    )


def extract_records(source: SourceType, data: bytes, path: PurePath) -> Extraction:
    label = source.chunk_heading
    return jsonl_drafts(
        data, lambda number, record: record_draft(record, number, label), "record without text"
    )


READER = FamilyReader(extract_records)
