"""One chunk per JSON record, every field readable: the source types whose reader is
"structured" in engine/sources.py (check-ins, experiments, interviews, podcast digests).

These records have no fixed schema (each tool that writes them adds fields), so rather than
pick a few known keys the record is rendered whole as `Field name: value` lines — nested
objects flattened with their path, lists joined — and the title is taken from the first
title-like field of the kind. `date` (or the kind's own date field) is the content date.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from engine.extractors.base import ExtractError, Extraction, FamilyReader
from engine.extractors.chunking import (
    date_from_name,
    decode,
    json_array_items,
    jsonl_drafts,
    load_json,
    parse_date,
)
from engine.records import Draft
from engine.sources import SourceType

DATE_KEYS = ("date", "day", "published", "recorded_at", "start", "created_at", "timestamp")
HIDDEN_KEYS = {"id", "uuid"}
TITLE_WORDS = 10


@dataclass(frozen=True)
class Kind:
    """How one record type is labelled and titled."""

    label: str
    title_keys: tuple[str, ...]


def humanize(key: str) -> str:
    words = key.replace("_", " ").replace("-", " ")
    spaced = "".join(f" {c.lower()}" if c.isupper() and i else c for i, c in enumerate(words))
    return " ".join(spaced.split()).capitalize()


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(_value(v) for v in value if v not in (None, "", [], {}))
    if isinstance(value, float):
        return f"{value:g}"
    return str(value).strip()


def field_lines(record: dict[str, Any], prefix: str = "") -> list[str]:
    """`Name: value` for every field with a value; nested objects flattened with their path."""
    lines: list[str] = []
    for key, value in record.items():
        if key in HIDDEN_KEYS or key in DATE_KEYS and not prefix or value in (None, "", [], {}):
            continue
        name = f"{prefix}{humanize(key)}"
        if isinstance(value, dict):
            lines += field_lines(value, f"{name} › ")
        elif isinstance(value, list) and any(isinstance(v, dict) for v in value):
            for item in value:
                lines += (
                    field_lines(item, f"{name} › ")
                    if isinstance(item, dict)
                    else [f"{name}: {_value(item)}"]
                )
        elif text := _value(value):
            lines.append(f"{name}: {text}")
    return lines


def _short(text: str) -> str:
    words = text.split()
    return " ".join(words[:TITLE_WORDS]) + ("…" if len(words) > TITLE_WORDS else "")


def record_draft(
    record: dict[str, Any], kind: Kind, location: str, default_date: str | None
) -> Draft | None:
    lines = field_lines(record)
    if not lines:
        return None
    date = next((d for d in (parse_date(record.get(k)) for k in DATE_KEYS) if d), default_date)
    named = next((_value(record[k]) for k in kind.title_keys if _value(record.get(k) or "")), "")
    title = " · ".join(p for p in (kind.label, _short(named) if named else date and date[:10]) if p)
    show = record.get("podcast") or record.get("show")
    if show and kind.label == "Podcast":
        title = f"{title} ({show})"
    people = record.get("people")
    return Draft(
        content="\n".join([title, *lines]),
        title=title,
        content_date=date,
        location=location,
        metadata={"record_id": record.get("id")},
        people=tuple(str(p) for p in people) if isinstance(people, list) else (),
    )


def _extract_jsonl(data: bytes, kind: Kind) -> Extraction:
    return jsonl_drafts(
        data,
        lambda number, record: record_draft(record, kind, f"line:{number}", None),
        "record without any field",
    )


def _extract_json(data: bytes, path: PurePath, kind: Kind) -> Extraction:
    """A JSON file holding one record, or a list of records."""
    text = decode(data)
    result = Extraction()
    records = json_array_items(text, result) or [(1, load_json(text))]
    for line, record in records:
        draft = (
            record_draft(record, kind, f"line:{line}", date_from_name(path.name))
            if isinstance(record, dict)
            else None
        )
        if draft is None:
            result.problems.append(f"line {line}: not a JSON object with fields")
        else:
            result.drafts.append(draft)
    if not result.drafts:
        raise ExtractError("no record in the file")
    return result


def extract_records(source: SourceType, data: bytes, path: PurePath) -> Extraction:
    kind = Kind(source.chunk_heading, source.title_keys)
    if path.suffix.lower() == ".json":
        return _extract_json(data, path, kind)
    return _extract_jsonl(data, kind)


READER = FamilyReader(extract_records)
