"""The other stems of nouns whose plural changes the word itself, which Snowball stems apart.

A few everyday nouns form their plural by a vowel change or an inserted syllable: Dutch
"kind" -> "kinderen", "ei" -> "eieren"; Norwegian "bok" -> "bøker", "mann" -> "menn";
Swedish "bok" -> "böcker", "hand" -> "händer"; Danish "bog" -> "bøger". Snowball stems each
form on its own ("kind" and "kinder"), so a query in one form would not meet a message in the
other. The class is closed (no new noun joins it), so it is listed here, per language, each
noun with its plural stems; the query side (engine/search/query/forms.py) ORs a word's other
stems with its own and keeps only those the index holds.
"""

from __future__ import annotations

from functools import lru_cache

from engine.language.analyze import query_words

# Each entry: the forms of one noun (singular first), as the user writes them.
NOUNS: dict[str, tuple[tuple[str, ...], ...]] = {
    "nl": (
        ("kind", "kinderen"), ("ei", "eieren"), ("lam", "lammeren"), ("kalf", "kalveren"),
        ("blad", "bladeren"), ("been", "beenderen"), ("lied", "liederen"),
        ("rund", "runderen"), ("volk", "volkeren"), ("goed", "goederen"),
        ("gelid", "gelederen"), ("hoen", "hoenderen"), ("rad", "raderen"),
        ("kleed", "kleren"), ("stad", "steden"), ("schip", "schepen"), ("smid", "smeden"),
    ),
    "no": (
        ("bok", "bøker", "bøkene"), ("mann", "menn", "mennene"), ("fot", "føtter"),
        ("hånd", "hender"), ("tann", "tenner"), ("natt", "netter"), ("rot", "røtter"),
        ("bror", "brødre", "brødrene"), ("far", "fedre"), ("mor", "mødre"),
        ("datter", "døtre", "døtrene"), ("bonde", "bønder"),
        ("tå", "tær"), ("kne", "knær"), ("ku", "kyr"), ("gås", "gjess"),
    ),
    "sv": (
        ("bok", "böcker", "böckerna"), ("man", "män", "männen"), ("fot", "fötter"),
        ("hand", "händer"), ("tand", "tänder"), ("natt", "nätter"), ("rot", "rötter"),
        ("stad", "städer"), ("bror", "bröder", "bröderna"), ("far", "fäder"),
        ("mor", "mödrar"), ("dotter", "döttrar"), ("strand", "stränder"),
        ("land", "länder"), ("son", "söner"), ("mus", "möss"), ("gås", "gäss"),
    ),
    "da": (
        ("bog", "bøger"), ("mand", "mænd"), ("fod", "fødder"), ("hånd", "hænder"),
        ("tand", "tænder"), ("nat", "nætter"), ("rod", "rødder"), ("bror", "brødre"),
        ("far", "fædre"), ("mor", "mødre"), ("datter", "døtre"), ("barn", "børn"),
        ("gås", "gæs"), ("ko", "køer"),
    ),
}  # fmt: skip


def variants(stem: str, language: str) -> list[str]:
    """The other stems of the listed noun whose form stems to `stem` in `language`, or []."""
    return [other for other in _stem_groups(language).get(stem, ()) if other != stem]


@lru_cache(maxsize=16)
def _stem_groups(language: str) -> dict[str, tuple[str, ...]]:
    """Each listed form's stem (as the index writes it, engine/language/analyze.py) -> the
    stems of every form of its noun."""
    groups: dict[str, tuple[str, ...]] = {}
    for forms in NOUNS.get("no" if language == "nn" else language, ()):
        group = tuple(dict.fromkeys(" ".join(query_words(f, language)) or f for f in forms))
        for stem in group:
            groups[stem] = tuple(dict.fromkeys(groups.get(stem, ()) + group))
    return groups
