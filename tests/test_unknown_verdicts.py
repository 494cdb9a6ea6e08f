"""Files of no known format are read once: an unchanged one is not read again by later runs.

A verdict keeps the file's mtime and size and the folders whose listing its recognisers
consulted, under the signature of the recognisers that gave it; a changed file, a file
arriving beside it or other recognisers get it read again, and `--full` reads every file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.index import recognise
from engine.index.runs import reindex
from engine.settings import Settings
from engine.store import db
from tests.test_home_folder import EXPORTS, decoys, exports

Reads = list[str]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    exports(folder)
    decoys(folder)
    return folder


@pytest.fixture
def at_home(home: Path, settings_factory: Callable[..., Settings]) -> Settings:
    return settings_factory(home, embedder__name="hashing")


@pytest.fixture
def reads(home: Path, monkeypatch: pytest.MonkeyPatch) -> Reads:
    """The files whose head is read, root-relative, from now on."""
    seen: Reads = []
    real = recognise.read_head

    def counted(path: Path) -> bytes:
        seen.append(path.relative_to(home).as_posix())
        return real(path)

    monkeypatch.setattr(recognise, "read_head", counted)
    return seen


def stored(settings: Settings) -> set[str]:
    conn = db.connect(settings.db_path, create=False)
    try:
        return {Path(r[0]).name for r in conn.execute("SELECT path FROM unknown_files")}
    finally:
        conn.close()


def test_an_unchanged_unknown_file_is_read_once(at_home: Settings, reads: Reads) -> None:
    reindex(settings=at_home)
    first = list(reads)
    assert "Downloads/report.csv" in first and "package.json" in first
    reads.clear()
    again = reindex(settings=at_home)
    assert reads == [] and again.files == 0
    assert {"report.csv", "package.json", "tsconfig.json"} <= stored(at_home)


def test_a_changed_unknown_file_is_read_again(at_home: Settings, home: Path, reads: Reads) -> None:
    reindex(settings=at_home)
    reads.clear()
    (home / "Downloads/report.csv").write_text("date,region,revenue\n2024-03-03,EU,1\n" * 3)
    reindex(settings=at_home)
    assert reads == ["Downloads/report.csv"]


def test_a_file_arriving_beside_it_gets_it_read_again(
    at_home: Settings, home: Path, reads: Reads
) -> None:
    """A Slack day file is known by the export's listings two folders up: a day file
    copied before them is unknown until they arrive."""
    export = home / "Downloads/partial-export"
    day = export / "general" / "2024-03-20.json"
    day.parent.mkdir(parents=True)
    message = {"type": "message", "user": "U1", "text": "ferry at noon", "ts": "1710928800.0"}
    day.write_text(json.dumps([message]))
    reindex(settings=at_home)
    assert "2024-03-20.json" in stored(at_home)
    reads.clear()
    (export / "users.json").write_text(json.dumps([{"id": "U1", "name": "ana"}]))
    (export / "channels.json").write_text(json.dumps([{"id": "C1", "name": "general"}]))
    stats = reindex(settings=at_home)
    assert "Downloads/partial-export/general/2024-03-20.json" in reads
    assert stats.files == 1 and "2024-03-20.json" not in stored(at_home)


def test_full_reads_every_unknown_file_again(at_home: Settings, reads: Reads) -> None:
    reindex(settings=at_home)
    unknown = sorted(p for p in reads if p not in EXPORTS)  # an export's type is kept
    reads.clear()
    reindex(settings=at_home, full=True)
    assert sorted(reads) == unknown


def test_a_removed_file_loses_its_verdict(at_home: Settings, home: Path) -> None:
    reindex(settings=at_home)
    assert "report.csv" in stored(at_home)
    (home / "Downloads/report.csv").unlink()
    reindex(settings=at_home)
    assert "report.csv" not in stored(at_home)


def test_verdicts_of_other_recognisers_are_not_trusted(
    at_home: Settings, reads: Reads, monkeypatch: pytest.MonkeyPatch
) -> None:
    reindex(settings=at_home)
    unknown = sorted(p for p in reads if p not in EXPORTS)
    reads.clear()
    monkeypatch.setattr(recognise, "verdict_signature", lambda settings: "other-memex")
    reindex(settings=at_home)
    assert sorted(reads) == unknown
    reads.clear()
    reindex(settings=at_home)
    assert reads == []
