"""A home folder holding the inputs that break readers, beside good exports: each hostile
file is one clear error of the run naming it, and everything else is indexed.

The hostile inputs: a zip bomb, a `../` member, a truncated zip, a 2 GiB mbox (sparse), a
PDF with a broken xref, an encrypted PDF, a `chat.db` locked by another process, and a
WhatsApp export in a date format no phone writes. Then `memex reindex` and `memex discover`
in-process on a Downloads folder of what a browser leaves there (a chat API page whose keys
start with a colon, which once stopped the whole run; a JSON export cut short; noise named
`.eml` and `.docx`; a calendar in the wrong encoding) beside one real export.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.cli import run
from engine.extractors import discord, garmin, google_chat, meta_messages, telegram
from engine.index.runs import reindex
from engine.settings import Settings
from engine.store import db
from tests.conftest import cli_args
from tests.pdf_files import broken_xref_pdf, encrypted_pdf
from tests.test_archives import write_zip
from tests.test_fuzz_boundary import COLON_KEYED_PAGE
from tests.test_home_folder import EXPORTS, FIXTURES, exports, indexed_types
from tests.test_imessage import build_chat_db

HOSTILE = {
    "Downloads/bomb.zip!/_chat.txt": "zip bomb",
    "Downloads/escape.zip!/../../evil.txt": "leaves the archive",
    "Downloads/cut-short.zip": "not a readable zip",
    "Takeout/Mail/Huge.mbox": "larger than",
    "Documents/broken.pdf": "not a readable PDF: damaged, cut short or not a PDF at all",
    "Documents/locked.pdf": "encrypted",
    "Downloads/WhatsApp Chat with Yuki.txt": "not a WhatsApp chat export",
}


def hostile(home: Path) -> None:
    write_zip(home / "Downloads/bomb.zip", {"_chat.txt": b"0" * (16 * 2**20)})
    chat = (FIXTURES / "whatsapp" / "_chat.txt").read_bytes()
    write_zip(home / "Downloads/escape.zip", {"../../evil.txt": chat})
    write_zip(home / "Downloads/whole.zip", {"_chat.txt": chat})
    whole = (home / "Downloads/whole.zip").read_bytes()
    (home / "Downloads/cut-short.zip").write_bytes(whole[: len(whole) // 2])
    huge = home / "Takeout/Mail/Huge.mbox"
    huge.write_bytes((FIXTURES / "email_catalog" / "inbox.mbox").read_bytes())
    os.truncate(huge, 2 * 2**30)  # 2 GiB, sparse: nothing of it is written to disk
    (home / "Documents/broken.pdf").write_bytes(broken_xref_pdf())
    (home / "Documents/locked.pdf").write_bytes(encrypted_pdf())
    shutil.copy(
        FIXTURES / "whatsapp" / "unknown-date-format.txt",
        home / "Downloads/WhatsApp Chat with Yuki.txt",
    )
    build_chat_db(home / "Library/Messages/chat.db")


def test_each_hostile_file_is_one_error_and_nothing_else_is_lost(
    tmp_path: Path, settings_factory: Callable[..., Settings]
) -> None:
    home = tmp_path / "home"
    exports(home)
    hostile(home)
    holder = sqlite3.connect(home / "Library/Messages/chat.db")
    holder.execute("BEGIN EXCLUSIVE")  # Messages holds it
    try:
        stats = reindex(settings=settings_factory(home, embedder__name="hashing"))
    finally:
        holder.rollback()
        holder.close()
    errors = {str(Path(path).relative_to(home)): message for path, message in stats.errors}
    assert set(errors) == set(HOSTILE), errors
    for where, words in HOSTILE.items():
        assert words in errors[where] and "Traceback" not in errors[where]
    types = indexed_types(settings_factory(home), home)
    assert {k: v for k, v in types.items() if k in EXPORTS} == EXPORTS
    assert types["Downloads/whole.zip!/_chat.txt"] == "whatsapp"
    assert types["Library/Messages/chat.db"] == "imessage"
    assert not list(tmp_path.rglob("evil.txt"))


# -- `memex reindex` and `memex discover` on what a Downloads folder holds ----------------------

PAGE = "Downloads/conversations.history.json"
DISCORD = "tests/fixtures/discord/Climbing Crew - Text Channels - trip-planning [1101234567890999999].json"
BROKEN = {  # each one error of the run, in words
    "Downloads/Climbing Crew - Text Channels - general [1101].json": "not JSON",
    "Downloads/Report.docx": "not a readable .docx: it is not a zip archive",
}
CALENDAR = "Downloads/agenda.ics"  # an error or a note, in the calendar reader's words
EXCEPTION_NAME = re.compile(r"\b[A-Z]\w*(Error|Exception)\b|Traceback")


def downloads(home: Path) -> None:
    """One real chat export beside what else a Downloads folder holds."""
    folder = home / "Downloads"
    folder.mkdir(parents=True)
    chat = FIXTURES / "whatsapp" / "WhatsApp Chat with Raj Patel.txt"
    shutil.copy(chat, folder / chat.name)
    (home / PAGE).write_bytes(COLON_KEYED_PAGE)
    export = Path(__file__).parent.parent.joinpath(DISCORD).read_bytes()
    (folder / "Climbing Crew - Text Channels - general [1101].json").write_bytes(
        export[: len(export) // 2]
    )
    noise = bytes(range(256)) * 12
    (folder / "saved.eml").write_bytes(noise)
    (folder / "Report.docx").write_bytes(b"PK\x03\x04" + noise)
    (folder / "agenda.ics").write_bytes(
        "BEGIN:VCALENDAR\r\n会议 Forma\u00e7\u00e3o".encode("gb18030")
    )


def memex(settings: Settings, *argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run([*cli_args(settings), *argv], out, err)
    return code, out.getvalue() + err.getvalue()


def error_lines(output: str, home: Path) -> dict[str, list[str]]:
    """`memex reindex`'s error lines, by root-relative path."""
    errors: dict[str, list[str]] = {}
    for line in output.splitlines():
        if line.strip().startswith("error: "):
            path, message = line.strip().removeprefix("error: ").split(": ", 1)
            errors.setdefault(str(Path(path).relative_to(home)), []).append(message)
    return errors


def chat_indexed(settings: Settings) -> bool:
    conn = db.connect(settings.db_path, create=False)
    try:
        rows = conn.execute("SELECT DISTINCT source_file, source_type FROM chunks").fetchall()
    finally:
        conn.close()
    return (str(settings.roots[0] / "Downloads/WhatsApp Chat with Raj Patel.txt"), "whatsapp") in {
        tuple(r) for r in rows
    }


@pytest.fixture
def home(tmp_path: Path, settings_factory: Callable[..., Settings]) -> Settings:
    downloads(tmp_path / "home")
    return settings_factory(tmp_path / "home", embedder__name="hashing")


def test_reindex_and_discover_exit_0_and_each_broken_file_is_one_error(home: Settings) -> None:
    code, out = memex(home, "reindex")
    assert code == 0, out
    errors = error_lines(out, home.roots[0])
    assert set(errors) - {CALENDAR} == set(BROKEN), out  # the page, the noise: unknown, silent
    for where, words in BROKEN.items():
        assert len(errors[where]) == 1 and words in errors[where][0], errors[where]
    assert len(errors.get(CALENDAR, [])) <= 1
    assert not EXCEPTION_NAME.search(out), out
    assert chat_indexed(home)
    code, out = memex(home, "discover")
    assert code == 0 and "WhatsApp Chat with Raj Patel.txt" in out and "not read:" not in out, out


def regex_json_keys(text: str) -> set[str]:
    """JSON key sniffing as it once was: a key regex that matched from a value's closing
    quote across a line break to a ':key', and a json.loads that then raised."""
    keys = re.findall(r'"((?:[^"\\]|\\.){1,64})"\s*:', text)
    return {json.loads(f'"{key}"') for key in keys}


def test_a_check_that_raises_on_a_file_is_its_one_error_and_the_run_goes_on(
    home: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in (discord, garmin, google_chat, meta_messages, telegram):
        monkeypatch.setattr(module, "json_keys", regex_json_keys)
    with pytest.raises(json.JSONDecodeError):  # the check does fail on the page
        regex_json_keys(COLON_KEYED_PAGE.decode())
    code, out = memex(home, "reindex")
    assert code == 0, out
    errors = error_lines(out, home.roots[0])
    assert set(errors) - {CALENDAR} == {PAGE, *BROKEN}, out
    [page] = errors[PAGE]
    assert page.startswith("could not be checked for ") and page.endswith("it was left out")
    assert not EXCEPTION_NAME.search(page), page
    assert chat_indexed(home)
    code, out = memex(home, "discover")
    assert code == 0, out
    assert f"not read: {home.roots[0] / PAGE}: could not be checked for " in out, out
    assert "WhatsApp Chat with Raj Patel.txt" in out
