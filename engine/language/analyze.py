"""The words the keyword index holds for a text in a language, and where they stand in it.

FTS5 indexes each chunk through its own tokenizer, `porter unicode61 remove_diacritics 2`
(engine/store/sql/schema.py), over the chunk's *search text*: the chunk's own text when it
is English and holds no Han, Kana or Hangul, else the text this module writes. No tokenizer
of Memex's own is registered with SQLite, so every connection (the app, the warm server,
maintenance, the sqlite3 shell) reads and checks the index as it is.

The search text is the chunk's words, split where FTS5's unicode61 splits them (this
module asks SQLite's own tokenizer, with diacritics kept), each one
- stemmed by the Snowball stemmer of the chunk's language (PyStemmer), before the accents
  go: Snowball needs them (German "Fahrräder" -> "fahrrad"), FTS5 folds them afterwards;
- or, for a run of Han, Kana or Hangul, written as every character and every overlapping
  pair of characters ("北京开会" -> 北 北京 京 京开 开 开会 会): a word inside a run is found
  without a dictionary, and a one-character query (a Korean "집", a Japanese "駅") finds
  every place it stands.
Each of these words is one token to unicode61, and porter leaves a non-English stem alone or
folds it further, the same on both sides: a query word goes through the same steps for each
language the index holds (engine/search/query/forms.py), then through FTS5's tokenizer.
"""

from __future__ import annotations

import threading
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

import apsw
import Stemmer

from engine.language.codes import CJK_OR_NOT, STEMMERS, has_cjk

# SQLite's unicode61 with the accents kept: where FTS5 splits words, before folding.
_WORDS = ("unicode61", ["remove_diacritics", "0"])
Span = tuple[int, int, str]  # start byte, end byte (UTF-8), the index word


class _Splitter:
    """unicode61 on a private in-memory connection, shared by every thread behind a lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conn: apsw.Connection | None = None
        self._tokenize: apsw.FTS5Tokenizer | None = None

    def __call__(self, data: bytes) -> list[Span]:
        with self._lock:
            if self._tokenize is None:
                self._conn = apsw.Connection(":memory:")
                self._tokenize = self._conn.fts5_tokenizer(_WORDS[0], _WORDS[1])
            found: list[Span] = self._tokenize(
                data,
                apsw.FTS5_TOKENIZE_DOCUMENT,
                None,
                include_offsets=True,
                include_colocated=False,
            )
            return found


_split = _Splitter()


@lru_cache(maxsize=64)
def stemmer(language: str) -> Stemmer.Stemmer | None:
    """The language's Snowball stemmer (None for English, whose words FTS5's porter stems,
    and for a language without one)."""
    name = STEMMERS.get(language)
    return None if name is None else Stemmer.Stemmer(name)


def changes_text(text: str, language: str) -> bool:
    """Whether the index holds other words than the text's own for it."""
    return stemmer(language) is not None or has_cjk(text)


def search_text(text: str, language: str) -> str | None:
    """The words FTS5 indexes for `text` in `language`, space-separated; None when they
    are the text's own (English, or a language without a stemmer, with no Han, Kana or
    Hangul): FTS5 then indexes the text itself."""
    if not text or not changes_text(text, language):
        return None
    return " ".join(word for _, _, word in spans(text, language))


def spans(text: str, language: str) -> list[Span]:
    """Each index word of `text` with the bytes of the text it stands for, in order."""
    data = text.encode("utf-8", errors="replace")
    found: list[Span] = []
    plain: list[int] = []  # positions in `found` of words to stem
    for start, end, word in _split(data):
        if has_cjk(word):
            found += _pieces(data[start:end].decode("utf-8", errors="replace"), start, plain, found)
        else:
            plain.append(len(found))
            found.append((start, end, word))
    _stem(found, plain, stemmer(language), language)
    return found


def _pieces(word: str, start: int, plain: list[int], found: list[Span]) -> list[Span]:
    """A word holding Han, Kana or Hangul: its runs of those as characters and pairs, the
    rest as words to stem (their positions noted in `plain`)."""
    out: list[Span] = []
    at = start
    for part in CJK_OR_NOT.findall(word):
        size = len(part.encode("utf-8"))
        if has_cjk(part):
            out += grams(part, at)
        else:
            plain.append(len(found) + len(out))
            out.append((at, at + size, part.lower()))
        at += size
    return out


def grams(run: str, start: int) -> list[Span]:
    """Every character of a run and every pair of neighbours, by position."""
    edges = [start]
    for char in run:
        edges.append(edges[-1] + len(char.encode("utf-8")))
    out: list[Span] = []
    for i, char in enumerate(run):
        out.append((edges[i], edges[i + 1], char))
        if i + 1 < len(run):
            out.append((edges[i], edges[i + 2], run[i : i + 2]))
    return out


def _stem(
    found: list[Span], plain: Sequence[int], stems: Stemmer.Stemmer | None, language: str
) -> None:
    """Replace the words at `plain` by their stems (composed first: Snowball reads "é", not
    "e" and an accent); a stem that came out empty keeps the word."""
    if stems is None or not plain:
        return
    words = [unicodedata.normalize("NFC", found[i][2]) for i in plain]
    suffixes = DEFINITE.get(language, ())
    for i, word, stem in zip(plain, words, stems.stemWords(words), strict=True):
        if suffixes:
            stem = _definite(word, stem or word, suffixes, stems)
        start, end, _ = found[i]
        found[i] = (start, end, stem or word)


# The definite endings of Norwegian, Danish and Swedish nouns ("flyet", "skiene", "hyran",
# "kontraktet"), which Snowball leaves on a short word (its R1 region starts past them) or
# never strips (Swedish "-et"). The first ending a word has (longest first) is taken off,
# what is left (at least MIN_STEM letters) stemmed again, and kept when shorter than
# Snowball's stem: "hyran" meets "hyra", "flyet" "fly", "skiene" "ski".
_NORDIC = ("ene", "et", "en", "a")
DEFINITE = {"no": _NORDIC, "nn": _NORDIC, "da": ("ene", "et", "en"), "sv": ("et", "en", "n")}
MIN_STEM = 3


def _definite(word: str, stem: str, suffixes: Sequence[str], stems: Stemmer.Stemmer) -> str:
    """The word's stem without its definite ending when that is shorter than Snowball's."""
    for suffix in suffixes:
        rest = word[: -len(suffix)]
        if not word.endswith(suffix) or len(rest) < MIN_STEM:
            continue
        if suffix == "n" and rest[-1] not in "ae" and not rest.endswith("el"):
            continue  # Swedish "-n" follows "hyra", "pojke", "nyckel"; not "station"
        shorter = str(stems.stemWord(rest))
        return shorter if len(shorter) < len(stem) else stem
    return stem


def query_words(term: str, language: str) -> list[str]:
    """A query term's index words in `language` (a run of Han, Kana or Hangul gives its
    pairs, or its one character)."""
    out = [word for _, _, word in spans(term, language)]
    if has_cjk(term):
        # A run of two characters or more is searched by its pairs: the single characters
        # beside them in the index are there for one-character queries.
        longer = [w for w in out if not (len(w) == 1 and has_cjk(w))]
        out = longer or out
    return out
