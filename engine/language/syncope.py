"""The other stem of a Nordic noun whose last vowel drops when it inflects.

Swedish, Norwegian and Danish nouns ending in an unstressed -el, -er or -en lose that "e"
before an ending, a doubled consonant before it made single: "nyckel" -> "nycklarna",
"fönster" -> "fönstren", "nøkkel" -> "nøklene", "vinter" -> "vintrar". Snowball stems the
two forms apart ("nyckel" and "nyckl", "fönst" and "fönstr"), so a query in one form would
not meet a message in the other. `variants` writes a query word's other stem in both
directions; the query side (engine/search/query/forms.py) ORs them with the word's own forms
and keeps only those the index holds, so a variant that names nothing ("fönstrn" from the
definite "fönstren") costs one lookup and matches nothing.
"""

from __future__ import annotations

import re
import unicodedata

SYNCOPATING = frozenset({"sv", "no", "nn", "da"})
_V = "aeiouyæøåäöéü"
# A base form: a vowel somewhere before the consonant that precedes the unstressed "e". The
# head's vowel is found as its first one (only consonants before it), so one \w* is left to
# backtrack: linear in the word's length, where a \w* on each side of the vowel is quadratic.
_BASE = re.compile(rf"(?P<head>[^{_V}\W]*[{_V}]\w*[^{_V}\W])e(?P<end>[lnr])")
# An inflected stem: the same shape without the "e" ("nyckl", "fönstr", "nøkl").
_INFLECTED = re.compile(rf"(?P<head>[^{_V}\W]*[{_V}]\w*[^{_V}\W])(?P<end>[lnr])")
MIN_LETTERS = 4  # "bok" and "barn" are left alone


def variants(word: str, stem: str, language: str) -> list[str]:
    """The other stems of `word` (whose own stem in `language` is `stem`), or []."""
    if language not in SYNCOPATING:
        return []
    word = unicodedata.normalize("NFC", word).lower()
    if len(word) < MIN_LETTERS or not word.isalpha():
        return []
    out: list[str] = []
    if base := _BASE.fullmatch(word):
        out += _dropped(base["head"], base["end"])
    if stem != word and (inflected := _INFLECTED.fullmatch(stem)):
        out += _restored(inflected["head"], inflected["end"])
    return [form for form in dict.fromkeys(out) if form != stem]


def _dropped(head: str, end: str) -> list[str]:
    """A base form's inflected stems: "nyckel" -> nyckl; "nøkkel" -> nøkkl, nøkl."""
    out = [head + end]
    if len(head) > 2 and head[-1] == head[-2]:
        out.append(head[:-1] + end)
    return out


def _restored(head: str, end: str) -> list[str]:
    """An inflected stem's base forms as Snowball stems them: "nyckl" -> nyckel;
    "nøkl" -> nøkel, nøkkel; "fönstr" -> fönster, and fönst (Snowball takes -er off)."""
    out = [f"{head}e{end}"]
    if head[-2] in _V:
        out.append(f"{head}{head[-1]}e{end}")  # "nøkl": the doubled "kk" of "nøkkel"
    if end == "r":
        out.append(head)
    return out
