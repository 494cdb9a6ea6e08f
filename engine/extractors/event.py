"""Events: `{"date","title","location","people":[…],"description"}` a line, one chunk each."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from engine.extractors.base import Extraction, FileReader
from engine.extractors.chunking import jsonl_drafts, parse_date
from engine.records import Draft


def _people(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(p) for p in value if p]
    return [p.strip() for p in str(value or "").split(",") if p.strip()]


def event_draft(number: int, record: dict[str, Any]) -> Draft | None:
    title = str(record.get("title") or record.get("name") or "").strip()
    description = str(record.get("description") or "").strip()
    if not (title or description):
        return None
    date = parse_date(record.get("date") or record.get("start"))
    people = _people(record.get("people") or record.get("attendees"))
    lines = [f"Event: {title or description[:60]}"]
    if date:
        lines.append(f"When: {date.replace('T', ' ')}")
    if record.get("location"):
        lines.append(f"Where: {record['location']}")
    if people:
        lines.append("With: " + ", ".join(people))
    if description:
        lines += ["", description]
    return Draft(
        content="\n".join(lines),
        title=title or description[:60],
        content_date=date,
        location=f"line:{number}",
        people=tuple(people),
        metadata={"place": record.get("location"), "people": people},
    )


def extract_event(data: bytes, path: PurePath) -> Extraction:
    return jsonl_drafts(data, event_draft, "event without title or description")


READER = FileReader(extract_event)
