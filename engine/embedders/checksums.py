"""A model file's sha256, checked once per file identity and remembered.

Hashing the 23 MB ONNX model costs every new process (each `memex --search` a launcher
starts) tens of milliseconds, more from a cold disk. A file whose size, mtime, ctime and
inode are the ones it had when its hash last matched is the file that matched: those
figures, with the hash they matched, are kept in a small JSON file in the user's cache
folder (`model-checks.json`), and only a file whose figures differ is hashed again. A
memo that cannot be read or written costs one more hash, never a failure; a file that
fails its check is never remembered, so it fails on every start, as it would unremembered.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

import platformdirs

MEMO_NAME = "model-checks.json"


def default_memo() -> Path:
    """Where the checks are remembered: the user's cache folder (platformdirs)."""
    return Path(platformdirs.user_cache_dir("memex")) / MEMO_NAME


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def identity(path: Path) -> list[int]:
    """What tells this file's bytes from another's without reading them: size, mtime,
    ctime (an edit that restores the mtime still moves it) and inode."""
    stat = path.stat()
    return [stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_ino]


def has_sha256(path: Path, expected: str, memo: Path | None) -> bool:
    """Whether `path` hashes to `expected`: from the memo when the file's identity is the
    one that matched last time, else by hashing it (and remembering a match). `memo`
    None: always hash, remember nothing."""
    if memo is None:
        return sha256_of(path) == expected
    key, seen = str(path.resolve()), identity(path)
    remembered = read_memo(memo)
    if remembered.get(key) == {"identity": seen, "sha256": expected}:
        return True
    if sha256_of(path) != expected:
        return False
    remembered[key] = {"identity": seen, "sha256": expected}
    write_memo(memo, remembered)
    return True


def read_memo(memo: Path) -> dict[str, object]:
    """The remembered checks; {} when there are none or the file is not what we wrote."""
    try:
        found = json.loads(memo.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def write_memo(memo: Path, remembered: dict[str, object]) -> None:
    """Replace the memo whole (a reader never sees half of it); a failure is ignored: the
    next start hashes again."""
    partial = memo.with_name(f"{memo.name}.{os.getpid()}.tmp")
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps(remembered, indent=1), encoding="utf-8")
        os.replace(partial, memo)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink()
