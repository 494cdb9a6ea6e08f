"""One chunk per JSONL record: identity records (observation, quote, story) and friends."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from engine.extractors import Extraction, register
from engine.extractors.chunking import decode, jsonl_records, parse_date
from engine.records import Draft

LABELS = {"observation": "Observation", "quote": "Quote", "story": "Story"}


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


def _extract_for(label: str, data: bytes) -> Extraction:
    result = Extraction()
    for number, record in jsonl_records(decode(data), result):
        draft = record_draft(record, number, label)
        if draft is None:
            result.problems.append(f"line {number}: record without text")
        else:
            result.drafts.append(draft)
    return result


@register("observation")
def extract_observation(data: bytes, path: PurePath) -> Extraction:
    return _extract_for("Observation", data)


@register("quote")
def extract_quote(data: bytes, path: PurePath) -> Extraction:
    return _extract_for("Quote", data)


@register("story")
def extract_story(data: bytes, path: PurePath) -> Extraction:
    return _extract_for("Story", data)
