"""Text that SQLite, JSON and a terminal can all take: no lone surrogates.

Python strings may hold lone surrogates (U+D800–U+DFFF) that no UTF-8 encoder accepts: argv
and file names decoded with surrogateescape (b"caf\\xe9" on a Latin-1 terminal arrives as
"caf\\udce9"), JSON's "\\ud800" escape, a mail header with raw bytes. Every such string is
made safe once, where it enters: each lone surrogate becomes U+FFFD, the replacement
character, so the rest of the text is kept and nothing raises later. And `shown`: a path
as the user writes it (`~/…`), as every front end shows one; `json_words`: why JSON could
not be read, in words rather than the json module's.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

REPLACEMENT = "\ufffd"
_SURROGATES = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\[uU][dD][89abcdefABCDEF][0-9a-fA-F]{2}")


def clean_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (the same object when clean)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATES.sub(REPLACEMENT, text)
    return text


def is_clean(text: str) -> bool:
    """Whether `text` encodes as UTF-8 (holds no lone surrogate)."""
    return clean_text(text) is text


def clean_json(value: Any) -> Any:
    """A parsed JSON value with every string in it, keys too, made clean (`clean_text`);
    the same object when there was nothing to clean. JSON's "\\ud800" escape is how a lone
    surrogate gets into a document's strings."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [clean_json(item) for item in value]
    if isinstance(value, dict):
        return {clean_text(str(k)): clean_json(v) for k, v in value.items()}
    return value


def has_surrogate_escape(json_text: str, start: int = 0, end: int | None = None) -> bool:
    """Whether a JSON text (or its slice) holds a \\uD800–\\uDFFF escape: only then can the
    parsed value hold a lone surrogate, so only then is it worth walking."""
    found = _SURROGATE_ESCAPE.search(json_text, start, len(json_text) if end is None else end)
    return found is not None


# What the json module's messages (`JSONDecodeError.msg`) mean, in words: a problem told to
# the user never quotes them.
_JSON_FAULTS = {
    "Expecting value": "a value is missing",
    "Unterminated string starting at": "a string is never closed",
    "Expecting ',' delimiter": "a comma is missing between two items",
    "Expecting ':' delimiter": "a colon is missing after a key",
    "Expecting property name enclosed in double quotes": "a key is not in double quotes",
    "Invalid control character at": "a string holds a raw line break or control character",
    "Invalid \\escape": "a string holds a broken backslash escape",
    "Invalid \\uXXXX escape": "a string holds a broken backslash escape",
    "Extra data": "more follows the end of the document",
    "Illegal trailing comma before end of object": "a comma ends a list of keys",
    "Illegal trailing comma before end of array": "a comma ends a list of items",
}


def json_words(message: str) -> str:
    """Why a piece of JSON could not be read, in words, from the json module's message."""
    if message.startswith("Exceeds the limit"):  # an integer of thousands of digits
        return "a number is too long to read"
    return _JSON_FAULTS.get(message, "it is not well-formed")


def shown(path: Path) -> str:
    """A path as the user writes it: under the home folder as `~/…` (`memex discover`, the
    welcome and Settings all say it so)."""
    home = os.path.expanduser("~")
    text = str(path)
    return "~" + text[len(home) :] if home != "/" and (text + "/").startswith(home + "/") else text
