"""The people file (`profile/relationships.json`): the curated layer over the directory.

Each entry is a person as the user writes them: name, aliases, relationship, context, notes,
interests, milestones, and the corrections the directory takes from it: `emails`, `phones`,
`handles` (join what the rules did not), `not` (identifiers or names split off) and
`hidden: true` (never shown). Beside the people, the file's `me` names the archive's
owner (`load_me`); the window notes it with `write_me`, in the people file when a root has
one, else as the `people.me` setting in Memex's config file. Unknown keys are ignored;
docs/people.md has examples.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from engine.people.normalise import slugify
from engine.records import Person
from engine.settings import Settings, default_config_path
from engine.text import clean_json, has_surrogate_escape, json_words


class PeopleFileError(ValueError):
    """The people file cannot be read as people, or `me` cannot be noted: one sentence,
    the file is left as it is."""


def _texts(value: Any) -> tuple[str, ...]:
    """A list of strings as the file gives it (a lone string is a list of one)."""
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return tuple(str(i).strip() for i in items if isinstance(i, str | int) and str(i).strip())


def _milestones(value: Any) -> tuple[tuple[str, str], ...]:
    items = value if isinstance(value, list) else []
    return tuple(
        (str(m.get("date", "")), str(m.get("event", ""))) for m in items if isinstance(m, dict)
    )


def _person(raw: dict[str, Any]) -> Person | None:
    name = str(raw.get("name") or "").strip()
    if not name:
        return None
    return Person(
        name=name,
        slug=slugify(name),
        aliases=_texts(raw.get("aliases")),
        relationship=str(raw.get("relationship") or ""),
        context=str(raw.get("context") or ""),
        notes=_texts(raw.get("notes")),
        interests=_texts(raw.get("interests")),
        milestones=_milestones(raw.get("milestones")),
        emails=_texts(raw.get("emails")),
        phones=_texts(raw.get("phones")),
        handles=_texts(raw.get("handles")),
        curated=True,
        hidden=raw.get("hidden") is True,
        split=_texts(raw.get("not")),
    )


def parse_people(data: bytes) -> list[Person]:
    """The people of one file; raises ValueError (PeopleFileError or json's own) when the
    file is not JSON or holds no list of people."""
    text = data.decode("utf-8-sig")
    raw = json.loads(text)
    if has_surrogate_escape(text):  # "\ud800" in a name: U+FFFD, the rest is kept
        raw = clean_json(raw)
    items = raw.get("people", []) if isinstance(raw, dict) else raw
    if not isinstance(items, list):
        raise PeopleFileError('expected a list of people (or {"people": [...]})')
    return [p for p in (_person(r) for r in items if isinstance(r, dict)) if p is not None]


def read_people_file(path: Path) -> list[Person]:
    """One root's people file; [] when there is none. A file that cannot be read raises
    PeopleFileError with one sentence naming it."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise PeopleFileError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    try:
        return parse_people(data)
    except PeopleFileError as exc:
        raise PeopleFileError(f"{path}: {exc}") from exc
    except (ValueError, RecursionError) as exc:  # RecursionError: nested past json's limit
        raise PeopleFileError(f"{path}: not a JSON people file ({_reason(exc)})") from exc


def _reason(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"line {exc.lineno}, column {exc.colno}: {json_words(exc.msg)}"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    return "nested too deeply" if isinstance(exc, RecursionError) else str(exc)


def load_people(settings: Settings) -> list[Person]:
    """People from every root's people file (the first root naming a slug wins); a bad
    file is skipped (the indexer records it)."""
    people: dict[str, Person] = {}
    for root in settings.roots:
        try:
            found = read_people_file(Path(root) / settings.people_file)
        except PeopleFileError:
            continue
        for person in found:
            people.setdefault(person.slug, person)
    return list(people.values())


def people_file_errors(settings: Settings) -> list[tuple[str, str]]:
    """(path, one sentence) for every root's people file that cannot be read."""
    errors = []
    for root in settings.roots:
        path = Path(root) / settings.people_file
        try:
            read_people_file(path)
        except PeopleFileError as exc:
            errors.append((str(path), str(exc)))
    return errors


def curated_signature(settings: Settings) -> str:
    """What the people files are now: each root's file with its mtime and size (or
    missing), and the `people.me` setting when it is set, as one JSON text to compare with
    the one the directory was last built on (a changed owner rebuilds it, as an edit does)."""
    seen: list[list[object]] = []
    for root in settings.roots:
        path = Path(root) / settings.people_file
        try:
            stat = path.stat()
        except OSError:
            seen.append([str(path), None, None])
            continue
        seen.append([str(path), stat.st_mtime_ns, stat.st_size])
    if settings.people.me.strip():  # only when set: an index built without it stays as built
        seen.append(["people.me", settings.people.me.strip()])
    return json.dumps(seen, ensure_ascii=False)


# -- the archive's owner: the people file's `me` ------------------------------------------------


def me_of(raw: Any) -> str:
    """A people file's `me`, as parsed JSON: who the archive's owner is (their profile id
    or slug, a name or alias, an address, a number or a handle); "" when it gives none."""
    value = raw.get("me") if isinstance(raw, dict) else None
    return value.strip() if isinstance(value, str) else ""


def _raw_file(path: Path) -> Any:
    """A people file as parsed JSON; None when it is missing. PeopleFileError when it
    cannot be read as JSON (nothing is written over it then)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise PeopleFileError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    try:
        return json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError) as exc:
        raise PeopleFileError(f"{path}: not a JSON people file ({_reason(exc)})") from exc


def load_me(settings: Settings) -> str:
    """The `me` of the first root's people file that gives one; "" when none does (a file
    that cannot be read is skipped, as `load_people` skips it)."""
    for root in settings.roots:
        try:
            me = me_of(_raw_file(Path(root) / settings.people_file))
        except PeopleFileError:
            continue
        if me:
            return me
    return ""


def people_file_found(settings: Settings) -> Path | None:
    """The first root's people file that exists; None when no root has one."""
    paths = (Path(root) / settings.people_file for root in settings.roots)
    return next((path for path in paths if path.exists()), None)


def write_me(settings: Settings, me: str) -> Path:
    """Note who the archive's owner is: `me` in the first root's people file that exists
    (`write_me_into`), else the `people.me` setting in Memex's config file. A root is
    often the user's home or Downloads folder: no file or folder is made among their data
    unasked (docs/people.md, "You"). Returns the path written; PeopleFileError (one
    sentence) when it cannot be read or written."""
    path = people_file_found(settings)
    if path is not None:
        write_me_into(path, me)
        return path
    config = settings.config_path or default_config_path()
    # Imported here: a search reads this module, and only "This is me" writes TOML.
    from engine.settings.config_writer import write_config

    try:
        write_config(config, {"people.me": me})  # the file's other settings kept
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise PeopleFileError(f"{config}: cannot be written ({reason})") from exc
    return config


def write_me_into(path: Path, me: str) -> None:
    """Set `me` in the people file at `path`. The file is written again as JSON, its
    people and keys kept, `me` first; a bare list becomes `{"me": …, "people": [...]}`.
    PeopleFileError (one sentence) when it cannot be read or written."""
    raw = _raw_file(path)
    if raw is None:
        raw = {"people": []}
    elif isinstance(raw, list):
        raw = {"people": raw}
    elif not isinstance(raw, dict):
        raise PeopleFileError(f'{path}: expected a list of people (or {{"people": [...]}})')
    document = {"me": me, **{k: v for k, v in raw.items() if k != "me"}}
    text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    try:
        temporary = path.with_name(path.name + ".memex-new")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)  # never half a file: the directory reads it any time
    except OSError as exc:
        raise PeopleFileError(f"{path}: cannot be written ({exc.strerror or exc})") from exc
