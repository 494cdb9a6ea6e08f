"""`memex people`: who is known, from where, how much, since when (docs/people.md)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from engine.cli.common import EXIT_OK, Parser, add_common, require_sound, settings_from
from engine.people.cards import has_card, source_label
from engine.people.curated import people_file_errors
from engine.people.shared import identifiers_on_several
from engine.records import Person
from engine.settings import Settings
from engine.store.directory import read_people

NAME_WIDTH = 28


def cmd_people(argv: Sequence[str], out: TextIO) -> int:
    p = Parser(
        prog="memex people",
        description="The people directory: who is known, from where (files per source "
        "type), messages, first and last contact.",
    )
    add_common(p)
    p.add_argument("--json", action="store_true", help="one JSON object, for scripts")
    p.add_argument("--all", action="store_true", help="everyone, below the card threshold too")
    args = p.parse_args(argv)
    settings = settings_from(args)
    if settings.db_path.exists():
        require_sound(settings.db_path)
    else:
        _warn(f"no index at {settings.db_path} yet: the people file alone; run 'memex reindex'")
    for _, message in people_file_errors(settings):
        _warn(f"{message}; its people are left out until it is fixed")
    known = read_people(settings)
    shown = known if args.all else [p for p in known if has_card(p, settings)]
    if args.json:
        out.write(json.dumps(people_json(known, shown, settings), indent=2) + "\n")
    else:
        print_people(known, shown, args.all, out)
    return EXIT_OK


def people_json(known: Sequence[Person], shown: Sequence[Person], settings: Settings) -> Any:
    return {
        "known": len(known),
        "with_card": sum(1 for p in known if has_card(p, settings)),
        "people": [{**p.as_dict(), "card": has_card(p, settings)} for p in shown],
        "shared": [
            {"identifier": ident, "names": list(names)}
            for ident, names in identifiers_on_several(known)
        ],
    }


def print_people(
    known: Sequence[Person], shown: Sequence[Person], everyone: bool, out: TextIO
) -> None:
    for person in shown:
        out.write(person_line(person) + "\n")
    if everyone:
        for ident, names in identifiers_on_several(known):
            out.write(shared_line(ident, names) + "\n")
    more = "" if everyone or len(shown) == len(known) else "; --all lists everyone"
    out.write(f"{len(shown)} of {len(known)} known people shown{more}\n")


def person_line(person: Person) -> str:
    """ "Priya Raman   Slack 12, Mail 3 · 214 messages · 2024-02-01 – 2026-06-20 · curated" """
    where = ", ".join(f"{source_label(t)} {n}" for t, n in person.sources) or "the people file"
    parts = [where, f"{person.messages} messages"]
    if person.first or person.last:
        parts.append(f"{(person.first or '?')[:10]} – {(person.last or '?')[:10]}")
    if person.curated:
        parts.append("in the people file")
    return f"{person.name:<{NAME_WIDTH}} {' · '.join(parts)}"


def shared_line(ident: str, names: Sequence[str]) -> str:
    """ "support@acme.example   shared by 3 names: Jane Doe, Tom Hill, Acme Support, not used
    to join" """
    return (
        f"{ident:<{NAME_WIDTH}} shared by {len(names)} names: {', '.join(names)}, not used to join"
    )


def _warn(message: str) -> None:
    sys.stderr.write(f"memex: {message}\n")
