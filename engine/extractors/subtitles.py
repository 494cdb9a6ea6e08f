"""WebVTT and SRT meeting transcripts: cues with `<v Name>` voice tags or `Name:` prefixes.

Consecutive cues of one speaker merge into one turn (up to a segment's size); a turn's
location is its first cue's start time (`t:HH:MM:SS`), which players can seek to.
NOTE, STYLE and REGION blocks are skipped; a cue whose timing line is broken is a problem.
Timings with a comma, a dot or no milliseconds are read; the text is decoded in whatever
encoding and line endings it was saved with (`encodings.decode`).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import PurePath

from engine.extractors.base import Extraction
from engine.extractors.chunking import SEGMENT_CHARS, decode
from engine.extractors.filenames import (
    datetime_from_name,
    name_stamp,
    recording_title,
    recording_topic,
)
from engine.extractors.sniffing import Recogniser, SiblingCheck, head_lines
from engine.extractors.turns import Turn, segment_drafts, turn_mentions
from engine.extractors.zoom_captions import CAPTIONS, recognise_captions

# `00:01:02,500`, `00:01:02.500` and `00:01:02` (the milliseconds left out by some tools)
_TIMING = re.compile(r"^\s*(?:(\d+):)?(\d{1,2}):(\d{2})(?:[.,](\d{1,3}))?\s*-->\s*\S+")
# Neither crosses a '<': a cue holding '<' and no '>' costs one pass, not one per '<'.
_VOICE = re.compile(r"<v(?:\.[^ <>]*+)?\s++([^<>]+)>")
_TAG = re.compile(r"</?[^<>]+>")
_PREFIX = re.compile(r"^(?:-\s*)?([A-Z][\w .'\-]{0,40}):\s+(.*)$")
_SKIPPED_BLOCKS = ("NOTE", "STYLE", "REGION", "WEBVTT")


@dataclass
class Cue:
    start: str  # t:HH:MM:SS
    line: int
    lines: list[str]


def _blocks(text: str) -> list[tuple[int, list[str]]]:
    """Blank-line separated blocks with the line number of their first line."""
    blocks: list[tuple[int, list[str]]] = []
    current: list[str] = []
    start = 1
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            if not current:
                start = number
            current.append(line.rstrip("\r"))
        elif current:
            blocks.append((start, current))
            current = []
    if current:
        blocks.append((start, current))
    return blocks


def _cues(text: str, result: Extraction) -> list[Cue]:
    cues = []
    for start, lines in _blocks(text):
        if lines[0].split(" ")[0].split("\t")[0] in _SKIPPED_BLOCKS:
            continue
        timing = next((i for i, ln in enumerate(lines[:2]) if "-->" in ln), None)
        match = _TIMING.match(lines[timing]) if timing is not None else None
        if timing is None or match is None:
            result.problems.append(f"line {start}: cue without a readable timing line")
            continue
        when = f"t:{int(match[1] or 0):02d}:{int(match[2]):02d}:{match[3]}"
        cues.append(Cue(when, start + timing, lines[timing + 1 :]))
    return cues


def _spoken(cue: Cue) -> list[tuple[str, str]]:
    """(speaker, text) pairs of one cue; a cue may hold several voices, one per line."""
    pairs: list[tuple[str, list[str]]] = []  # lines joined once: appending to a str is quadratic
    for raw in cue.lines:
        voice = _VOICE.search(raw)
        speaker = voice[1].strip() if voice else ""
        text = html.unescape(_TAG.sub("", raw)).strip()
        if not speaker and (prefix := _PREFIX.match(text)):
            speaker, text = prefix[1].strip(), prefix[2].strip()
        if not text:
            continue
        if pairs and not speaker and not voice:
            pairs[-1][1].append(text)  # a wrapped line of the same voice
        else:
            pairs.append((speaker, [text]))
    return [(speaker, " ".join(texts)) for speaker, texts in pairs]


def cue_turns(text: str, result: Extraction) -> list[Turn]:
    turns: list[Turn] = []
    for cue in _cues(text, result):
        for speaker, spoken in _spoken(cue):
            last = turns[-1] if turns else None
            if last and last.speaker == speaker and len(last.text) + len(spoken) < SEGMENT_CHARS:
                last.text = f"{last.text} {spoken}"
            else:
                turns.append(Turn(speaker, spoken, cue.line, cue.start))
    return turns


def _title(text: str, path: PurePath) -> str:
    """The WebVTT header's text (`WEBVTT - Weekly sync`) if any, else the file name's; a
    recorder's name with no topic of its own (`GMT20240311-100000_Recording`) takes the
    topic of a recording folder named as Zoom names one (`2024-03-11 10.00.00 Weekly sync`)."""
    header = text.lstrip("\ufeff").split("\n", 1)[0].strip()
    if header.startswith("WEBVTT") and header[6:].strip(" -\t"):
        return header[6:].strip(" -\t")
    if name_stamp(path.stem) is not None and not recording_topic(path.stem):
        folder = recording_topic(path.parent.name) if name_stamp(path.parent.name) else ""
        if folder:
            return folder
    return recording_title(path.stem)


def extract_subtitles(data: bytes, path: PurePath) -> Extraction:
    text = decode(data)
    result = Extraction()
    turns = cue_turns(text, result)
    when = datetime_from_name(path.name)  # Zoom's GMT… names hold the start time (UTC)
    result.drafts = segment_drafts(turns, _title(text, path), when, [])
    result.mentions = turn_mentions(turns, when)
    return result


def recognise(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    """WebVTT (a `WEBVTT` first line, Zoom's `*.transcript.vtt` too) or SRT (a cue number,
    then a `00:00:01,000 --> …` timing line)."""
    lines = [line.strip() for line in head_lines(head)]
    if name.lower().endswith(".vtt"):
        return bool(lines) and lines[0].startswith("WEBVTT")
    return len(lines) >= 2 and lines[0].isdigit() and _TIMING.match(lines[1]) is not None


def recognise_transcript(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    """Zoom's `meeting_saved_closed_caption.txt` by its first caption line, any other name
    as a WebVTT or SRT file (`recognise`)."""
    if name.lower() == CAPTIONS:
        return recognise_captions(head)
    return recognise(name, head, siblings)


RECOGNISER = Recogniser(
    (".vtt", ".srt", CAPTIONS),
    recognise_transcript,
    about="WebVTT (`WEBVTT` first, Zoom's `*.transcript.vtt` too), SRT (cue number, "
    "timing line), or Zoom's `meeting_saved_closed_caption.txt` (`[Name] HH:MM:SS` first)",
)
