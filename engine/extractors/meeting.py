"""Meetings: Markdown with front matter (`title`, `date`, `attendees`) and speaker turns."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath

from engine.extractors import Extraction
from engine.extractors.chunking import SEGMENT_CHARS, decode, parse_date
from engine.extractors.filenames import datetime_from_name, recording_title
from engine.extractors.markdown import split_front_matter
from engine.extractors.mentions import spoken
from engine.records import Draft, Mention

_TURN = re.compile(
    r"^\s*(?:\*\*(?P<b>[^*:]{1,60}):?\*\*:?|(?P<p>[A-Z][\w .'\-]{0,40}):)\s*(?P<text>.*)$"
)


@dataclass
class Turn:
    speaker: str
    text: str
    line: int
    when: str = ""  # cue time for subtitles


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


def segment_drafts(
    turns: list[Turn], title: str, date: str | None, attendees: list[str]
) -> list[Draft]:
    """Consecutive turns grouped into ~SEGMENT_CHARS segments, speaker names kept."""
    drafts: list[Draft] = []
    group: list[Turn] = []
    size = 0

    def flush() -> None:
        if not group:
            return
        text = "\n".join(f"{t.speaker}: {t.text}" if t.speaker else t.text for t in group)
        first = group[0]
        drafts.append(
            Draft(
                content=f"Meeting: {title}\n{text}",
                title=title,
                content_date=date,
                location=first.when or f"line:{first.line}",
                metadata={"attendees": attendees, "turns": len(group)},
                people=tuple(dict.fromkeys(t.speaker for t in group if t.speaker)),
            )
        )

    for turn in turns:
        if group and size + len(turn.text) > SEGMENT_CHARS:
            flush()
            group, size = [], 0
        group.append(turn)
        size += len(turn.text) + len(turn.speaker) + 2
    flush()
    return drafts


def turn_mentions(turns: list[Turn], date: str | None) -> list[Mention]:
    """One mention per speaker turn (role "speaker"), dated by the meeting."""
    return [spoken(t.speaker, date, role="speaker") for t in turns if t.speaker]


def extract_meeting(data: bytes, path: PurePath) -> Extraction:
    if path.suffix.lower() in (".vtt", ".srt"):
        from engine.extractors.subtitles import extract_subtitles

        return extract_subtitles(data, path)
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
