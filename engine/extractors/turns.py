"""A transcript's speaker turns, and the meeting segments and mentions made of them: what
every transcript reader shares (Markdown meetings, WebVTT and SRT subtitles, Zoom's saved
captions). It imports none of them."""

from __future__ import annotations

from dataclasses import dataclass

from engine.extractors.chunking import SEGMENT_CHARS
from engine.extractors.mentions import spoken
from engine.records import Draft, Mention


@dataclass
class Turn:
    speaker: str
    text: str
    line: int
    when: str = ""  # cue time for subtitles


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
