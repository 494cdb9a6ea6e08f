"""Known people: the people directory built from the data, the curated people file, and
matching names in text.

normalise (names, emails, phones, handles as compared) · curated (the people file and its
corrections) · resolve (the join rules) · profile (a group of mentions as a Person) ·
directory (`build_directory`, the presence threshold) · matcher (`PeopleMatcher`) · cards
(`profile_text`). docs/people.md says how it works for the user.
"""

from __future__ import annotations

from engine.people.cards import profile_text
from engine.people.curated import PeopleFileError, load_people, parse_people, read_people_file
from engine.people.directory import build_directory, carded, has_card
from engine.people.matcher import PeopleMatcher
from engine.people.normalise import slugify

__all__ = [
    "PeopleFileError",
    "PeopleMatcher",
    "build_directory",
    "carded",
    "has_card",
    "load_people",
    "parse_people",
    "profile_text",
    "read_people_file",
    "slugify",
]
