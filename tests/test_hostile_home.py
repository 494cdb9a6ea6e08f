"""A home folder holding the inputs that break readers, beside good exports: each hostile
file is one clear error of the run naming it, and everything else is indexed.

The hostile inputs: a zip bomb, a `../` member, a truncated zip, a 2 GiB mbox (sparse), a
PDF with a broken xref, an encrypted PDF, a `chat.db` locked by another process, and a
WhatsApp export in a date format no phone writes.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

from engine.index.runs import reindex
from engine.settings import Settings
from tests.pdf_files import broken_xref_pdf, encrypted_pdf
from tests.test_archives import write_zip
from tests.test_home_folder import EXPORTS, FIXTURES, exports, indexed_types
from tests.test_imessage import build_chat_db

HOSTILE = {
    "Downloads/bomb.zip!/_chat.txt": "zip bomb",
    "Downloads/escape.zip!/../../evil.txt": "leaves the archive",
    "Downloads/cut-short.zip": "not a readable zip",
    "Takeout/Mail/Huge.mbox": "larger than",
    "Documents/broken.pdf": "",  # pypdf's own words: asserted to be one error
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
