"""Why a file could not be indexed, in the user's words.

Everything that touches one file's bytes (recognising, its siblings, reading it from disk
or from its archive, its reader, its mentions, storing what it gave) is inside that file's
boundary: whatever it raises becomes the file's one error and the run goes on. The error is
a sentence: a reader's own words when it refused the file (`ExtractError`), the system's
when the read failed, else what Memex could not do with it. Never an exception's name or
text: `KeyError: 'ts'` or `RecursionError` says nothing to the person whose file it is.
"""

from __future__ import annotations

from engine.extractors import ExtractError
from engine.index.discovery import Found
from engine.sources import source_type


def failure_message(found: Found, exc: Exception) -> str:
    """The sentence recorded for a file that raised `exc` while it was read."""
    text = str(exc)
    if isinstance(exc, ExtractError) and text:
        return text
    if isinstance(exc, OSError):
        return read_failure(exc)
    declared = source_type(found.source_type)
    label = declared.label if declared else found.source_type
    return (
        f"something in it is not what Memex's {label} reader expects, so it was skipped; "
        "the rest of the run went on"
    )


def read_failure(exc: OSError) -> str:
    """A read that failed (the file is read again on the next run), in the system's words."""
    if isinstance(exc, FileNotFoundError):
        return "was gone when it was read (moved or deleted during the run); it is read again"
    if isinstance(exc, PermissionError):
        return "cannot be read: permission denied; it is read again once it can be"
    reason = exc.strerror or "an input/output error"
    return f"cannot be read ({reason}); it is read again on the next run"
