"""What a root holds besides regular files: sockets, FIFOs and devices are skipped in plain
words and never opened; a file with no text (a heading alone) is a note of the run."""

from __future__ import annotations

import io
import json
import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine.cli import run
from engine.index import files
from engine.index.indexer import NO_TEXT, Action, Indexer
from engine.index.routes import classify
from engine.index.runs import open_writer, reindex
from engine.settings import Settings
from tests.conftest import cli_args


@pytest.fixture
def hashing(settings_factory: Callable[..., Settings]) -> Settings:
    return settings_factory(embedder__name="hashing")


def notes_folder(settings: Settings) -> Path:
    folder = settings.roots[0] / "notes"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "real.md").write_text("# Beans\nClimbing beans need poles.\n")
    return folder


@pytest.fixture
def a_socket(hashing: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A listening Unix socket at notes/sock.md (bound by a relative name: the test's
    folder may be longer than a socket address allows)."""
    folder = notes_folder(hashing)
    monkeypatch.chdir(folder)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listening:
        listening.bind("sock.md")
        listening.listen(1)
        yield folder / "sock.md"


@pytest.fixture
def opened_paths(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path the indexer's reader opens (the real os.open, watched)."""
    seen: list[str] = []
    real_open = os.open

    def watching(path: str | Path, flags: int, *args: int, **kwargs: int) -> int:
        seen.append(str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(files.os, "open", watching)
    return seen


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets")
def test_a_socket_under_a_root_is_skipped_in_plain_words(
    hashing: Settings, a_socket: Path, opened_paths: list[str]
) -> None:
    stats = reindex(settings=hashing)
    assert dict(stats.errors)[str(a_socket)] == "is a socket, not a regular file; skipped"
    assert str(a_socket) not in opened_paths and any(p.endswith("real.md") for p in opened_paths)
    assert stats.chunks == 1  # the note beside it is indexed
    again = reindex(settings=hashing)  # refused for what it is: not retried until it changes
    assert (again.files, again.errors) == (0, ())


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="no Unix sockets")
def test_memex_reindex_names_the_socket_without_an_errno(hashing: Settings, a_socket: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert run(["reindex", *cli_args(hashing)], out, err) == 0, err.getvalue()
    assert f"error: {a_socket}: is a socket, not a regular file; skipped\n" in out.getvalue()
    assert "Errno" not in out.getvalue() + err.getvalue()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_a_fifo_is_skipped_without_being_opened(hashing: Settings, opened_paths: list[str]) -> None:
    fifo = notes_folder(hashing) / "pipe.md"
    os.mkfifo(fifo)
    stats = reindex(settings=hashing)  # an open for reading would wait for a writer
    assert dict(stats.errors)[str(fifo)] == "is a FIFO (named pipe), not a regular file; skipped"
    assert str(fifo) not in opened_paths


@pytest.mark.skipif(not Path("/dev/null").exists(), reason="no /dev/null")
def test_a_device_is_skipped_without_being_opened(
    settings_factory: Callable[..., Settings], opened_paths: list[str]
) -> None:
    settings = settings_factory(embedder__name="hashing", follow_symlinks_outside_roots=True)
    device = notes_folder(settings) / "null.md"
    device.symlink_to("/dev/null")
    stats = reindex(settings=settings)
    assert dict(stats.errors)[str(device)] == "is a character device, not a regular file; skipped"
    assert str(device) not in opened_paths


def test_a_note_with_no_text_is_a_note_of_the_run_not_an_error(hashing: Settings) -> None:
    folder = notes_folder(hashing)
    heading = folder / "heading.md"
    heading.write_text("# Only a heading\n")
    (folder / "blank.md").write_text("\n   \n")
    stats = reindex(settings=hashing)
    assert stats.errors == () and stats.chunks == 1
    assert sorted(Path(p).name for p in stats.empty_files) == ["blank.md", "heading.md"]
    [record] = [json.loads(line) for line in hashing.log_path.read_text().splitlines()]
    assert {"file": str(heading), "note": NO_TEXT} in record["notes"]
    assert record["error_count"] == 0
    assert reindex(settings=hashing).empty_files == ()  # unchanged: not read, not told again


def test_the_summary_and_the_file_outcome_say_no_text(hashing: Settings) -> None:
    heading = notes_folder(hashing) / "heading.md"
    heading.write_text("# Only a heading\n")
    out, err = io.StringIO(), io.StringIO()
    assert run(["reindex", *cli_args(hashing)], out, err) == 0, err.getvalue()
    assert f"  note: {heading}: no text to index\n" in out.getvalue()
    assert "0 error(s)" in out.getvalue()
    conn = open_writer(hashing)
    try:
        found = classify(heading, hashing)
        assert found is not None
        outcome = Indexer(hashing, conn, None).index_file(found, force=True)
        error = conn.execute(
            "SELECT error FROM index_state WHERE source_file = ?", (str(heading),)
        ).fetchone()[0]
        left = conn.execute(
            "SELECT count(*) FROM chunks WHERE source_file = ?", (str(heading),)
        ).fetchone()[0]
    finally:
        conn.close()
    assert (outcome.action, outcome.new_chunks, outcome.message) == (Action.INDEXED, 0, NO_TEXT)
    assert (error, left) == (None, 0)  # `memex status` counts no error for it
