"""Parts: the units a chunk is embedded as, so one vector never has to hold ten messages.

A displayed chunk (a chat window of ~10 messages, a meeting segment, a note section) is cut
into parts of about `PART_CHARS` characters along its lines: a few consecutive messages or
turns, a paragraph. Each part gets its own vector; the vector side scores a chunk by its
best part (docs/benchmarks.md). A window squeezed into one
384-d vector, and truncated at the model's 256 tokens, blurs the one message that answers the
question.

Parts are spans of the chunk's own text, found by a pure function of it (the generated
header lines are left out of the spans and put in front of each part's text instead,
`part_texts`): nothing else is stored but their vectors, concatenated in order in `chunks.embedding`, and one vec0 row each
at rowid `seq × MAX_PARTS + ordinal`, so a KNN hit names its chunk without a join.
`PARTS_KEY` is part of the vector table's identity: a change to the cutting rule re-embeds.
"""

from __future__ import annotations

import re

PART_CHARS = 300  # a part closes at the first line end past this many characters
LONG_LINE = 2000  # a line longer than this (twice what the model reads) is cut...
LINE_PIECE = 1000  # ...at sentence ends into pieces of about this many characters
MAX_PARTS = 64  # parts per chunk; a longer chunk gets longer parts
PARTS_KEY = "p300"  # names the cutting rule in the vector table's name and in `meta`
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
# The lines extractors write before a chunk's own text ("Meeting: Weekly sync", "Note:
# Garden", "Aliases: …", "Tags: …", "Section: …"; engine/extractors/meeting.py, markdown.py).
# They are in the keyword index, and the title weighs double there; in the first part's
# vector they pull every question about "the meeting" toward every meeting's first part.
HEADER_LABELS = (
    "Meeting", "Note", "Journal", "Scratch", "Transcript", "Board summary", "Ride", "Entity",
    "Code doc", "Aliases", "Tags", "Section",
)  # fmt: skip
_HEADER = re.compile(r"(?:(?:" + "|".join(map(re.escape, HEADER_LABELS)) + r"): [^\n]*|\s*)\n")

Span = tuple[int, int]


def split_parts(text: str, target: int = PART_CHARS) -> list[Span]:
    """The (start, end) spans of `text`'s parts, in order, covering every non-blank line
    after the generated header lines.

    Lines are gathered until a part holds `target` characters; a short remainder joins the
    part before it. A line is never cut unless it is longer than `LONG_LINE`: cutting long
    meeting turns into sentence groups cost 0.02 MRR@10 on QMSum (more parts per chunk,
    more chances for one to match by accident). A text of at most `target` characters is one
    part, header included.
    """
    if len(text) <= target:
        return [(0, len(text))] if text.strip() else []
    spans: list[Span] = []
    start: int | None = None
    for line_start, line_end in _units(text, body_start(text)):
        if start is None:
            start = line_start
        if line_end - start >= target:
            spans.append((start, line_end))
            start = None
    if start is not None:
        tail = (start, len(text.rstrip()))
        if spans and tail[1] - tail[0] < target // 3:
            spans[-1] = (spans[-1][0], tail[1])
        elif tail[1] > tail[0]:
            spans.append(tail)
    if len(spans) > MAX_PARTS:
        return split_parts(text, -(-len(text) // MAX_PARTS) + target)
    return spans


def body_start(text: str) -> int:
    """Where `text` begins after its generated header lines and the blank lines after them."""
    position = 0
    while match := _HEADER.match(text, position):
        position = match.end()
    return position if text[position:].strip() else 0


def _units(text: str, position: int = 0) -> list[Span]:
    """Non-blank lines from `position` on as spans, a line longer than `LONG_LINE` cut at
    sentence ends."""
    units: list[Span] = []
    for line in text[position:].split("\n"):
        begin, end = position, position + len(line)
        position = end + 1
        if not line.strip():
            continue
        if end - begin <= LONG_LINE:
            units.append((begin, end))
            continue
        piece = begin
        for match in _SENTENCE_END.finditer(line):
            cut = begin + match.end()
            if cut - piece >= LINE_PIECE:
                units.append((piece, cut))
                piece = cut
        units.append((piece, end))
    return units


def part_texts(text: str) -> list[str]:
    """The texts of `text`'s parts, as the embedder sees them: every part of a chunk cut
    into parts carries the chunk's header lines in front ("Note: Heron survey" then the
    paragraph), so a part out of a long note still says what it is from (the spans leave
    the header out; a chunk of one part is its whole text). Measured on the dev data and the
    personal benchmark against no header (QMSum hybrid MRR@10 0.408 vs 0.403, personal
    nDCG@10 0.553 vs 0.531) and the header in the first part only (0.386, 0.549)."""
    head = text[: body_start(text)]
    return [text[a:b] if a == 0 else head + text[a:b] for a, b in split_parts(text)]


def rowid(seq: int, ordinal: int) -> int:
    """The vec0 rowid of a chunk's part."""
    return seq * MAX_PARTS + ordinal


def seq_of(part_rowid: int) -> int:
    """The chunk seq of a vec0 rowid."""
    return part_rowid // MAX_PARTS
