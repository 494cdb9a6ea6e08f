"""Bytes to text, once for every reader: whatever encoding and line endings a file was saved with.

In order: UTF-16 or UTF-32 with a BOM (Excel's "Unicode text", Windows tools); UTF-8, with
or without a BOM (the fast path: no detector is imported or run); UTF-8 holding a few stray
bytes of another encoding (a cp1252 `’` pasted into a UTF-8 file), each stray byte read as
cp1252; else the legacy encoding charset-normalizer finds most likely (a GB2312 subtitle, a
cp1251 note, a Shift-JIS memo). Line endings are read as Python's text mode reads them:
`\\r\\n` and a lone `\\r` (old Mac files) are both one line break.
"""

from __future__ import annotations

import codecs
from typing import TYPE_CHECKING

from engine.extractors.base import ExtractError

if TYPE_CHECKING:
    from charset_normalizer import CharsetMatch

_WIDE_BOMS = (  # UTF-32 first: its little-endian BOM starts like UTF-16's
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# The encodings legacy text files are written in (the Windows code pages and the East Asian
# multi-byte ones), the most used first. charset-normalizer weighs only these: on a short
# text it finds many encodings equally plausible (cp1250 and cp1252 read "voilà" with the
# same confidence, Mac Cyrillic beats cp1251), and of those the most used one wins.
LEGACY_ENCODINGS = (
    "cp1252",
    "gb18030",
    "cp1251",
    "cp932",
    "cp949",
    "big5",
    "cp1250",
    "cp1253",
    "cp1254",
    "cp1256",
    "cp1255",
    "cp874",
    "euc_jp",
    "cp1257",
    "cp1258",
    "koi8_r",
    "koi8_u",
)
_RANK = {name: rank for rank, name in enumerate(LEGACY_ENCODINGS)}
MULTI_BYTE = frozenset({"gb18030", "cp932", "cp949", "big5", "euc_jp"})
MULTI_BYTE_CHAOS = 0.05  # charset-normalizer's "mess" ratio below which a reading makes sense
# Read with their supersets, as mail readers and browsers do: the bytes a Big5 file holds
# beyond Big5 itself are Hong Kong's characters.
_SUPERSETS = {"big5": "big5hkscs"}
# At least this many well-formed UTF-8 characters per stray byte make a file UTF-8 with a
# few foreign bytes; by chance, legacy multi-byte text forms few such characters.
MIXED_UTF8_RATIO = 4
_STRAY_BYTES = "memex-stray-bytes-as-cp1252"


def _stray_bytes_as_cp1252(error: UnicodeError) -> tuple[str, int]:
    """Codec error handler: the bytes UTF-8 cannot read, read as cp1252 (its five unused
    byte values dropped)."""
    if not isinstance(error, UnicodeDecodeError):
        raise error
    stray = error.object[error.start : error.end]
    return bytes(stray).decode("cp1252", errors="ignore"), error.end


codecs.register_error(_STRAY_BYTES, _stray_bytes_as_cp1252)


def decode(data: bytes, *, head: bool = False) -> str:
    """A file's bytes as text, its line breaks `\\n`; never a crash on odd bytes. `head`:
    the bytes are a file's first few KB, so a character cut at their end is dropped.
    Raises `ExtractError` for binary content (NUL bytes)."""
    text = _wide(data)
    if text is None:
        if b"\x00" in data[:4096]:
            raise ExtractError("binary content (NUL bytes)")
        text = _utf8(data, head)
        if text is None:
            text = _mixed_utf8(data) or _legacy(data, head)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if "\r" in text:  # old Mac line endings: a pass only files holding them pay
            text = text.replace("\r", "\n")
    return text


def _wide(data: bytes) -> str | None:
    """UTF-16 or UTF-32 text opened by its BOM, else None."""
    wide = next((codec for bom, codec in _WIDE_BOMS if data.startswith(bom)), None)
    if wide is None:
        return None
    try:
        text = data.decode(wide)
    except UnicodeDecodeError:
        return None  # not that encoding after all (`\xff\xfe` opens many a binary file)
    if "\x00" in text[:4096]:
        raise ExtractError("binary content (NUL characters)")
    return text


def _utf8(data: bytes, head: bool) -> str | None:
    """The bytes as UTF-8 (a BOM dropped), or None when they are not UTF-8."""
    try:
        return codecs.getincrementaldecoder("utf-8-sig")().decode(data, final=not head)
    except UnicodeDecodeError:
        return None


def _mixed_utf8(data: bytes) -> str | None:
    """UTF-8 text with a few stray bytes of another encoding, each read as cp1252; None
    when the bytes hold too little UTF-8 for that."""
    replaced = data.decode("utf-8-sig", errors="replace")
    stray = replaced.count("\ufffd")
    well_formed = len(replaced) - len(replaced.encode("ascii", errors="ignore")) - stray
    if well_formed < stray * MIXED_UTF8_RATIO:
        return None
    return data.decode("utf-8-sig", errors=_STRAY_BYTES)


def _legacy(data: bytes, head: bool) -> str:
    """The bytes in the legacy encoding charset-normalizer finds most likely; cp1252 when
    it finds none."""
    from charset_normalizer import from_bytes  # only files that are not UTF-8 pay its import

    found = _most_likely(list(from_bytes(data, cp_isolation=list(LEGACY_ENCODINGS))))
    text = data.decode(_SUPERSETS.get(found, found), errors="replace")
    return text.removesuffix("\ufffd") if head else text


def _most_likely(matches: list[CharsetMatch]) -> str:
    """A multi-byte East Asian reading that makes sense first: Chinese, Japanese or Korean
    bytes also read as some single-byte script (Thai, Cyrillic), while text in a single-byte
    code page (its accented words followed by spaces) rarely forms valid multi-byte pairs.
    Then the least chaos, the most coherent as a language, the most used."""
    wide = [m for m in matches if m.encoding in MULTI_BYTE and m.chaos < MULTI_BYTE_CHAOS]
    ranked = sorted(
        wide or matches,
        key=lambda m: (round(m.chaos, 2), -round(m.coherence, 2), _RANK.get(m.encoding, 99)),
    )
    return str(ranked[0].encoding) if ranked else "cp1252"
