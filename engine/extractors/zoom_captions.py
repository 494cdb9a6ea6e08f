"""Zoom's saved captions: `meeting_saved_closed_caption.txt`, in a local recording's folder
(`~/Documents/Zoom/2024-03-11 10.00.00 Weekly sync/`).

Each caption is a `[Speaker Name] HH:MM:SS` line, then what they said, then a blank line.
Consecutive captions of one speaker merge into one turn, and turns into meeting segments as
every transcript's do (`turns.segment_drafts`), each located at its first caption's line
(the times are the clock's, not a position in the recording). The meeting's title and start come from the folder's name (Zoom names it
`YYYY-MM-DD HH.MM.SS Topic`); every speaker is a mention.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from engine.extractors.base import Extraction
from engine.extractors.chunking import SEGMENT_CHARS, decode
from engine.extractors.filenames import datetime_from_name, recording_title
from engine.extractors.sniffing import head_lines
from engine.extractors.turns import Turn, segment_drafts
from engine.records import Mention

CAPTIONS = "meeting_saved_closed_caption.txt"
_CAPTION = re.compile(r"^\[(?P<speaker>[^\]]{1,80})\]\s+(?P<time>\d{1,2}:\d{2}:\d{2})\s*$")


def caption_turns(text: str) -> list[Turn]:
    """The speaker turns of the captions, in order; text before the first caption line is
    dropped."""
    turns: list[Turn] = []
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        found = _CAPTION.match(stripped)
        if found:
            speaker = found["speaker"].strip()
            last = turns[-1] if turns else None
            if last is not None and last.speaker == speaker and len(last.text) < SEGMENT_CHARS:
                continue  # the same speaker goes on: one turn
            turns.append(Turn(speaker, "", number))
        elif stripped and turns:
            turns[-1].text = f"{turns[-1].text} {stripped}".strip()
    return [t for t in turns if t.text]


def extract_captions(data: bytes, path: PurePath) -> Extraction:
    turns = caption_turns(decode(data).replace("\r\n", "\n"))
    folder = path.parent.name
    title = recording_title(folder) or "Zoom meeting"
    when = datetime_from_name(folder)
    speakers = [t.speaker for t in turns]
    result = Extraction(drafts=segment_drafts(turns, title, when, sorted(set(speakers))))
    result.mentions = [
        Mention(name=name, role="speaker", count=speakers.count(name), first=when, last=when)
        for name in dict.fromkeys(speakers)
    ]
    return result


def recognise_captions(head: bytes) -> bool:
    """Saved captions open with a `[Name] HH:MM:SS` line."""
    lines = head_lines(head)
    return bool(lines) and _CAPTION.match(lines[0].strip()) is not None
