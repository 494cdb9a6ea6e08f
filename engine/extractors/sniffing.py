"""What a recogniser sees of a file: its name, its first few KB, and which files lie beside it.

A recogniser knows its source type's files by content wherever they lie under a root:
`test(name, head, siblings) -> bool`, with `name` the file's name, `head` at most
`HEAD_BYTES` of its start and `siblings("../users.json")` whether that file exists, relative
to the file's folder. It is pure, like a reader; `engine.index.recognise` does the reading,
and only for files whose name ends in one of the recogniser's `suffixes` (a cheap filter
before any byte is read).
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

HEAD_BYTES = 4096
SiblingCheck = Callable[[str], bool]
RecogniserTest = Callable[[str, bytes, SiblingCheck], bool]
# One JSON string from its opening quote: its body, its closing quote (absent when the text
# ends inside it) and the colon that makes it a key. Matched left to right, each string
# whole, so a quote inside a string never opens one; possessive, so an unclosed string
# costs one pass.
_JSON_STRING = re.compile(r'"((?:[^"\\]|\\.)*+)(")?(\s*:)?', re.DOTALL)
MAX_KEY_CHARS = 256  # longer keys are no key a recogniser asks about


@dataclass(frozen=True)
class Recogniser:
    """How one source type knows its files by content: which names are worth a look (their
    lower-cased endings) and the test of name, head and siblings."""

    suffixes: tuple[str, ...]
    test: RecogniserTest
    reads_head: bool = True  # False: the name alone decides (no byte is read)
    about: str = ""  # what it matches, in words (docs/formats.md, `memex discover`)


def head_text(head: bytes) -> str:
    """The head as text: UTF-16 with a BOM, else UTF-8 (a BOM dropped), odd bytes replaced;
    a character cut at the end of the head is dropped."""
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return head.decode("utf-16", errors="ignore")
    return head.decode("utf-8-sig", errors="replace").rstrip("\ufffd")


def head_lines(head: bytes) -> list[str]:
    """The head's non-blank lines; the last is dropped when the head may have cut it."""
    lines = head_text(head).splitlines()
    if len(head) >= HEAD_BYTES and lines:
        lines.pop()
    return [line for line in lines if line.strip()]


def json_keys(text: str) -> set[str]:
    """The object keys named in a piece of JSON text, even one cut short or not JSON at all:
    never an exception. A key whose escapes cannot be read is left out."""
    keys: set[str] = set()
    for match in _JSON_STRING.finditer(text):
        body, closed, colon = match.groups()
        if closed and colon and len(body) <= MAX_KEY_CHARS:
            try:
                keys.add(json.loads(f'"{body}"', strict=False))  # raw control characters too
            except ValueError:  # a bad escape (`\x`, a `\u` cut short)
                continue
    return keys


def no_siblings(relative: str) -> bool:
    """A sibling check for a file seen alone: nothing lies beside it."""
    return False
