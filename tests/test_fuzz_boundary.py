"""The per-file boundary under fuzzing: every recogniser and every reader, fed what a home
folder really holds besides exports.

The inputs: the fixtures' own bytes, cut short and mutated (bytes flipped, inserted,
deleted, a span doubled); JSON of every shape and nesting, its keys holding colons, quotes,
backslashes and line breaks, pretty-printed or not; binary noise; text in the wrong encoding
(UTF-16 without a BOM, cp1252, GB2312, Big5, Shift JIS). What must hold:

- a recogniser answers yes or no, and the walk's boundary (`Sniffer.source_type` on a file
  on disk) never raises;
- a reader, with chunking, cleaning and mentions (`indexer.extract_file`), returns what it
  read or raises `ExtractError`, the project's "bad file" error, nothing else.

Examples are derandomized and few per type (the file runs in well under a minute); the
fixed regressions are explicit examples.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from engine.extractors import ExtractError, Siblings
from engine.extractors.recognisers import CONTENT_TYPES, RECOGNISERS
from engine.extractors.registry import REGISTRY
from engine.extractors.sniffing import (
    HEAD_BYTES,
    Recogniser,
    SiblingCheck,
    json_keys,
    no_siblings,
)
from engine.index import recognise
from engine.index.indexer import Extracted, extract_file
from engine.index.recognise import Sniffer
from engine.index.routes import DEFAULT_ROUTES, Found, classify_path
from engine.index.runs import reindex
from engine.index.siblings import Resolved, SiblingFiles
from engine.settings import Settings
from engine.store import db, people
from tests.conftest import make_settings
from tests.test_fuzz_extractors import KEYS

FIXTURES = Path(__file__).parent / "fixtures"
FUZZ = hsettings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# A chat API page whose reaction keys start with a colon, pretty-printed: a string value
# followed by a ':key' once made the JSON key sniffing raise and stopped the whole run.
COLON_KEYED_PAGE = json.dumps(
    {
        "ok": True,
        "channel": "C024BE91L",
        "messages": [
            {
                "type": "message",
                "user": "U061F7AUR",
                "text": "deploying now: wait for it",
                "ts": "1712345678.000200",
                "reactions": {":wait:": ["U061F7AUR"], ":+1:": ["U0G9QF9C6"]},
            }
        ],
        ":eyes:": "seen",
    },
    indent=2,
).encode()


def fixture_files() -> dict[str, list[Path]]:
    """Each fixture folder's files (a source type's), goldens left out."""
    files: dict[str, list[Path]] = {}
    for path in sorted(FIXTURES.rglob("*")):
        if path.is_file() and not path.name.endswith(".golden.json"):
            files.setdefault(path.relative_to(FIXTURES).parts[0], []).append(path)
    return files


FIXTURE_FILES = fixture_files()
FIXTURE_BYTES = [p.read_bytes() for paths in FIXTURE_FILES.values() for p in paths]


def _utf8_texts() -> list[str]:
    texts = []
    for data in FIXTURE_BYTES:
        try:
            texts.append(data[:HEAD_BYTES].decode("utf-8"))
        except UnicodeDecodeError:
            continue
    return texts + ["会议记录：明天下午三点开会", "Formação em São Paulo — café", "Ελληνικά ✓"]


TEXTS = _utf8_texts()


# -- strategies ---------------------------------------------------------------------------------


@st.composite
def mutated(draw: st.DrawFn, sources: list[bytes]) -> bytes:
    """One of `sources`, cut short or not, with up to four edits."""
    data = draw(st.sampled_from(sources))
    if draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data)))]
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(data)))
        edit = draw(st.sampled_from(["flip", "insert", "delete", "double"]))
        if edit == "flip" and at < len(data):
            data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :]
        elif edit == "insert":
            data = data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
        elif edit == "delete":
            data = data[:at] + data[at + draw(st.integers(1, 64)) :]
        else:
            data = data[:at] + data[at : at + 200] * 2 + data[at + 200 :]
    return data


# Keys that have broken key sniffing, or could: colons, quotes, backslashes, line breaks.
AWKWARD_KEYS = (":wait:", ":+1:", '"', "\\", "\n", 'a": "b', "\\u12", ":", "", " : ", "\u2028")
_keys = st.sampled_from(AWKWARD_KEYS + KEYS) | st.text(max_size=12)
_leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=16)
    | st.sampled_from([":wait:", "a: b", "2024-03-11T08:00:00Z", "1712345678.000200"])
)
json_values = st.recursive(
    _leaves,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_keys, children, max_size=5),
    max_leaves=20,
)


@st.composite
def json_documents(draw: st.DrawFn) -> bytes:
    """JSON of any shape, as one document, as JSON lines, or cut short."""
    value = draw(json_values)
    indent = draw(st.sampled_from([None, 1, 2, "\t"]))
    ascii_only = draw(st.booleans())
    if draw(st.booleans()) and isinstance(value, list):
        text = "\n".join(json.dumps(v, ensure_ascii=ascii_only) for v in value)
    else:
        text = json.dumps(value, indent=indent, ensure_ascii=ascii_only)
    data = text.encode("utf-8", "surrogatepass")
    return data[: draw(st.integers(0, len(data)))] if draw(st.booleans()) else data


ENCODINGS = ("utf-16-le", "utf-16-be", "cp1252", "gb2312", "big5", "shift_jis", "latin-1")


@st.composite
def wrong_encodings(draw: st.DrawFn) -> bytes:
    """A fixture's text (or a line of Chinese, Portuguese, Greek) in another encoding."""
    text = draw(st.sampled_from(TEXTS))
    return text.encode(draw(st.sampled_from(ENCODINGS)), errors="replace")


noise = st.binary(max_size=2 * HEAD_BYTES)
hostile_bytes = st.one_of(
    mutated(FIXTURE_BYTES), json_documents(), noise, wrong_encodings(), st.just(COLON_KEYED_PAGE)
)


# -- recognisers ----------------------------------------------------------------------------------

SPECIAL_NAMES = (
    "result.json",
    "message_1.json",
    "messages.json",
    "_chat.txt",
    "WhatsApp Chat with Ana.txt",
    "Inbox",
    "chat.db",
    "meeting_saved_closed_caption.txt",
)


def names_for(recogniser: Recogniser) -> list[str]:
    """File names this recogniser reads: a dated name per suffix, its whole names, and the
    special names that end as its files do."""
    names = [f"2024-03-11{s}" if s.startswith(".") else s for s in recogniser.suffixes]
    names += [n for n in SPECIAL_NAMES if n.lower().endswith(recogniser.suffixes)]
    return sorted(set(names))


def exists_everywhere(relative: str) -> bool:
    return True


def answers(recogniser: Recogniser, head: bytes) -> list[object]:
    """What the recogniser says of this head under each of its names, with and without
    siblings; an exception's type where it raised."""
    said: list[object] = []
    for name in names_for(recogniser):
        for siblings in (no_siblings, exists_everywhere):
            try:
                said.append(recogniser.test(name, head[:HEAD_BYTES], siblings))
            except Exception as exc:  # the point of the test: a recogniser must answer
                said.append(f"{name}: {type(exc).__name__}: {exc}")
    return said


@pytest.mark.parametrize("kind", sorted(RECOGNISERS))
@FUZZ
@given(head=hostile_bytes)
@example(head=COLON_KEYED_PAGE)
@example(head=b'{"name": "general",\n  ":wait:": 1}')
def test_every_recogniser_answers_yes_or_no_whatever_the_head(kind: str, head: bytes) -> None:
    said = answers(RECOGNISERS[kind], head)
    assert all(isinstance(answer, bool) for answer in said), [
        a for a in said if not isinstance(a, bool)
    ]


@FUZZ
@given(text=st.text(max_size=300) | json_documents().map(lambda b: b.decode("utf-8", "replace")))
@example(text=COLON_KEYED_PAGE.decode())
@example(text='"\\u12": 1, "\\x": 2, "a\\\n": 3, "')
def test_json_keys_never_raises_and_finds_only_keys(text: str) -> None:
    keys = json_keys(text)
    assert all(isinstance(key, str) for key in keys)


def test_json_keys_reads_the_colon_keyed_page_whole() -> None:
    keys = json_keys(COLON_KEYED_PAGE.decode())
    assert {":wait:", ":+1:", ":eyes:", "channel", "messages", "reactions"} <= keys
    assert "deploying now: wait for it" not in keys and "," not in keys


@pytest.fixture(scope="module")
def walk_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    base = tmp_path_factory.mktemp("boundary")
    (base / "home").mkdir()
    (base / "index").mkdir()
    return make_settings(base / "home", base / "index" / "memex.db")


def recognise_on_disk(settings: Settings, name: str, data: bytes) -> tuple[str | None, Sniffer]:
    """The walk's recognition of a file of this name and these bytes."""
    folder = settings.roots[0] / "Downloads"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_bytes(data)
    stat = path.stat()
    sniffer = Sniffer(settings)
    try:
        return sniffer.source_type(path, stat.st_mtime, stat.st_size), sniffer
    finally:
        sniffer.siblings.archives.close()
        path.unlink()


ALL_NAMES = sorted({n for _, r in CONTENT_TYPES for n in names_for(r)})


@FUZZ
@given(name=st.sampled_from(ALL_NAMES), data=hostile_bytes)
@example(name="conversations.history.json", data=COLON_KEYED_PAGE)
def test_the_walks_recognition_never_raises(
    walk_settings: Settings, name: str, data: bytes
) -> None:
    found, sniffer = recognise_on_disk(walk_settings, name, data)
    assert found is None or found in REGISTRY
    assert all("Error" not in message for _, message in sniffer.problems), sniffer.problems


# -- readers ------------------------------------------------------------------------------------


def reader_names(source_type: str) -> list[str]:
    """Names a reader of this type is given: its fixtures' and its routes' suffixes."""
    names = {p.name for p in FIXTURE_FILES.get(source_type, [])}
    suffixes = {
        PurePosixPath(r.pattern).suffix for r in DEFAULT_ROUTES if r.source_type == source_type
    }
    names |= {f"2024-03-11{s}" for s in suffixes if s}
    return sorted(names) or ["2024-03-11.jsonl"]


def read(source_type: str, name: str, data: bytes, siblings: Siblings | None = None) -> str:
    """ "" when the reader kept its contract (records, or ExtractError), else what escaped."""
    path = Path("/nonexistent/memex-fuzz/data/export/chan") / name
    found = Found(path, path.parents[3], f"data/export/chan/{name}", source_type, 0.0, len(data))
    try:
        made = extract_file(found, data, siblings or Siblings())
    except ExtractError:
        return ""
    except Exception as exc:  # the point of the test: anything else breaks the contract
        return f"{source_type} {name}: {type(exc).__name__}: {str(exc)[:120]}"
    return "" if isinstance(made, Extracted) else f"returned {type(made).__name__}"


def own_fixtures(source_type: str) -> list[bytes]:
    return [p.read_bytes() for p in FIXTURE_FILES.get(source_type, [])] or FIXTURE_BYTES[:8]


def reader_inputs(source_type: str) -> st.SearchStrategy[bytes]:
    return st.one_of(mutated(own_fixtures(source_type)), hostile_bytes)


@pytest.mark.parametrize("source_type", sorted(REGISTRY))
@FUZZ
@given(data=st.data())
def test_every_reader_returns_records_or_an_extract_error(
    source_type: str, data: st.DataObject
) -> None:
    name = data.draw(st.sampled_from(reader_names(source_type)), label="name")
    payload = data.draw(reader_inputs(source_type), label="bytes")
    assert read(source_type, name, payload) == ""


SLACK_LISTINGS = ("../users.json", "../channels.json", "../dms.json", "../mpims.json")


@FUZZ
@given(listing=st.sampled_from(SLACK_LISTINGS), sibling=hostile_bytes)
def test_a_hostile_sibling_is_the_readers_problem_not_an_escape(
    listing: str, sibling: bytes
) -> None:
    day = (FIXTURES / "slack").rglob("2024-03-1*.json")
    data = next(iter(sorted(day))).read_bytes()
    assert read("slack", "2024-03-11.json", data, Siblings({listing: sibling})) == ""


# -- the boundary itself: what fails inside it is one file's problem ---------------------------


def _raises(name: str, head: bytes, siblings: SiblingCheck) -> bool:
    raise KeyError(name)  # what a recogniser's fault looks like from outside


@pytest.fixture
def discord_check_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Discord recogniser raising on every file, as key sniffing once did."""
    broken = tuple(
        (kind, replace(r, test=_raises) if kind == "discord" else r) for kind, r in CONTENT_TYPES
    )
    monkeypatch.setattr(recognise, "CONTENT_TYPES", broken)


@pytest.mark.usefixtures("discord_check_fails")
def test_a_recogniser_that_raises_says_no_and_the_others_are_still_asked(
    walk_settings: Settings,
) -> None:
    meta = (FIXTURES / "messenger" / "message_1.json").read_bytes()
    found, sniffer = recognise_on_disk(walk_settings, "message_1.json", meta)
    assert found == "messenger"  # asked after Discord, which failed
    assert [message for _, message in sniffer.problems] == [
        "could not be checked for Discord (Memex failed on its first bytes); "
        "it was read as Messenger"
    ]


@pytest.mark.usefixtures("discord_check_fails")
def test_a_file_a_check_failed_on_is_one_problem_and_gets_no_verdict(
    walk_settings: Settings,
) -> None:
    found, sniffer = recognise_on_disk(walk_settings, "export.json", COLON_KEYED_PAGE)
    assert found is None and sniffer.verdicts == []  # checked, and told, again next run
    assert [message for _, message in sniffer.problems] == [
        "could not be checked for Discord (Memex failed on its first bytes); it was left out"
    ]
    assert sniffer.skipped.unknown == 1


@pytest.fixture
def hashing(settings_factory: Callable[..., Settings]) -> Settings:
    settings = settings_factory(embedder__name="hashing")
    folder = settings.roots[0] / "notes"
    folder.mkdir()
    for name in ("a", "poison", "z"):
        (folder / f"{name}.md").write_text(f"# {name}\nA line of {name}.\n")
    return settings


def indexed(settings: Settings) -> set[str]:
    conn = db.connect(settings.db_path, create=False)
    try:
        return {Path(r[0]).name for r in conn.execute("SELECT DISTINCT source_file FROM chunks")}
    finally:
        conn.close()


def test_siblings_that_raise_are_that_files_error_in_words(
    hashing: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = SiblingFiles.of

    def of(self: SiblingFiles, found: Found) -> Resolved:
        if found.path.name == "poison.md":
            raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
        return real(self, found)

    monkeypatch.setattr(SiblingFiles, "of", of)
    errors = dict(reindex(settings=hashing).errors)
    message = errors[str(hashing.roots[0] / "notes" / "poison.md")]
    assert message.startswith("something in it is not what Memex's Note reader expects")
    assert "UnicodeDecodeError" not in message and "invalid start byte" not in message
    assert indexed(hashing) == {"a.md", "z.md"}


def test_a_value_that_cannot_be_stored_is_that_files_error_and_rolled_back(
    hashing: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = people.replace_mentions

    def replace_mentions(conn: Any, path: str, *rest: Any) -> None:
        if path.endswith("poison.md"):
            raise RecursionError("maximum recursion depth exceeded while encoding")
        real(conn, path, *rest)

    monkeypatch.setattr(people, "replace_mentions", replace_mentions)
    errors = dict(reindex(settings=hashing).errors)
    assert list(errors) == [str(hashing.roots[0] / "notes" / "poison.md")]
    assert "RecursionError" not in errors[str(hashing.roots[0] / "notes" / "poison.md")]
    assert indexed(hashing) == {"a.md", "z.md"}  # none of poison.md's chunks were kept


@pytest.mark.usefixtures("discord_check_fails")
def test_reindexing_one_file_tells_the_check_that_failed_on_it(hashing: Settings) -> None:
    """`memex reindex FILE` and the watcher's batches type a file alone (`classify_path`):
    a failed check is that file's error, as on a walk."""
    folder = hashing.roots[0] / "Downloads"
    folder.mkdir()
    page = folder / "export.json"
    page.write_bytes(COLON_KEYED_PAGE)
    one = classify_path(page, hashing)
    assert one.found == () and [p for p, _ in one.problems] == [str(page)]
    stats = reindex([page], settings=hashing)
    assert dict(stats.errors) == {
        str(page): "could not be checked for Discord (Memex failed on its first bytes); "
        "it was left out"
    }


@pytest.mark.usefixtures("discord_check_fails")
def test_reindexing_a_folder_tells_the_file_a_check_failed_on(hashing: Settings) -> None:
    folder = hashing.roots[0] / "Downloads"
    folder.mkdir()
    (folder / "export.json").write_bytes(COLON_KEYED_PAGE)
    stats = reindex([folder], settings=hashing)
    assert dict(stats.errors) == {
        str(folder / "export.json"): "could not be checked for Discord (Memex failed on its "
        "first bytes); it was left out"
    }
