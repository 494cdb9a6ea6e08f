"""Obsidian's own Markdown: `[[wikilinks]]`, `![[embeds]]` and `%% comments %%`.

Rendered as a reader sees them (`[[Rajesh Kumar|Raj]]` → `Raj`, `![[map.png]]` →
`[file: map.png]`), comments removed, all outside code (fenced blocks and `inline` spans);
the link targets are returned so that a chunk can keep them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePosixPath

_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = r"(`[^`\n]*`)"  # matched first, so what is inside stays as it is
_COMMENT = re.compile(_CODE_SPAN + r"|[ \t]?%%.*?%%", re.DOTALL)  # one space before goes too
_WIKILINK = re.compile(_CODE_SPAN + r"|(!?)\[\[([^\[\]\n]+)\]\]")
_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_NOTE_SUFFIXES = ("", ".md")


def _outside_code(text: str, in_fence: bool, change: Callable[[str], str]) -> tuple[str, bool]:
    """`change` applied to each run of lines outside fenced code; the fence state after."""
    out: list[str] = []
    run: list[str] = []
    for line in text.split("\n"):
        fence = bool(_FENCE.match(line))
        if not (in_fence or fence):
            run.append(line)
            continue
        if run:
            out.append(change("\n".join(run)))
            run = []
        out.append(line)
        in_fence = in_fence != fence
    if run:
        out.append(change("\n".join(run)))
    return "\n".join(out), in_fence


def strip_comments(text: str) -> str:
    """`%% … %%` removed; each keeps its line breaks, so later lines keep their numbers."""

    def drop(match: re.Match[str]) -> str:
        return match[1] or "\n" * match[0].count("\n")

    return _outside_code(text, False, lambda run: _COMMENT.sub(drop, run))[0]


def _shown(embed: bool, inner: str, links: list[str]) -> str:
    target, _, label = inner.partition("|")
    note, _, anchor = target.partition("#")
    note, anchor, label = note.strip(), anchor.strip(), label.strip()
    heading = "" if anchor.startswith("^") else anchor  # `#^id` names a block, not words
    if note:
        links.append(note)
    if embed:  # `|300` of an embedded image is its width, not a label
        name = PurePosixPath(note).name
        if PurePosixPath(name).suffix.lower() not in _NOTE_SUFFIXES:
            return f"[file: {name}]"
        return name or heading
    if label:
        return label
    return f"{note} › {heading}" if note and heading else note or heading


def render_links(text: str, in_fence: bool = False) -> tuple[str, list[str], bool]:
    """(text with wikilinks and embeds as shown and blank lines single, the links' targets,
    the fence state after `text`)."""
    links: list[str] = []

    def show(match: re.Match[str]) -> str:
        return match[1] or _shown(match[2] == "!", match[3], links)

    rendered, in_fence = _outside_code(text, in_fence, lambda run: _WIKILINK.sub(show, run))
    rendered = _BLANK_LINES.sub("\n\n", rendered)  # the gaps that removed comments leave
    return rendered, list(dict.fromkeys(links)), in_fence
