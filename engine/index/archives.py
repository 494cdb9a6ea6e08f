"""Exports inside zip archives, read where they were downloaded, without unpacking them.

Slack, WhatsApp, Google Takeout and Meta exports arrive as `.zip` files. Each member of an
archive under a root is a file of its own to discovery and the indexer, addressed as
`<archive>!/<member>` (`~/Downloads/acme.zip!/general/2024-03-13.json`): its path in the
index, its location in results. A member has the archive's mtime and its own uncompressed
size, so a changed archive gets its members checked again, and the chunks of a member whose
bytes did not change keep their ids and vectors.

What is refused, each with one error naming it, losing nothing else:
- an archive that is not a readable zip (truncated, damaged), or holds more than
  `MAX_MEMBERS` members or more than `MAX_TOTAL_BYTES` when expanded: none of it is read,
  and what was indexed from it earlier is kept;
- a member whose name leaves the archive (`../x`, `/etc/x`, a drive letter), an encrypted
  member, and a member that expands more than `MAX_RATIO` times (a zip bomb): that member.
A member larger than `max_file_bytes` is skipped as a large file is. Archives inside an
archive are not opened.
"""

from __future__ import annotations

import os
import re
import zipfile
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from engine.extractors import ExtractError
from engine.index.files import read_regular_file

SEPARATOR = "!"  # between an archive's path and a member's name
SUFFIXES = (".zip",)
MAX_MEMBERS = 200_000
MAX_TOTAL_BYTES = 16 * 2**30
MAX_RATIO = 200  # uncompressed / compressed size of one member beyond which it is refused
RATIO_FLOOR = 1 * 2**20  # members smaller than this are never a bomb, whatever their ratio
OPEN_ARCHIVES = 4  # archives kept open by one reader

NOT_A_ZIP = "not a readable zip archive (damaged, cut short, or no zip at all)"
UNSUPPORTED = "is compressed in a way Memex cannot read (only stored, deflate, bzip2, lzma)"
DAMAGED_MEMBER = "cannot be read from its archive: its bytes there are damaged or cut short"
_MEMBER = re.compile(r"\.zip!(?=[/\\])", re.IGNORECASE)


def is_archive(path: Path) -> bool:
    return path.name.lower().endswith(SUFFIXES)


def member_path(archive: Path, member: str) -> Path:
    """Where a member lies: `<archive>!/<member>`."""
    return Path(str(archive) + SEPARATOR).joinpath(*PurePosixPath(member).parts)


def split(path: Path | str) -> tuple[Path, str] | None:
    """(archive, member name) of a member's path; None for a path outside any archive."""
    text = str(path)
    found = _MEMBER.search(text)
    if found is None:
        return None
    archive, member = text[: found.end() - 1], text[found.end() + 1 :]
    return Path(archive), member.replace(os.sep, "/")


@dataclass(frozen=True)
class Member:
    name: str  # as the archive spells it, POSIX separators
    size: int  # uncompressed


@dataclass(frozen=True)
class Listing:
    """What an archive holds that may be read, and what was refused: (path, message)."""

    members: tuple[Member, ...] = ()
    problems: tuple[tuple[str, str], ...] = ()
    readable: bool = True  # False: none of it was read (its earlier members are kept)


def _escapes(name: str) -> bool:
    parts = PurePosixPath(name.replace("\\", "/")).parts
    return name.startswith(("/", "\\")) or ".." in parts or bool(re.match(r"[A-Za-z]:", name))


def _refusal(info: zipfile.ZipInfo) -> str:
    """Why one member is not read, or ""."""
    if _escapes(info.filename):
        return f"member name '{info.filename}' leaves the archive; skipped"
    if info.flag_bits & 0x1:
        return "is encrypted; skipped"
    compressed = max(info.compress_size, 1)
    if info.file_size > RATIO_FLOOR and info.file_size / compressed > MAX_RATIO:
        ratio = info.file_size // compressed
        return f"expands {ratio}× ({info.file_size} bytes): a zip bomb? skipped"
    return ""


def list_archive(path: Path) -> Listing:
    """The members of an archive that may be read, and the ones refused, each with why."""
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except OSError as exc:
        return _unreadable(path, f"cannot be opened ({exc.strerror or 'an input/output error'})")
    except Exception:  # the per-file boundary: whatever its bytes make zipfile raise
        return _unreadable(path, f"{NOT_A_ZIP}; nothing in it was read")
    files = [i for i in infos if not i.is_dir()]
    if len(files) > MAX_MEMBERS:
        return _unreadable(path, f"holds {len(files)} files, more than {MAX_MEMBERS}; not read")
    total = sum(i.file_size for i in files)
    if total > MAX_TOTAL_BYTES:
        return _unreadable(path, f"expands to {total} bytes, more than {MAX_TOTAL_BYTES}; not read")
    members: list[Member] = []
    problems: list[tuple[str, str]] = []
    for info in files:
        refusal = _refusal(info)
        if refusal:
            problems.append((f"{path}{SEPARATOR}/{info.filename}", refusal))
        elif not is_archive(Path(info.filename)):
            members.append(Member(info.filename, info.file_size))
    return Listing(tuple(members), tuple(problems))


def _unreadable(path: Path, message: str) -> Listing:
    return Listing(problems=((str(path), message),), readable=False)


class Archives:
    """Open archives, kept for the members read one after another (an export's day files),
    each reopened when its file changed; close() at the end of a run."""

    def __init__(self, keep: int = OPEN_ARCHIVES) -> None:
        self._open: OrderedDict[Path, tuple[tuple[float, int], zipfile.ZipFile]] = OrderedDict()
        self._names: dict[Path, frozenset[str]] = {}
        self._keep = keep

    def _archive(self, path: Path) -> zipfile.ZipFile:
        stat = os.stat(path)
        stamp = (stat.st_mtime, stat.st_size)
        held = self._open.pop(path, None)
        if held is not None and held[0] != stamp:
            held[1].close()
            held = None
        if held is None:
            try:
                held = (stamp, zipfile.ZipFile(path))
            except OSError:
                raise
            except Exception:  # the per-file boundary: whatever its bytes make zipfile raise
                raise ExtractError(f"its archive is {NOT_A_ZIP}") from None
            self._names[path] = frozenset(held[1].namelist())
        self._open[path] = held
        while len(self._open) > self._keep:
            _, (_, oldest) = self._open.popitem(last=False)
            oldest.close()
        return held[1]

    def read(self, path: Path, limit: int) -> bytes:
        """A member's bytes (at most `limit`: ExtractError past it, or for a refused member)."""
        where = split(path)
        if where is None:
            raise ExtractError(f"{path} is not inside an archive")
        archive, name = where
        zipped = self._archive(archive)
        try:
            info = zipped.getinfo(name)
        except KeyError:
            raise FileNotFoundError(f"no member '{name}' in {archive}") from None
        refusal = _refusal(info)
        if refusal:
            raise ExtractError(refusal)
        if info.file_size > limit:
            raise ExtractError(f"file is larger than {limit} bytes")
        try:
            with zipped.open(info) as handle:
                data = handle.read(limit + 1)
        except NotImplementedError:  # a compression method zipfile lacks (Deflate64, PPMd…)
            raise ExtractError(UNSUPPORTED) from None
        except Exception:  # a CRC mismatch, a member cut short, a damaged header
            raise ExtractError(DAMAGED_MEMBER) from None
        if len(data) > limit:
            raise ExtractError(f"file is larger than {limit} bytes")
        return data

    def head(self, path: Path, size: int) -> bytes:
        """At most `size` bytes of a member's start; b"" when it cannot be read."""
        where = split(path)
        if where is None:
            return b""
        try:
            zipped = self._archive(where[0])
            info = zipped.getinfo(where[1])
            if _refusal(info):
                return b""
            with zipped.open(info) as handle:
                return handle.read(size)
        except Exception:  # the per-file boundary: a head that cannot be read is empty
            return b""

    def read_file(self, path: Path, limit: int) -> bytes:
        """A member's bytes from its archive, or a file's (`read_regular_file`'s rules)."""
        return self.read(path, limit) if split(path) else read_regular_file(path, limit)

    def exists(self, path: Path | str) -> bool:
        """Whether a member of that path is in its archive (False outside any archive)."""
        where = split(path)
        if where is None:
            return False
        archive, name = where
        try:
            self._archive(archive)
        except (OSError, ExtractError):  # `_archive` raises nothing else
            return False
        return name in self._names.get(archive, frozenset())

    def close(self) -> None:
        while self._open:
            _, (_, zipped) = self._open.popitem()
            zipped.close()
