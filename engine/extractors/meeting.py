"""Meetings: Markdown with front matter (`title`, `date`, `attendees`) and speaker turns;
the reader of every meeting file, handing subtitles (`subtitles`) and Zoom's saved captions
(`zoom_captions`) to theirs. The turns and segments they share are `engine.extractors.turns`."""

from __future__ import annotations

import re
from pathlib import PurePath

from engine.extractors.base import Extraction, FileReader
from engine.extractors.chunking import decode, parse_date
from engine.extractors.filenames import datetime_from_name, recording_title
from engine.extractors.markdown import split_front_matter
from engine.extractors.mentions import spoken
from engine.extractors.subtitles import extract_subtitles
from engine.extractors.turns import Turn, segment_drafts, turn_mentions
from engine.extractors.zoom_captions import CAPTIONS, extract_captions

_TURN = re.compile(
    r"^\s*(?:\*\*(?P<b>[^*:]{1,60}):?\*\*:?|(?P<p>[A-Z][\w .'\-]{0,40}):)\s*(?P<text>.*)$"
)


def parse_turns(body: str, first_line: int) -> list[Turn]:
    """Speaker turns; lines without a speaker continue the previous turn."""
    turns: list[Turn] = []
    lines: list[list[str]] = []  # each turn's lines, joined once: appending to a str is quadratic
    for offset, line in enumerate(body.split("\n")):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _TURN.match(stripped)
        if match:
            speaker = (match["b"] or match["p"] or "").strip()
            turns.append(Turn(speaker, "", first_line + offset))
            lines.append([match["text"].strip()])
        elif turns:
            lines[-1].append(stripped)
        else:
            turns.append(Turn("", "", first_line + offset))
            lines.append([stripped])
    for turn, texts in zip(turns, lines, strict=True):
        turn.text = " ".join(texts).strip()
    return [t for t in turns if t.text]


def extract_meeting(data: bytes, path: PurePath) -> Extraction:
    """A Markdown meeting: its front matter and its speaker turns."""
    front, body, first_line = split_front_matter(decode(data))
    title = str(front.get("title") or "") or recording_title(path.stem)
    date = parse_date(front.get("date")) or datetime_from_name(path.name)
    raw = front.get("attendees") or []
    attendees = [str(a) for a in raw] if isinstance(raw, list) else [str(raw)]
    turns = parse_turns(body, first_line)
    return Extraction(
        drafts=segment_drafts(turns, title, date, attendees),
        mentions=[
            *turn_mentions(turns, date),
            *(spoken(name, date, role="attendee") for name in attendees),
        ],
    )


def extract_transcript(data: bytes, path: PurePath) -> Extraction:
    """A meeting file: Zoom's saved captions by their name, WebVTT and SRT by their
    extension, any other as a Markdown meeting."""
    if path.name.lower() == CAPTIONS:
        return extract_captions(data, path)
    if path.suffix.lower() in (".vtt", ".srt"):
        return extract_subtitles(data, path)
    return extract_meeting(data, path)


READER = FileReader(extract_transcript)
