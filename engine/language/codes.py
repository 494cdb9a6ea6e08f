"""The languages Memex knows by code: which Snowball stemmer each takes, and the scripts
written without spaces between words (Han, Kana, Hangul), which are cut into 2-grams.

Codes are py3langid's (ISO 639-1 where there is one): Norwegian is `no` (Bokmål and
Nynorsk, `nb` and `nn` in a user's settings, are read as `no`).
"""

from __future__ import annotations

import re
import unicodedata

ENGLISH = "en"

# Snowball stemmers (PyStemmer's names) by language code. English has none here: FTS5's own
# `porter` stems every token of the index, as it always has, so English text is indexed as
# it is written (engine/language/analyze.py).
STEMMERS = {
    "ar": "arabic",
    "ca": "catalan",
    "cs": "czech",
    "da": "danish",
    "de": "german",
    "el": "greek",
    "eo": "esperanto",
    "es": "spanish",
    "et": "estonian",
    "eu": "basque",
    "fa": "persian",
    "fi": "finnish",
    "fr": "french",
    "ga": "irish",
    "hi": "hindi",
    "hu": "hungarian",
    "hy": "armenian",
    "id": "indonesian",
    "it": "italian",
    "lt": "lithuanian",
    "ne": "nepali",
    "nl": "dutch",
    "nn": "norwegian",
    "no": "norwegian",
    "pl": "polish",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sr": "serbian",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
}

# Written without spaces: indexed as overlapping 2-grams and single characters.
SEGMENTED = ("zh", "ja", "ko")

# What detection chooses among when the `languages` setting is empty: the languages with a
# stemmer, English, the three segmented ones and a few more with many writers. py3langid
# knows 97; the rare ones take short chat lines from the common ones ("ok" is Danish, "haha
# ja" Finnish), and a language outside this list is labelled with its nearest one, whose
# stemmer its words then go through at index and query time alike.
CANDIDATES = tuple(
    sorted(
        {ENGLISH, *SEGMENTED, *(c for c in STEMMERS if c != "nn")}
        | {"bg", "he", "hr", "is", "lv", "sk", "sl", "th", "uk", "vi"}
    )
)

ALIASES = {"nb": "no", "nn": "no", "nob": "no", "nno": "no", "nor": "no"}

# Han (with its extensions and compatibility block, the iteration mark 々), Hiragana,
# Katakana (and its phonetic extensions, half-width forms), Hangul syllables and jamo.
_CJK = (
    "\u1100-\u11ff\u3005\u3007\u3021-\u3029\u3031-\u3035\u303b\u3040-\u30ff\u3130-\u318f"
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff"
    "\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
CJK_CHAR = re.compile(f"[{_CJK}]")
CJK_OR_NOT = re.compile(f"[{_CJK}]+|[^{_CJK}]+")


def normalised(code: str) -> str:
    """A language code as Memex keeps it: lower case, Norwegian's variants as `no`."""
    code = code.strip().lower().replace("_", "-").split("-", 1)[0]
    return ALIASES.get(code, code)


def has_cjk(text: str) -> bool:
    """Whether the text holds a character of a script written without spaces."""
    return CJK_CHAR.search(text) is not None


def folded(text: str) -> str:
    """Case folded and composed, accents kept: "Réservé" and "réservé" are one word,
    "reserved" another."""
    return unicodedata.normalize("NFC", text).casefold()
