"""The language of each chunk, told at index time by py3langid (its model ships in the wheel).

py3langid is a naive Bayes over byte n-grams: about 25 µs for a chat line and 0.1 µs a byte
beyond, so a chunk is judged on its first `SAMPLE_CHARS` characters. A single chat line is
often too short to tell ("ok", "haha ja"), while a chunk of a chat is a window of about ten
messages; so each chunk is judged on its own text, and a chunk judged with less than
`CONFIDENT` takes the language most of its file's confident chunks have (one file is one
conversation, one mailbox, one note), else the first language of the `languages` setting,
else English. The figures behind these choices are in docs/benchmarks.md (the languages
benchmark, bench/languages.py).

The `languages` setting limits the candidates (one language pins every chunk to it); empty,
detection chooses among `codes.CANDIDATES`.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from engine.language.codes import CANDIDATES, ENGLISH, normalised

SAMPLE_CHARS = 300  # characters of a chunk judged: a few chat lines
CONFIDENT = 0.9  # py3langid's normalised probability a chunk's own verdict needs
ENGLISH_AT_MOST = 0.05  # English this unlikely: a text (or query) is in another language
MIN_LETTERS = 12  # letters below this (one outside ASCII counts 3): too short to judge
OWN_LETTERS = 60  # letters a chunk needs to keep a language its file's other chunks lack
# English told by its commonest words, without the model: most of most people's text is
# English, and these words (none of them a common word of another language the detector
# knows: not "i", "a", "in", "die", "man") are a fifth to a half of an English chat window's
# words, under a twentieth of a Norwegian, Swedish or German one's. 97 % of the speed
# benchmark's English chat windows are told here, in 13 µs instead of ~150 µs.
_COMMON_ENGLISH = """the and you that for was have this what are with but not they just like know about
    would there get your can all yeah think when out one really how if or from my been were
    will their our some more very well because could should which who want going got did
    does don't it's i'm that's there's doesn't didn't isn't what's you're they're we're i've
    i'll people thing things something anything nothing much good time make see said also
    than then them these those other any only even back after where why off over still
    never always"""
_ENGLISH_WORDS = frozenset(_COMMON_ENGLISH.split())
_ENGLISH_SHARE = 0.15  # of the words in the sample, at least this many of them
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
# The English labels a note's chunk opens with (engine/extractors/markdown.py: "Note: <title>",
# "Aliases: …", "Tags: …", "Section: <headings>"): not the note's language.
_LABELS = re.compile(r"\A(?:(?:Note|Journal|Aliases|Tags|Section): [^\n]*\n)+")
_LOCK = threading.Lock()
_MODEL: Any = None  # py3langid's identifier, loaded once (0.5 s)


def _model() -> Any:
    global _MODEL
    with _LOCK:
        if _MODEL is None:
            from py3langid.langid import MODEL_FILE, LanguageIdentifier

            _MODEL = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        return _MODEL


class Detector:
    """Tells chunks' languages among `allowed` (normalised codes; empty: `CANDIDATES`)."""

    def __init__(self, allowed: Sequence[str] = ()) -> None:
        chosen = tuple(dict.fromkeys(normalised(c) for c in allowed if c.strip()))
        self.allowed = chosen or CANDIDATES
        self.default = chosen[0] if chosen else ENGLISH
        self.pinned = chosen[0] if len(chosen) == 1 else None
        self._lock = threading.Lock()
        self._identifier: Any = None

    def judge(self, text: str) -> tuple[str, float]:
        """(language, confidence 0–1) of one text on its own."""
        if self.pinned is not None:
            return self.pinned, 1.0
        sample = _LABELS.sub("", text, count=1)[:SAMPLE_CHARS]
        words = _WORD.findall(sample)
        if _letters(sample, words) < MIN_LETTERS:
            return self.default, 0.0
        if ENGLISH in self.allowed and _looks_english(words):
            return ENGLISH, 1.0
        ranked = self.ranked(sample)
        language = max(ranked, key=lambda c: ranked[c])
        confidence = ranked[language]
        if language != ENGLISH and ranked.get(ENGLISH, 0.0) <= ENGLISH_AT_MOST:
            # Unsure between neighbours (Norwegian and Swedish share a short line), sure it
            # is not English: the verdict stands, its words are stemmed by a neighbour's rules.
            confidence = max(confidence, CONFIDENT)
        return language, confidence

    def ranked(self, text: str) -> dict[str, float]:
        """Each allowed language's probability for the text (the model's, on its sample)."""
        with self._lock:
            if self._identifier is None:
                import copy

                identifier = copy.copy(_model())  # its own candidates, the model's arrays shared
                identifier.set_languages([c for c in self.allowed if c in identifier.labels])
                self._identifier = identifier
            found = self._identifier.rank(text[:SAMPLE_CHARS])
        out: dict[str, float] = {}
        for code, probability in found:
            key = normalised(str(code))
            out[key] = out.get(key, 0.0) + float(probability)
        return out

    def languages(self, texts: Sequence[str]) -> list[str]:
        """The language of each of one file's texts: the commonest confident verdict among
        them (else the default), unless a text is confidently another language and long
        enough to be sure of it (a chat line "Ramen on Markveien, 12:15" is not Dutch in
        an English chat)."""
        judged = [self.judge(t) for t in texts]
        sure = Counter(lang for lang, confidence in judged if confidence >= CONFIDENT)
        common = sure.most_common(1)[0][0] if sure else self.default
        return [
            lang
            if confidence >= CONFIDENT and (lang == common or _letters(text) >= OWN_LETTERS)
            else common
            for text, (lang, confidence) in zip(texts, judged, strict=True)
        ]


_SCRIPTS: tuple[tuple[str, str], ...] = (
    ("HANGUL", "ko"),
    ("HIRAGANA", "ja"),
    ("KATAKANA", "ja"),
    ("CJK", "zh"),
    ("CYRILLIC", "ru"),
    ("GREEK", "el"),
    ("ARABIC", "ar"),
    ("HEBREW", "he"),
)


def _script_language(letters: Sequence[str]) -> str:
    """A language its letters' script names (the first found: Kana before Han, so
    Japanese is Japanese), 'und' for another script; no model is loaded for it."""
    names = " ".join(unicodedata.name(ch, "") for ch in letters)
    return next((code for script, code in _SCRIPTS if script in names), "und")


def _letters(text: str, words: Sequence[str] | None = None) -> int:
    """The letters of a text's sample, one outside ASCII (a Han character, a Hangul
    syllable) counted as three."""
    found = _WORD.findall(text[:SAMPLE_CHARS]) if words is None else words
    return sum(len(w) for w in found) + 2 * sum(len(w) for w in found if not w.isascii())


def _looks_english(words: Sequence[str]) -> bool:
    """Many of the commonest English words among them."""
    common = sum(1 for w in words if w.lower().replace("’", "'") in _ENGLISH_WORDS)
    return common >= max(2, _ENGLISH_SHARE * len(words))


@lru_cache(maxsize=8)
def _detector(allowed: tuple[str, ...]) -> Detector:
    return Detector(allowed)


QUERY_WORDS = 3  # ... and it has this many words: one word is a word in several languages


def query_language(query: str, present: Sequence[str]) -> str:
    """The language a query is written in, or '' when that cannot be told with confidence.
    A query mostly in letters outside the Latin script is not English, whatever its words;
    a Latin-script one of a few words, judged among the languages the index holds
    (`present`) and English, is another language only when English is all but ruled out
    (Norwegian and Swedish share the rest between them, so no single verdict is sure)."""
    letters = [ch for ch in query if ch.isalpha()]
    if not letters:
        return ""
    latin = sum(1 for ch in letters if ch.isascii() or "LATIN" in unicodedata.name(ch, ""))
    if latin * 2 < len(letters):
        return _script_language(letters)
    others = [c for c in present if normalised(c) != ENGLISH]
    words = _WORD.findall(query)
    if not others or len(words) < QUERY_WORDS or len(letters) < MIN_LETTERS:
        return ""
    if _looks_english(words):
        return ""
    ranked = _detector((ENGLISH, *others)).ranked(query)
    if ranked.get(ENGLISH, 0.0) > ENGLISH_AT_MOST:
        return ""
    return max((c for c in ranked if c != ENGLISH), key=lambda c: ranked[c], default="")
