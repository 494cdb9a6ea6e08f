"""WebVTT and SRT meeting transcripts: cues with `<v Name>` voice tags or `Name:` prefixes."""

from __future__ import annotations

import re
from pathlib import PurePath

from engine.extractors import Extraction
from engine.extractors.chunking import date_from_name, decode
from engine.extractors.meeting import Turn, segment_drafts

_TIME = re.compile(r"(\d{1,2}:)?(\d{2}):(\d{2})[.,](\d{3})\s*-->")
_VOICE = re.compile(r"<v(?:\.[^ >]*)?\s+([^>]+)>")
_TAG = re.compile(r"</?[^>]+>")
_PREFIX = re.compile(r"^([A-Z][\w .'\-]{0,40}):\s+(.*)$")


def _cue_turns(text: str) -> list[Turn]:
    turns: list[Turn] = []
    blocks = re.split(r"\n\s*\n", text.replace("\r\n", "\n"))
    line_no = 1
    for block in blocks:
        lines = block.strip("\n").split("\n")
        start_line = line_no
        line_no += block.count("\n") + 2
        time_index = next((i for i, ln in enumerate(lines) if _TIME.search(ln)), None)
        if time_index is None:
            continue
        match = _TIME.search(lines[time_index])
        assert match is not None
        hours = (match[1] or "0:")[:-1]
        when = f"t:{int(hours):02d}:{match[2]}:{match[3]}"
        raw = " ".join(lines[time_index + 1:]).strip()
        voice = _VOICE.search(raw)
        speaker = voice[1].strip() if voice else ""
        spoken = _TAG.sub("", raw).strip()
        if not speaker and (prefix := _PREFIX.match(spoken)):
            speaker, spoken = prefix[1], prefix[2]
        if not spoken:
            continue
        if turns and turns[-1].speaker == speaker and speaker:
            turns[-1].text = f"{turns[-1].text} {spoken}"
        else:
            turns.append(Turn(speaker, spoken, start_line, when))
    return turns


def extract_subtitles(data: bytes, path: PurePath) -> Extraction:
    title = path.stem.replace("_", " ").replace("-", " ")
    turns = _cue_turns(decode(data))
    return Extraction(drafts=segment_drafts(turns, title, date_from_name(path.name), []))
