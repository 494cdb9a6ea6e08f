"""Voice memos transcribed by Whisper: its JSON output (`text`, `segments[{start,end,text}]`).

Segments are grouped into windows of about a minute; each chunk's location is the time
offset of its first segment (`t:HH:MM:SS`), which a player can seek to. The date comes from
the JSON (`date` / `recorded_at`, written by some front ends) or else from the file name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from engine.extractors.base import ExtractError, Extraction, FileReader
from engine.extractors.chunking import date_from_name, decode, load_json, parse_date
from engine.records import Draft

WINDOW_SECONDS = 60.0
MAX_START_SECONDS = 10**7  # 115 days: a start beyond it (or inf, NaN) is a broken number


@dataclass(frozen=True)
class Segment:
    start: float
    text: str


def offset(seconds: float) -> str:
    whole = int(seconds)
    return f"t:{whole // 3600:02d}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def _segment(raw: Any) -> Segment:
    """One Whisper segment; KeyError, TypeError or ValueError when it has no usable start."""
    start = float(raw["start"])
    if not 0 <= start <= MAX_START_SECONDS:  # NaN fails the comparison too
        raise ValueError(f"start {start!r} out of range")
    return Segment(start, str(raw.get("text") or "").strip())


def _segments(document: dict[str, Any], result: Extraction) -> list[Segment]:
    found = []
    raw_segments = document.get("segments")
    if not isinstance(raw_segments, list):
        raw_segments = []
    for index, raw in enumerate(raw_segments, start=1):
        try:
            segment = _segment(raw)
        except (KeyError, TypeError, ValueError, OverflowError):
            result.problems.append(f"segment {index}: no usable start time")
            continue
        if segment.text:
            found.append(segment)
    if not found and str(document.get("text") or "").strip():
        found.append(Segment(0.0, str(document["text"]).strip()))
    return found


def windows(segments: list[Segment]) -> list[list[Segment]]:
    grouped: list[list[Segment]] = []
    for segment in sorted(segments, key=lambda s: s.start):
        if not grouped or segment.start - grouped[-1][0].start >= WINDOW_SECONDS:
            grouped.append([])
        grouped[-1].append(segment)
    return grouped


def _title(path: PurePath, day: str | None) -> str:
    name = re.sub(r"\d{4}-\d{2}-\d{2}[T _-]?(\d{2}[-.:]?\d{2}([-.:]?\d{2})?)?[ _-]*", "", path.stem)
    name = name.replace("_", " ").replace("-", " ").strip()
    return " · ".join(p for p in ("Voice memo", day, name) if p)


def extract_voice(data: bytes, path: PurePath) -> Extraction:
    document = load_json(decode(data))
    if not isinstance(document, dict) or not ("segments" in document or "text" in document):
        raise ExtractError("not Whisper output: no `segments` or `text`")
    result = Extraction()
    day = parse_date(document.get("date") or document.get("recorded_at")) or date_from_name(
        path.name
    )
    title = _title(path, day[:10] if day else None)
    for window in windows(_segments(document, result)):
        text = " ".join(s.text for s in window)
        result.drafts.append(
            Draft(
                content=f"{title} [{offset(window[0].start)[2:]}]\n{text}",
                title=title,
                content_date=day,
                location=offset(window[0].start),
                metadata={"start": window[0].start, "segments": len(window)},
            )
        )
    return result


READER = FileReader(extract_voice)
