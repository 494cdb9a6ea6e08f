"""A root or folder that cannot be listed is an error for it, never a deletion of its files.

`memex reindex --root /path/with-a-typo` once deleted every chunk of the index with exit 0;
an unmounted drive and a folder made unreadable (chmod 000) did the same.
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.cli import run
from engine.index.runs import reindex
from engine.settings import Settings
from engine.store import db
from tests.conftest import assert_consistent, cli_args


def indexed(settings: Settings) -> set[str]:
    conn = db.connect(settings.db_path, create=False)
    try:
        rows = conn.execute("SELECT DISTINCT source_file FROM chunks").fetchall()
    finally:
        conn.close()
    return {Path(r[0]).name for r in rows}


def write_notes(root: Path, *names: str, folder: str = "notes") -> Path:
    target = root / folder
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        (target / f"{name}.md").write_text(f"# {name}\nA note called {name}.\n")
    return target


@pytest.fixture
def hashing(settings_factory: Callable[..., Settings]) -> Settings:
    return settings_factory(embedder__name="hashing")


@pytest.fixture
def deny_listing(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Path], None]]:
    """Make folders unlistable: chmod 000, and for root (who reads through it) a refusing
    os.scandir for exactly those folders."""
    denied: list[Path] = []
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        if any(Path(os.fspath(path)) == folder for folder in denied):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    def deny(folder: Path) -> None:
        denied.append(folder)
        folder.chmod(0)
        if os.geteuid() == 0:
            monkeypatch.setattr(os, "scandir", scandir)

    yield deny
    for folder in denied:
        folder.chmod(0o755)


def test_a_missing_root_deletes_nothing(hashing: Settings, tmp_path: Path) -> None:
    write_notes(hashing.roots[0], "a", "b")
    reindex(settings=hashing)
    typo = hashing.with_values(roots=[str(tmp_path / "with-a-typo")])
    stats = reindex(settings=typo)
    assert stats.deleted_chunks == 0 and indexed(hashing) == {"a.md", "b.md"}
    ((path, message),) = stats.errors
    assert path == str(tmp_path / "with-a-typo") and "does not exist" in message


def test_memex_reindex_with_a_typo_exits_4_and_keeps_the_index(
    hashing: Settings, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_notes(hashing.roots[0], "a", "b")
    args = cli_args(hashing)
    assert run(["reindex", *args], io.StringIO()) == 0
    typo = str(tmp_path / "with-a-typo")
    args[args.index("--root") + 1] = typo
    assert run(["reindex", *args], io.StringIO()) == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and typo in err[0] and "does not exist" in err[0]
    assert indexed(hashing) == {"a.md", "b.md"}
    assert_consistent(hashing.db_path)


def test_a_root_that_cannot_be_listed_deletes_nothing(
    hashing: Settings, deny_listing: Callable[[Path], None]
) -> None:
    write_notes(hashing.roots[0], "a", "b")
    reindex(settings=hashing)
    deny_listing(hashing.roots[0])
    stats = reindex(settings=hashing)
    assert stats.deleted_chunks == 0
    assert "cannot be listed" in dict(stats.errors)[str(hashing.roots[0])]
    assert indexed(hashing) == {"a.md", "b.md"}


def test_an_unreadable_folder_keeps_its_files_and_the_rest_is_reconciled(
    hashing: Settings, deny_listing: Callable[[Path], None]
) -> None:
    root = hashing.roots[0]
    trip = write_notes(root, "ferry", "hostel", folder="notes/trip")
    write_notes(root, "keep", "gone")
    reindex(settings=hashing)
    (root / "notes" / "gone.md").unlink()
    deny_listing(trip)
    stats = reindex(settings=hashing)
    assert indexed(hashing) == {"ferry.md", "hostel.md", "keep.md"}  # gone.md really went
    assert stats.deleted_files == 1
    assert "cannot be read" in dict(stats.errors)[str(trip)]
    folder_stats = reindex([root / "notes"], settings=hashing)  # an explicit folder path too
    assert folder_stats.deleted_files == 0
    assert indexed(hashing) == {"ferry.md", "hostel.md", "keep.md"}


def test_one_missing_root_of_two_keeps_its_files_only(
    settings_factory: Callable[..., Settings], tmp_path: Path
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    write_notes(first, "a", "old")
    write_notes(second, "b")
    settings = settings_factory([first, second], embedder__name="hashing")
    reindex(settings=settings)
    (first / "notes" / "old.md").unlink()
    shutil.rmtree(second)  # an unmounted drive
    stats = reindex(settings=settings)
    assert indexed(settings) == {"a.md", "b.md"}
    assert stats.deleted_files == 1 and list(dict(stats.errors)) == [str(second)]


def test_an_empty_root_with_indexed_files_keeps_them(
    hashing: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mount point whose drive is not mounted is an empty folder: its files are kept, and
    `memex reindex ROOT` (an explicit path) drops them when they really are gone."""
    root = hashing.roots[0]
    write_notes(root, "a", "b")
    reindex(settings=hashing)
    shutil.rmtree(root / "notes")
    stats = reindex(settings=hashing)
    assert stats.deleted_files == 0 and indexed(hashing) == {"a.md", "b.md"}
    assert "is empty" in dict(stats.errors)[str(root)]
    args = cli_args(hashing)
    assert run(["reindex", *args], io.StringIO()) == 4
    assert run(["reindex", *args, str(root)], io.StringIO()) == 0
    assert indexed(hashing) == set()
