"""Arrays kept in one file beside the index and mapped, not read, by the processes that search.

A warm process holds the keyword postings and the vector matrix in memory
(engine/search/retrieve/keyword_index.py, vector_cache.py). Read from SQLite, they cost
seconds at 100k chunks and anonymous memory the size of the arrays, besides the index
pages the read brought in. Written once into a file of their own (`memex.db.keyword`,
`memex.db.vectors`), they are mapped in milliseconds: the kernel pages in what a search
touches, shares the pages between processes, and drops them under pressure.

The file: `MAGIC`, the header's length (8 bytes, little-endian), the header (JSON: the
caller's own fields and, per array, its dtype, shape and offset), then each array's bytes
at an offset aligned to `ALIGN`. It is written whole into a private temporary file beside
its place (0600) and renamed over it, so a reader maps either the old file or the new one,
never a part; a mapping outlives the rename. The arrays come back copy-on-write
(`mmap.ACCESS_COPY`): a process may change them in place, as a follower of the index does
when rows die, and those pages become its own; the file never changes.

A file that is missing, cut short, of another format or unreadable is no file (`read`
returns None) and the caller reads the index; the caller checks the header's fields
against the index (engine/search/retrieve/mirror.py).
"""

from __future__ import annotations

import contextlib
import glob
import json
import mmap
import os
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

MAGIC = b"MEMEXMAP1\n"
ALIGN = 64
MAX_HEADER = 1 << 20
STALE_SECONDS = 3600.0  # a temporary file this old was left by a process that died writing it
Header = dict[str, Any]
Arrays = dict[str, npt.NDArray[Any]]


def write(path: Path, header: Mapping[str, Any], arrays: Mapping[str, npt.NDArray[Any]]) -> bool:
    """Write `arrays` and `header` to `path` (atomically, 0600); False when it cannot be
    written (a read-only folder, a full disk): the next process reads the index again."""
    layout: dict[str, list[Any]] = {}
    offset = 0
    for name, array in arrays.items():
        layout[name] = [array.dtype.str, list(array.shape), offset]
        offset = _aligned(offset + array.nbytes)
    head = json.dumps({"fields": dict(header), "arrays": layout}).encode("utf-8")
    start = _aligned(len(MAGIC) + 8 + len(head))
    _remove_stale(path)
    try:
        fd, partial = tempfile.mkstemp(prefix=f"{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + len(head).to_bytes(8, "little") + head)
            for name, array in arrays.items():
                f.seek(start + layout[name][2])
                f.write(np.ascontiguousarray(array).tobytes())
            f.truncate(start + offset)
        os.replace(partial, path)
    except OSError:
        Path(partial).unlink(missing_ok=True)
        return False
    return True


def read_if(path: Path | None, wanted: Mapping[str, Any]) -> tuple[Header, Arrays] | None:
    """As `read`, for a file whose header holds every field of `wanted` with that value
    (its key, its layout); None for no path, no such file, or one written otherwise."""
    found = None if path is None else read(path)
    if found is None or any(k not in found[0] or found[0][k] != v for k, v in wanted.items()):
        return None
    return found


def _remove_stale(path: Path) -> None:
    """Remove the temporary files of `path` that a process killed while writing left."""
    try:
        for partial in path.parent.glob(f"{glob.escape(path.name)}.*.tmp"):
            with contextlib.suppress(OSError):
                if time.time() - partial.stat().st_mtime > STALE_SECONDS:
                    partial.unlink()
    except OSError:
        return


def read(path: Path) -> tuple[Header, Arrays] | None:
    """The header's fields and the arrays of the file at `path`, mapped copy-on-write;
    None when there is no such file or it is not one `write` made whole."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < len(MAGIC) + 8:
                return None
            mapped = mmap.mmap(f.fileno(), size, access=mmap.ACCESS_COPY)
    except (OSError, ValueError):
        return None
    try:
        return _arrays(mapped, size)
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def _arrays(mapped: mmap.mmap, size: int) -> tuple[Header, Arrays] | None:
    if mapped[: len(MAGIC)] != MAGIC:
        return None
    length = int.from_bytes(mapped[len(MAGIC) : len(MAGIC) + 8], "little")
    if length > min(MAX_HEADER, size):
        return None
    head = json.loads(bytes(mapped[len(MAGIC) + 8 : len(MAGIC) + 8 + length]))
    start = _aligned(len(MAGIC) + 8 + length)
    arrays: Arrays = {}
    for name, (dtype, shape, offset) in head["arrays"].items():
        kind = np.dtype(dtype)
        count = int(np.prod(shape, dtype=np.int64))
        if start + offset + count * kind.itemsize > size:
            return None
        flat = np.frombuffer(mapped, dtype=kind, count=count, offset=start + offset)
        arrays[name] = flat.reshape(shape)
    return head["fields"], arrays


def _aligned(offset: int) -> int:
    return -(-offset // ALIGN) * ALIGN


def strings_array(strings: Sequence[str]) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """Strings as one UTF-8 blob and the offsets of each (n + 1), to keep in a file."""
    encoded = [s.encode("utf-8") for s in strings]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


class Strings(Sequence[str]):
    """The strings `strings_array` kept, read one at a time from the blob (none decoded up
    front: a sorted list of them is searched with `bisect` as it lies)."""

    def __init__(self, blob: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]) -> None:
        self._blob, self._offsets = blob, offsets
        self._count = int(offsets.shape[0]) - 1

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        start, end = int(self._offsets[index]), int(self._offsets[index + 1])
        return self._blob[start:end].tobytes().decode("utf-8")

    def all(self) -> list[str]:
        """Every string, decoded at once."""
        blob = self._blob.tobytes()
        text = blob.decode("utf-8")
        starts, ends = self._offsets[:-1].tolist(), self._offsets[1:].tolist()
        if len(text) == len(blob):  # ASCII only: the byte offsets are the text's indices
            return [text[a:b] for a, b in zip(starts, ends, strict=True)]
        return [blob[a:b].decode("utf-8") for a, b in zip(starts, ends, strict=True)]
