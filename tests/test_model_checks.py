"""The local model's sha256 is checked once per file identity and remembered
(engine/embedders/checksums.py): a second start hashes nothing; a changed file is hashed
again, and a corrupted model fails as it always did."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.embedders import EmbedderError, checksums, create_embedder, local
from engine.settings import Settings

Hashes = list[Path]


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> Hashes:
    """The files hashed from now on, in order."""
    seen: Hashes = []
    real = checksums.sha256_of

    def counting(path: Path) -> str:
        seen.append(path)
        return real(path)

    monkeypatch.setattr(checksums, "sha256_of", counting)
    return seen


@pytest.fixture
def model_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The real model and tokenizer, copied where a test may change them."""
    model, tokenizer = local.model_files()
    copies = tmp_path / "model" / "model.onnx", tmp_path / "model" / "tokenizer.json"
    copies[0].parent.mkdir()
    shutil.copy2(model, copies[0])
    shutil.copy2(tokenizer, copies[1])
    monkeypatch.setattr(local, "model_files", lambda: copies)
    return copies


def test_a_second_start_hashes_nothing(
    model_copy: tuple[Path, Path], hashed: Hashes, tmp_path: Path
) -> None:
    memo = tmp_path / "cache" / "model-checks.json"
    local.LocalEmbedder(checks_memo=memo)
    assert hashed == list(model_copy) and memo.exists()
    hashed.clear()
    local.LocalEmbedder(checks_memo=memo)
    assert hashed == []


def test_without_a_memo_every_start_hashes(model_copy: tuple[Path, Path], hashed: Hashes) -> None:
    local.LocalEmbedder()
    local.LocalEmbedder()
    assert hashed == [*model_copy, *model_copy]


def test_a_corrupted_model_fails_though_it_once_passed(
    model_copy: tuple[Path, Path], tmp_path: Path
) -> None:
    memo = tmp_path / "model-checks.json"
    local.LocalEmbedder(checks_memo=memo)
    model = model_copy[0]
    kept = os.stat(model)
    with model.open("r+b") as handle:  # one byte changed in place: same size and inode
        handle.seek(kept.st_size // 2)
        byte = handle.read(1)
        handle.seek(-1, os.SEEK_CUR)
        handle.write(bytes([byte[0] ^ 0xFF]))
    os.utime(model, ns=(kept.st_atime_ns, kept.st_mtime_ns))  # and the mtime put back
    with pytest.raises(EmbedderError, match="failed its sha256 check"):
        local.LocalEmbedder(checks_memo=memo)
    with pytest.raises(EmbedderError, match="failed its sha256 check"):
        local.LocalEmbedder(checks_memo=memo)  # a failure is never remembered


def file_with_hash(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "weights.bin"
    path.write_bytes(b"weights" * 1000)
    return path, checksums.sha256_of(path)


def test_a_changed_mtime_or_size_hashes_again(tmp_path: Path, hashed: Hashes) -> None:
    path, digest = file_with_hash(tmp_path)
    memo = tmp_path / "memo.json"
    hashed.clear()
    assert checksums.has_sha256(path, digest, memo)
    assert checksums.has_sha256(path, digest, memo)
    assert len(hashed) == 1
    os.utime(path, ns=(0, 1_000_000_000))
    assert checksums.has_sha256(path, digest, memo)
    assert len(hashed) == 2
    with path.open("ab") as handle:
        handle.write(b"more")
    assert not checksums.has_sha256(path, digest, memo)
    assert len(hashed) == 3


def test_a_memo_that_cannot_be_read_or_written_costs_a_hash(tmp_path: Path, hashed: Hashes) -> None:
    path, digest = file_with_hash(tmp_path)
    hashed.clear()
    folder = tmp_path / "a-folder"
    folder.mkdir()  # the memo's path is a folder: it cannot be written there
    assert checksums.has_sha256(path, digest, folder)
    assert checksums.has_sha256(path, digest, folder)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert checksums.has_sha256(path, digest, broken)
    assert checksums.has_sha256(path, digest, broken)  # rewritten whole by the first
    assert len(hashed) == 3


def test_the_memo_of_another_hash_is_not_taken(tmp_path: Path, hashed: Hashes) -> None:
    path, digest = file_with_hash(tmp_path)
    memo = tmp_path / "memo.json"
    assert checksums.has_sha256(path, digest, memo)
    assert not checksums.has_sha256(path, "0" * 64, memo)  # another model's expected hash


def test_the_memo_lives_in_the_cache_folder_of_the_test_home(
    settings_factory: Callable[..., Settings],
) -> None:
    memo = checksums.default_memo()
    assert memo.is_relative_to(Path(os.environ["XDG_CACHE_HOME"]))
    create_embedder(settings_factory())  # the local model, as `memex --search` makes it
    assert memo.exists()
