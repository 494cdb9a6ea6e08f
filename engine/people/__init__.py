"""Known people: the people directory built from the data, the curated people file, and
matching names in text.

normalise (names, emails, phones, handles as compared) · curated (the people file and its
corrections) · resolve (the join rules) · profile (a group of mentions as a Person) ·
directory (`build_directory`, the presence threshold) · matcher (`PeopleMatcher`) · cards
(`profile_text`). docs/people.md says how it works for the user.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.lazy import lazy_names

if TYPE_CHECKING:
    from engine.people.cards import carded, has_card, profile_text
    from engine.people.curated import (
        PeopleFileError,
        curated_signature,
        load_people,
        parse_people,
        read_people_file,
    )
    from engine.people.directory import build_directory
    from engine.people.matcher import PeopleMatcher
    from engine.people.normalise import slugify

# Its names load on first use (PEP 562): a search reads cards and matches names, and
# never loads the directory's build (resolve, profile, orgs, shared), which only an
# indexing run needs.
_LAZY = {
    "PeopleFileError": "engine.people.curated",
    "PeopleMatcher": "engine.people.matcher",
    "build_directory": "engine.people.directory",
    "carded": "engine.people.cards",
    "curated_signature": "engine.people.curated",
    "has_card": "engine.people.cards",
    "load_people": "engine.people.curated",
    "parse_people": "engine.people.curated",
    "profile_text": "engine.people.cards",
    "read_people_file": "engine.people.curated",
    "slugify": "engine.people.normalise",
}

__getattr__ = lazy_names(__name__, globals(), _LAZY)

__all__ = [
    "PeopleFileError",
    "PeopleMatcher",
    "build_directory",
    "carded",
    "curated_signature",
    "has_card",
    "load_people",
    "parse_people",
    "profile_text",
    "read_people_file",
    "slugify",
]
