"""Drafts whose text SQLite can store, whatever the extractor was given.

A lone surrogate (JSON's "\\ud800" escape, YAML's, raw bytes in a mail header) cannot be
encoded as UTF-8, so storing or hashing it would fail the whole file. Every draft passes
here before it becomes a chunk: such characters become U+FFFD and the rest is kept.
"""

from __future__ import annotations

import json
from dataclasses import replace

from engine.records import Draft
from engine.text import clean_json, clean_text, is_clean


def clean_draft(draft: Draft) -> Draft:
    """The draft itself when its text is clean, else a copy with U+FFFD for each lone
    surrogate in its content, title, location, date, people and metadata."""
    texts = (draft.content, draft.title, draft.location, draft.content_date or "", *draft.people)
    if all(map(is_clean, texts)) and is_clean(
        json.dumps(draft.metadata, ensure_ascii=False, default=str)
    ):
        return draft
    return replace(
        draft,
        content=clean_text(draft.content),
        title=clean_text(draft.title),
        location=clean_text(draft.location),
        content_date=None if draft.content_date is None else clean_text(draft.content_date),
        people=tuple(clean_text(p) for p in draft.people),
        metadata=clean_json(draft.metadata),
    )
